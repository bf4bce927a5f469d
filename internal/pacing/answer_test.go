package pacing

import (
	"testing"
	"time"
)

// Headers no service means are not believed: a negative count is unknown,
// a remaining above the limit is the limit, a wait beyond a day is none.
func TestBelievable(t *testing.T) {
	const s, year = time.Second, 365 * 24 * time.Hour
	for _, c := range []struct {
		name     string
		said, is Answer
	}{
		{"a remaining above the limit, a reset of years",
			Answer{Limit: 10, Remaining: 5000, Reset: 10 * year, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 10, Reset: -1, RetryAfter: -1}},
		{"negative counts and waits",
			Answer{Limit: -7, Remaining: -3, Reset: -2 * s, RetryAfter: -5 * s},
			Answer{Limit: -1, Remaining: -1, Reset: -1, RetryAfter: -1}},
		{"a day at most",
			Answer{Limit: 10, Remaining: 4, Reset: MaxBelievableReset, RetryAfter: MaxBelievableReset + s},
			Answer{Limit: 10, Remaining: 4, Reset: MaxBelievableReset, RetryAfter: -1}},
		{"what is believable is kept",
			Answer{Limit: 60, Remaining: 0, Reset: 42 * s, RetryAfter: 42 * s, Refused: true},
			Answer{Limit: 60, Remaining: 0, Reset: 42 * s, RetryAfter: 42 * s, Refused: true}},
	} {
		if got, r := believable(c.said, reading{}); got != c.is || r != (reading{}) {
			t.Errorf("%s: believable(%+v) = %+v, %+v; want %+v and nothing learnt", c.name, c.said, got, r, c.is)
		}
	}
}

// A 429 without a believable Retry-After asks for the Reset, and a second
// at least: nothing goes sooner.
func TestPacer_refusalWithoutRetryAfterWaitsForReset(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct{ reset, want time.Duration }{
		{5 * time.Second, 5 * time.Second}, {0, time.Second}, {-1, time.Second}, {48 * time.Hour, time.Second},
	} {
		p := New(1)
		p.Answered(p.Sent(now), now, Answer{Limit: 10, Remaining: 0, Reset: c.reset, RetryAfter: -1, Refused: true})
		if wait := p.Next(now); wait != c.want {
			t.Errorf("Next after a 429 with Reset %s and no Retry-After = %s, want %s", c.reset, wait, c.want)
		}
	}
}

// An answer is read as the run has learnt to read the service (rules 15
// and 16), and teaches what could not be so otherwise. Whole seconds are
// read as rounded up until a wait of 0 shows them rounded down (rounded
// up, none is 0 once a request was counted or refused); from then on every
// wait is a second longer. What remains is read as counting the request
// answered until an allowed answer says the whole limit remains (so only
// if the count was taken before the request); from then on one less.
func TestBelievableLearnsTheReading(t *testing.T) {
	const s = time.Second
	down, before := reading{roundedDown: true}, reading{countedBefore: true}
	for _, c := range []struct {
		name          string
		known, learnt reading
		said, is      Answer
	}{
		{"a Reset of 0 after a request was counted", reading{}, down,
			Answer{Limit: 10, Remaining: 3, Reset: 0, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 3, Reset: s, RetryAfter: -1}},
		{"a Retry-After of 0", reading{}, down,
			Answer{Limit: 10, Remaining: 0, Reset: 2 * s, RetryAfter: 0, Refused: true},
			Answer{Limit: 10, Remaining: 0, Reset: 3 * s, RetryAfter: s, Refused: true}},
		{"a refusal with a Reset of 0 and no Retry-After waits a second", reading{}, down,
			Answer{Limit: 10, Remaining: 0, Reset: 0, RetryAfter: -1, Refused: true},
			Answer{Limit: 10, Remaining: 0, Reset: s, RetryAfter: s, Refused: true}},
		{"no count: a Reset of 0 says nothing", reading{}, reading{},
			Answer{Limit: -1, Remaining: -1, Reset: 0, RetryAfter: -1},
			Answer{Limit: -1, Remaining: -1, Reset: 0, RetryAfter: -1}},
		{"rounded up and counted after, as far as anyone knows", reading{}, reading{},
			Answer{Limit: 10, Remaining: 3, Reset: 2 * s, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 3, Reset: 2 * s, RetryAfter: -1}},
		{"once rounded down, every wait is a second longer", down, down,
			Answer{Limit: 10, Remaining: 0, Reset: 5 * s, RetryAfter: 2 * s, Refused: true},
			Answer{Limit: 10, Remaining: 0, Reset: 6 * s, RetryAfter: 3 * s, Refused: true}},
		{"once rounded down, what is not said stays unsaid", down, down,
			Answer{Limit: 10, Remaining: 3, Reset: -1, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 3, Reset: -1, RetryAfter: -1}},
		{"the whole limit remaining: a count taken before, and a Reset of 0 no sign of rounding", reading{}, before,
			Answer{Limit: 10, Remaining: 10, Reset: 0, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 9, Reset: 0, RetryAfter: -1}},
		{"once counted before, what remains is one less", before, before,
			Answer{Limit: 10, Remaining: 5, Reset: 2 * s, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 4, Reset: 2 * s, RetryAfter: -1}},
		{"once counted before, nothing remaining is still nothing", before, before,
			Answer{Limit: 10, Remaining: 0, Reset: 2 * s, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 0, Reset: 2 * s, RetryAfter: -1}},
		{"once counted before, a refusal's count is not lowered", before, before,
			Answer{Limit: 10, Remaining: 1, Reset: 2 * s, RetryAfter: 2 * s, Refused: true},
			Answer{Limit: 10, Remaining: 1, Reset: 2 * s, RetryAfter: 2 * s, Refused: true}},
		{"a remaining above the limit is garbage, not a sign", reading{}, reading{},
			Answer{Limit: 10, Remaining: 11, Reset: 2 * s, RetryAfter: -1},
			Answer{Limit: 10, Remaining: 10, Reset: 2 * s, RetryAfter: -1}},
		{"a refusal with the whole limit remaining is no sign", reading{}, reading{},
			Answer{Limit: 10, Remaining: 10, Reset: 2 * s, RetryAfter: 2 * s, Refused: true},
			Answer{Limit: 10, Remaining: 10, Reset: 2 * s, RetryAfter: 2 * s, Refused: true}},
	} {
		if got, r := believable(c.said, c.known); got != c.is || r != c.learnt {
			t.Errorf("%s: believable(%+v, %+v) = %+v, %+v; want %+v, %+v", c.name, c.said, c.known, got, r, c.is, c.learnt)
		}
	}
}
