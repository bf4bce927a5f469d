// Package pacing decides when the next request of one rate-limit class may
// go, alone or beside other clients of the same key, from what the answers
// say (X-RateLimit-Limit, -Remaining, -Reset, Retry-After). It holds no
// clock and no timer, so the client and the virtual-time simulation that
// tests it run the same rule; DESIGN.md ("Pacing") states it.
package pacing

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// Ticket is what Sent hands a request and Answered or Lost takes back.
// lastPlace: our latest answered request's place, when this one went with
// none of ours on the way (0: not so); oursAhead: ours on the way then.
type Ticket struct {
	seq, epoch, lastPlace, oursAhead int
	sentAt                           time.Time
}

const (
	// WaitForAnswer is Next's answer when only an answer can let a request go.
	WaitForAnswer = time.Duration(math.MaxInt64)
	// refusalBackoff divides our part after a refusal (and widens a round).
	refusalBackoff = 2
)

// Pacer is the rule for one class of one client. It is not safe for
// concurrent use: the client guards it.
type Pacer struct {
	maxShare             float64
	limit, seq           int           // seq: requests sent
	fastest, lastSlowest time.Duration // the shortest round trip; the last epoch's slowest
	lastWhole, notBefore time.Time     // the last epoch's wholeAt; what Retry-After asked
	// runs: the runs the latest count between two of ours showed;
	// others: the count showed any but us last epoch or this. Our part is
	// divided by backoff, which each turn multiplies by backoffBy
	// (refusalBackoff after a refusal in the epoch, else 3/4). everRefused:
	// an answer was a refusal; reading: how the answers are read (rules 15, 16).
	runs, backoff, backoffBy       float64
	unmetered, others, everRefused bool
	reading                        reading
	unitsBack                      []time.Time // when each unit our counted requests hold is back, earliest first
	epochState
}

// epochState is what the run knows of its epoch; each turn starts it anew.
type epochState struct {
	// epoch counts the turns; resetAt is when the allowance is next whole
	// (zero: not known), resetFrom the earliest the answers allow, wholeAt
	// the latest any answer gave; heardAt is when the answer we go by came
	// in; slowest, the longest round trip.
	epoch                                int
	resetAt, resetFrom, wholeAt, heardAt time.Time
	slowest                              time.Duration
	// Our requests on their way, and sent; the first one and the census
	// (0: not sent, -1: none this epoch); the latest answered and what it
	// said remains; our first request's place in the count.
	onTheWay, sent, firstSeq, censusSeq int
	answeredSeq, remaining, firstPlace  int
	// othersThisEpoch: the count showed others this epoch; yield: we found
	// them after spending as if alone; openedOnUnitsBack: the epoch opened
	// for units of ours back; firstRefused: its first request was refused.
	othersThisEpoch, yield, openedOnUnitsBack, firstRefused bool
}

// New returns the pacer of one class; maxShare caps our part of the
// allowance (1: all of it). Until a census has counted, others may be there.
func New(maxShare float64) *Pacer {
	if maxShare <= 0 || maxShare > 1 {
		maxShare = 1
	}
	return &Pacer{maxShare: maxShare, limit: -1, runs: 1, others: true, backoff: 1, backoffBy: 0.75}
}

// Next says how long to wait before the next request may go: 0 now,
// WaitForAnswer when only an answer can change that.
func (p *Pacer) Next(now time.Time) time.Duration {
	if p.unmetered || now.Before(p.notBefore) { // rule 13: Retry-After is honoured
		return max(p.notBefore.Sub(now), 0)
	}
	if !p.resetAt.IsZero() && (p.resetAt.Equal(p.notBefore) || !now.Before(p.due(p.resetAt)) && (p.others || p.answeredSeq == 0 || 2*p.remaining <= p.limit || p.capped())) {
		p.turn() // rules 1, 17 (a Retry-After is measured after its request was counted: no spread)
	}
	// held: awaiting the first answer or the census's (rules 1, 4), capped (14), or yielding (3).
	held := p.answeredSeq == 0 || p.censusSeq > p.answeredSeq || p.capped() || p.yielding()
	switch {
	case p.firstSeq == 0:
		return 0 // rule 1: the epoch's first request says what remains, and our place
	case !held && p.onTheWay < p.quota(): // within our part, the census first (rules 4, 6-8)
		return 0
	case p.onTheWay > 0:
		return WaitForAnswer
	case !p.others && p.remaining == 0 && len(p.unitsBack) > 0 && p.unitsBack[0].Before(p.resetAt):
		return max(p.due(p.unitsBack[0]).Sub(now), 0) // rule 11: alone, none left, one for a unit of ours back
	case p.resetAt.IsZero(): // no answer said when it is whole: look again in a second (their unit)
		p.resetAt = now.Add(time.Second)
	case p.others && !p.yielding() && !p.capped():
		// Rule 12: beside others, a part from what remains and units of ours back, due before the whole.
		for n := 0; n < len(p.unitsBack) && p.due(p.unitsBack[n]).Before(p.resetAt); n++ {
			if float64(p.remaining+n+1) >= 2*p.runs*p.backoff {
				p.resetFrom, p.resetAt, p.openedOnUnitsBack = p.unitsBack[n], p.unitsBack[n], true // a new epoch then
				return p.Next(now)
			}
		}
	}
	return p.due(p.resetAt).Sub(now)
}

// due is at plus the spread of round trips: a new connection delays only the way there.
func (p *Pacer) due(at time.Time) time.Time {
	return at.Add(max(p.slowest, p.lastSlowest) - p.fastest)
}

// quota is how many of our requests may be on their way: half our part of what remains (rule 6),
// so that the others' on their way still fit. Below one, one for the round of one (rule 7: while
// one per run fits, a count nearer two being two, backed off to refusalBackoff at most; alone,
// while any remains) or, never refused, the last units (rule 8: all before our first, it, half the runs).
func (p *Pacer) quota() int {
	r, round := float64(p.remaining), p.runs
	if math.Round(round) <= 2 {
		round = 2
	}
	roundOfOne := !p.others || r >= round*min(p.backoff, refusalBackoff)
	lastUnits := !p.everRefused && r >= float64(p.firstPlace)+p.runs/2
	if q := int(r / (2 * p.runs * p.backoff)); q > 0 || r <= 0 || !roundOfOne && !lastUnits {
		return q
	}
	return 1
}

// yielding: having found others after spending as if alone, we leave them the rest once our part is sent (rule 3).
func (p *Pacer) yielding() bool {
	return p.yield && float64(p.sent) >= float64(p.limit)/p.runs
}

// capped is whether this epoch has taken the part maxShare allows (rule 14).
func (p *Pacer) capped() bool {
	return p.maxShare < 1 && p.limit > 0 && p.sent >= max(int(p.maxShare*float64(p.limit)), 1)
}

// Sent notes a request leaving now.
func (p *Pacer) Sent(now time.Time) Ticket {
	lastPlace := 0
	if p.onTheWay == 0 && p.answeredSeq > 0 {
		lastPlace = p.limit - p.remaining
	}
	p.seq, p.onTheWay, p.sent = p.seq+1, p.onTheWay+1, p.sent+1
	switch {
	case p.unmetered:
	case p.firstSeq == 0:
		p.firstSeq = p.seq
	case p.others && p.censusSeq == 0 && p.answeredSeq > 0:
		p.censusSeq = p.seq // rule 4: the next after the first counts the runs
	}
	return Ticket{seq: p.seq, epoch: p.epoch, sentAt: now, lastPlace: lastPlace, oursAhead: p.onTheWay - 1}
}

// Lost notes a request that got no answer: it may have been counted.
func (p *Pacer) Lost(t Ticket) {
	if t.epoch != p.epoch {
		return
	}
	p.onTheWay, p.remaining = p.onTheWay-1, max(p.remaining-1, 0)
	if t.seq == p.firstSeq && p.answeredSeq == 0 {
		p.firstSeq = 0 // open the epoch again
	} else if t.seq == p.censusSeq {
		p.censusSeq = -1
	}
}

// Answered takes in the answer to t, received at now.
func (p *Pacer) Answered(t Ticket, now time.Time, a Answer) {
	a, p.reading = believable(a, p.reading) // rules 15 and 16: seconds rounded down, a count taken before
	if a.Refused {
		p.refused(t, now, a)
		return
	}
	// No count: the service meters nothing, or says too little; only refusals slow us.
	p.unmetered = a.Remaining < 0
	p.limit = cmp.Or(max(a.Limit, 0), p.limit) // the limit this answer gave, else the one we knew
	if t.epoch != p.epoch {
		return // an answer from an epoch that has ended
	}
	rtt := now.Sub(t.sentAt)
	p.onTheWay, p.fastest, p.slowest = p.onTheWay-1, min(cmp.Or(p.fastest, rtt), rtt), max(p.slowest, rtt)
	if !p.unmetered && p.limit > 0 && t.seq >= p.answeredSeq {
		if a.Reset >= 0 {
			p.learnReset(t.sentAt, a.Reset)
		}
		p.count(t, a.Remaining)
	}
	// Rule 9: one that went before the answer we go by came in may be counted before it: it only lowers.
	if !p.unmetered && (a.Remaining <= p.remaining || !t.sentAt.Before(p.heardAt)) {
		p.remaining, p.heardAt = a.Remaining, now
	}
	if at := t.sentAt.Add(a.Reset); a.Reset > 0 && !p.unmetered { // rule 11: t's unit is back then
		i, _ := slices.BinarySearchFunc(p.unitsBack, at, time.Time.Compare)
		p.unitsBack = slices.Insert(p.unitsBack, i, at)
	}
}

// learnReset takes in that the allowance is whole within the second before sentAt+reset
// (rule 1; Reset is rounded up). Answers that agree narrow it down; one that does
// not (more counted since, on a sliding window or a bucket) replaces them.
func (p *Pacer) learnReset(sentAt time.Time, reset time.Duration) {
	lo, hi := sentAt.Add(reset-time.Second), sentAt.Add(reset)
	p.wholeAt = later(p.wholeAt, hi)
	if p.resetAt.IsZero() || !lo.Before(p.resetAt) || !p.resetFrom.Before(hi) {
		p.resetFrom, p.resetAt = lo, hi
	} else if p.resetFrom = later(p.resetFrom, lo); hi.Before(p.resetAt) {
		p.resetAt = hi
	}
}

// count takes in what the answer to our request t said remains.
func (p *Pacer) count(t Ticket, remaining int) {
	place := p.limit - remaining
	for len(p.unitsBack) > 0 && (!p.due(p.unitsBack[0]).After(t.sentAt) || len(p.unitsBack) >= place+t.oursAhead) {
		p.unitsBack = p.unitsBack[1:] // back before t was counted, or more than the count holds besides t and those ahead
	}
	if t.seq == p.firstSeq {
		p.opened(t, place)
	}
	if t.lastPlace > 0 && p.others {
		// Rule 5: sent right after the answer to our last (as the census is), the requests counted
		// between the two are the runs, one each; the count moves halfway, for runs may still turn.
		p.runs = (math.Max(1, float64(place-t.lastPlace)) + p.runs) / 2
	}
	// Rules 9 and 11: the count grew by more than all we sent after our first, or
	// holds more than our units and requests on their way: others' are counted.
	if place-p.firstPlace > p.sent-1 || (t.seq == p.firstSeq || !p.others) && place > 1+len(p.unitsBack)+p.onTheWay {
		p.yield = p.yield || !p.others // rule 3: found while spending as if alone
		p.others, p.othersThisEpoch, p.runs = true, true, math.Max(p.runs, 2)
	}
	if !p.others && t.seq != p.firstSeq {
		p.runs = 1 // a round trip after our first, still no other run
	}
	p.answeredSeq = t.seq
}

// opened takes in the place of our first request of the epoch.
func (p *Pacer) opened(t Ticket, place int) {
	p.firstPlace = place
	if place == 1 && p.runs == 1 && !p.othersThisEpoch {
		// Rule 2: first in the count, no other run seen, spend as if alone (a
		// later census would count others' requests, not others). Never
		// seen alone before: as if one more until our next answer.
		if p.others {
			p.runs = 2
		}
		p.others, p.censusSeq = false, -1
	}
	if place > int(p.runs)+1 && p.lastWhole.After(t.sentAt) {
		// Rule 10: more came before us than the runs we know of sent, so not
		// whole yet (a sliding window gives it back as spent); wait as the last said.
		p.resetFrom, p.resetAt = p.lastWhole, p.lastWhole
	}
}

// refused ends the epoch until Retry-After (rule 13). The census missed runs,
// or some came late: the next epoch's part is halved (once, however many).
func (p *Pacer) refused(t Ticket, now time.Time, a Answer) {
	if t.epoch == p.epoch {
		p.onTheWay, p.firstRefused = p.onTheWay-1, p.firstRefused || t.seq == p.firstSeq
		if t.lastPlace > 0 && p.others && a.Remaining <= 0 {
			// Sent right after our last answer, refused with none left: the others took what it said remained, one each.
			p.runs = math.Max(p.runs, float64(p.limit-t.lastPlace+1))
		}
	}
	p.notBefore, p.everRefused = later(p.notBefore, now.Add(a.RetryAfter)), true
	p.resetFrom, p.resetAt, p.remaining = p.notBefore, p.notBefore, 0
	p.others, p.othersThisEpoch, p.backoffBy, p.unmetered = true, true, refusalBackoff, false
}

// turn starts an epoch: the allowance is whole again (rule 1).
func (p *Pacer) turn() {
	last := p.epochState
	p.epochState = epochState{epoch: last.epoch + 1}
	p.lastSlowest, p.lastWhole = last.slowest, last.wholeAt
	if last.firstRefused { // rule 13: our first was refused, so we came late: open this one without a census
		p.censusSeq = -1
	}
	switch {
	case !last.othersThisEpoch && last.answeredSeq > last.firstSeq: // rule 2: no other run showed after our first
		p.runs = 1
	case last.othersThisEpoch && !last.openedOnUnitsBack: // rule 12: whole beside others, our units held before are back in it
		p.unitsBack = p.unitsBack[:0]
	}
	p.others, p.backoff, p.backoffBy = last.othersThisEpoch, max(1, p.backoffBy*p.backoff), 0.75
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
