// Package testclock is a settable clock for tests that move time by hand
// (rate-limit windows, snapshot lifetimes) instead of sleeping.
package testclock

import (
	"sync"
	"testing"
	"time"
)

// Clock is safe for concurrent use; its Now fits any `now func() time.Time`
// option.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock stopped at a fixed instant, so tests are repeatable.
func New() *Clock {
	return &Clock{now: time.Date(2026, 3, 15, 10, 0, 0, 0, time.UTC)}
}

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Parse is the instant s spells in RFC 3339, for tests that name the times
// of the clicks and links they set up; a typo in s fails the test.
func Parse(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}
