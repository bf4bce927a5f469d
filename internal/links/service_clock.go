package links

import "time"

// serviceClock bounds how far the service's clock is ahead of ours, from
// the links this process created: each was made, by the service's clock,
// between our asking and its answer, so its createdAt is the offset's
// witness. With it, "created since the attempt began" is read on the
// service's clock to within clockStepAllowance, rather than within
// clockSkewAllowance: a link another pipeline made a minute before the
// attempt is then no candidate for the link the attempt made.
type serviceClock struct {
	known  bool
	lo, hi time.Duration // the service's clock minus ours, at least and at most
}

// createdAtPrecision is the coarsest a service keeps createdAt (whole
// seconds, possibly rounded): a link's createdAt may be that far from
// when it was made.
const createdAtPrecision = time.Second

// clockStepAllowance is how far the two clocks may move against each other
// during a run (a runner's clock stepped by NTP, servers of the service a
// few seconds apart) without the link our own attempt made falling before
// since, and being made a second time. It keeps out links made well
// before the attempt, not those of the seconds just before it.
const clockStepAllowance = 30 * time.Second

// observe takes in a link created at createdAt (the service's clock) by a
// request sent at sent and answered at answered (ours). Bounds that no
// longer agree (a service whose createdAt is not when it made the link, a
// clock set back) are dropped for the latest one's.
func (c *serviceClock) observe(sent, answered, createdAt time.Time) {
	if createdAt.IsZero() {
		return
	}
	lo, hi := createdAt.Add(-createdAtPrecision).Sub(answered), createdAt.Add(createdAtPrecision).Sub(sent)
	if c.known && max(c.lo, lo) <= min(c.hi, hi) {
		lo, hi = max(c.lo, lo), min(c.hi, hi)
	}
	c.known, c.lo, c.hi = true, lo, hi
}

// since is the earliest createdAt a link made after our moment t can show.
func (c *serviceClock) since(t time.Time) time.Time {
	if !c.known {
		return t.Add(-clockSkewAllowance)
	}
	return t.Add(c.lo - createdAtPrecision - clockStepAllowance)
}

// mayPrecede says a link created at createdAt (the service's clock) may
// have been made before our moment t, for a search that found it to look
// again for a newer one. Until the clock is placed any link may. Once it
// is, only one surely made before t counts: a link made after t shows at
// least t+lo, so one that shows more is taken as made after, rather than
// cost every lost create the looks. Without createdAt a link cannot be
// placed, nor told from a newer one: false.
func (c *serviceClock) mayPrecede(createdAt, t time.Time) bool {
	switch {
	case createdAt.IsZero():
		return false
	case !c.known:
		return true
	}
	return createdAt.Before(t.Add(c.lo - createdAtPrecision))
}
