package pacing

import (
	"testing"
	"time"
)

// Headers no service means are not believed: a remaining above the limit
// is the limit, a reset of years is none.
func TestPacer_garbageIsNotBelieved(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	p.Answered(p.Sent(now), now.Add(50*time.Millisecond), Answer{Limit: 10, Remaining: 5000, Reset: 10 * 365 * 24 * time.Hour, RetryAfter: -1})
	if p.remaining != 10 || !p.resetAt.IsZero() {
		t.Fatalf("remaining %d, reset at %s; want 10 and none", p.remaining, p.resetAt)
	}
	if wait := p.Next(now.Add(50 * time.Millisecond)); wait != 0 {
		t.Fatalf("Next after garbage headers = %s, want 0 (the census)", wait)
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
