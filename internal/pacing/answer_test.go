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
		if got := believable(c.said); got != c.is {
			t.Errorf("%s: believable(%+v) = %+v, want %+v", c.name, c.said, got, c.is)
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
