package client

import "testing"

func TestWindowCap(t *testing.T) {
	cases := []struct {
		share       float64
		limit, want int
	}{
		{0.5, 10, 5},
		{0.5, 9, 4},   // rounded down: the cap is a ceiling
		{0.05, 10, 1}, // at least one, or nothing would ever go
		{0, 10, 10},   // unset: no cap
		{1.5, 10, 10}, // nonsense: no cap
	}
	for _, c := range cases {
		wc := newWindowCap(c.share)
		n := 0
		for n < c.limit && wc.allows(c.limit) {
			wc.send()
			n++
		}
		if n != c.want {
			t.Errorf("share %v of %d: %d requests allowed, want %d", c.share, c.limit, n, c.want)
		}
		wc.refused() // a 429 is not counted by the service: one more may go
		if c.want < c.limit && !wc.allows(c.limit) {
			t.Errorf("share %v of %d: a refused request still counts against the cap", c.share, c.limit)
		}
		wc.turn()
		if !wc.allows(c.limit) {
			t.Errorf("share %v of %d: a new window does not allow a request", c.share, c.limit)
		}
	}
	if !newWindowCap(0.5).allows(-1) {
		t.Error("a cap holds back requests of a budget not learnt yet")
	}
}
