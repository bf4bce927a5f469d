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

// reading is how the run has learnt to read the service's answers, from
// answers that could not be otherwise (rules 15 and 16).
type reading struct {
	// roundedDown: an answer said a wait of 0 where, rounded up, none is.
	// countedBefore: an allowed answer said the whole limit remained, which
	// is so only before the request answered was counted.
	roundedDown, countedBefore bool
}

// believable drops what no service means: a negative count, a remaining
// above the limit (the limit is believed, the remaining clamped), a wait
// beyond MaxBelievableReset. It reads the answer as r says, and gives back
// r with what this answer taught: whole seconds are read as rounded up
// until an answer shows them rounded down, and every wait then gains the
// second it may have lost (rule 15); what remains is read as counting the
// request answered until an allowed answer says the whole limit remains,
// and is then one less (rule 16). A refusal without a believable
// Retry-After asks for the Reset, and a second at least.
func believable(a Answer, r reading) (Answer, reading) {
	r.countedBefore = r.countedBefore || !a.Refused && a.Limit > 0 && a.Remaining == a.Limit
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
	r.roundedDown = r.roundedDown || a.Reset == 0 && notWhole || a.Refused && a.RetryAfter == 0
	for _, d := range waits {
		if r.roundedDown && *d >= 0 {
			*d += time.Second
		}
	}
	if r.countedBefore && !a.Refused && a.Remaining > 0 {
		a.Remaining--
	}
	if a.Refused && a.RetryAfter < 0 {
		a.RetryAfter = max(a.Reset, time.Second)
	}
	return a, r
}
