package links

import (
	"testing"
	"time"
)

// The bounds narrow as links are created, hold the true offset, and
// place "made after t" on the service's clock within a few seconds; a
// witness that disagrees with them starts them again.
func TestServiceClock(t *testing.T) {
	var c serviceClock
	t0 := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	if got := c.since(t0); !got.Equal(t0.Add(-clockSkewAllowance)) {
		t.Fatalf("unknown: since = %v, want the skew allowance before", got)
	}
	const ahead = 37 * time.Second // the service's clock, ahead of ours
	for i, rtt := range []time.Duration{900 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond} {
		sent := t0.Add(time.Duration(i) * time.Minute)
		c.observe(sent, sent.Add(rtt), sent.Add(ahead+rtt/2).Truncate(time.Second))
		if c.lo > ahead || c.hi < ahead {
			t.Fatalf("after %d links: bounds [%v, %v] miss the offset %v", i+1, c.lo, c.hi, ahead)
		}
	}
	at := t0.Add(time.Hour)
	if got := c.since(at); got.After(at.Add(ahead-clockStepAllowance)) || got.Before(at.Add(ahead-clockStepAllowance-3*time.Second)) {
		t.Fatalf("since = %v, want within 3 s before %v", got, at.Add(ahead-clockStepAllowance))
	}
	c.observe(at, at.Add(time.Second), at.Add(-time.Hour)) // a clock set back an hour
	if got := c.since(at); !got.Before(at.Add(-time.Hour - clockStepAllowance + time.Second)) {
		t.Fatalf("after a disagreeing witness since = %v, want it read from that witness alone", got)
	}
}

func TestServiceClock_mayPrecede(t *testing.T) {
	at := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	var c serviceClock
	if !c.mayPrecede(at.Add(time.Hour), at) {
		t.Error("with the clock not placed, any link may precede")
	}
	if c.mayPrecede(time.Time{}, at) {
		t.Error("a link without createdAt cannot be placed, so is not taken to precede")
	}
	// The service's clock 10 s ahead: a link made at our 12:00:00 shows 12:00:10.
	c.observe(at, at.Add(200*time.Millisecond), at.Add(10*time.Second))
	for _, tc := range []struct {
		createdAt time.Time
		want      bool
	}{
		{at.Add(5 * time.Second), true},                       // five seconds before, on the service's clock
		{at.Add(10 * time.Second), false},                     // made at the moment
		{at.Add(9*time.Second + 500*time.Millisecond), false}, // within what the bounds allow
	} {
		if got := c.mayPrecede(tc.createdAt, at); got != tc.want {
			t.Errorf("created at %s against our %s: mayPrecede %v, want %v", tc.createdAt.Format(time.TimeOnly), at.Format(time.TimeOnly), got, tc.want)
		}
	}
}
