package main

import (
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// The floor of the shared scenario: 90 writes at 10 per 2 s need nine
// windows, eight beyond the first. On the clock model the first is what is
// left of the window the first write arrives in.
func TestSharedFloor(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC).Add(1830 * time.Millisecond) // 0.17 s before the clock window ends
	for _, tc := range []struct {
		name       string
		model      string
		firstWrite time.Time
		want       time.Duration
	}{
		{"windows start at the first write", emulator.ModelFirstRequest, start.Add(time.Second), 16 * time.Second},
		{"first write within the first clock window", emulator.ModelClock, start.Add(100 * time.Millisecond), 16*time.Second - 1830*time.Millisecond},
		{"first write after the first clock window ended", emulator.ModelClock, start.Add(900 * time.Millisecond), 18*time.Second - 1830*time.Millisecond},
		{"first write two windows later", emulator.ModelClock, start.Add(2500 * time.Millisecond), 20*time.Second - 1830*time.Millisecond},
		{"no write arrived", emulator.ModelClock, time.Time{}, 16*time.Second - 1830*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := sharedCase{model: tc.model, limit: 10, window: 2 * time.Second, runs: 3, links: 30}
			if got := sharedFloor(c, start, tc.firstWrite); got != tc.want {
				t.Errorf("sharedFloor = %v, want %v", got, tc.want)
			}
		})
	}
}

// The longest create of an apply, from Terraform's own lines.
func TestLongestCreate(t *testing.T) {
	out := `shortlink_link.l[0]: Creating...
shortlink_link.l[0]: Creation complete after 0s [id=l-1]
shortlink_link.l[2]: Creation complete after 1m3s [id=l-3]
shortlink_link.l[1]: Still creating... [10s elapsed]
shortlink_link.l[1]: Creation complete after 12s [id=l-2]
`
	if got := longestCreate(out); got != time.Minute+3*time.Second {
		t.Errorf("longestCreate = %v, want 1m3s", got)
	}
	if got := longestCreate("Apply complete! Resources: 0 added"); got != 0 {
		t.Errorf("longestCreate of no create = %v, want 0", got)
	}
}
