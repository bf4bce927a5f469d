package pacing

import "time"

// Answer is what one answer said of the allowance; -1 where it said
// nothing.
type Answer struct {
	Limit, Remaining int
	// Reset is how long until the allowance is whole again; RetryAfter
	// is the wait a refusal asked for.
	Reset, RetryAfter time.Duration
	Refused           bool // a 429
}

// MaxBelievableReset is the longest wait the pacer believes: a longer
// Reset or Retry-After is garbage.
const MaxBelievableReset = 24 * time.Hour

// believable drops what no service means: a negative count, a remaining
// above the limit (the limit is believed, the remaining clamped), a wait
// beyond MaxBelievableReset. Whole seconds are read as rounded up until an
// answer shows them rounded down (rule 15): roundedDown says whether an
// earlier one did, and believable whether this one or an earlier did;
// from then on every wait is given back the second it may have lost. A
// refusal without a believable Retry-After asks for the Reset, and a
// second at least.
func believable(a Answer, roundedDown bool) (Answer, bool) {
	a.Limit, a.Remaining = max(a.Limit, -1), max(a.Remaining, -1)
	if a.Limit > 0 {
		a.Remaining = min(a.Remaining, a.Limit)
	}
	waits := []*time.Duration{&a.Reset, &a.RetryAfter}
	for _, d := range waits {
		if *d < 0 || *d > MaxBelievableReset {
			*d = -1
		}
	}
	// Rounded up, a wait is 0 only when the allowance is whole, which it is
	// not just after a request was counted, nor after one was refused.
	notWhole := a.Remaining >= 0 && a.Remaining < a.Limit
	roundedDown = roundedDown || a.Reset == 0 && notWhole || a.Refused && a.RetryAfter == 0
	for _, d := range waits {
		if roundedDown && *d >= 0 {
			*d += time.Second
		}
	}
	if a.Refused && a.RetryAfter < 0 {
		a.RetryAfter = max(a.Reset, time.Second)
	}
	return a, roundedDown
}
