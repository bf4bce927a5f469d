package client

import "math"

// windowCap is the provider's cap on the part of each rate-limit window
// this client may use, for a key shared with integrations that must keep
// theirs (a dashboard sync, another pipeline): with a cap of 0.5 and an
// allowance of 60 per window, this client sends at most 30 in a window
// and leaves the rest, whatever the service says is remaining.
//
// windowCap is not safe for concurrent use: its budget's lock guards it.
type windowCap struct {
	// share is the part of each window this client may use, in (0, 1].
	share float64
	// taken counts our requests of the current window the service did not
	// refuse (a 429 is not counted against the allowance).
	taken int
}

func newWindowCap(share float64) *windowCap {
	if share <= 0 || share > 1 {
		share = 1
	}
	return &windowCap{share: share}
}

// allows says whether one more request fits this window's part of an
// allowance of limit requests (unknown while limit <= 0: nothing to cap).
func (c *windowCap) allows(limit int) bool {
	return c.share >= 1 || limit <= 0 || c.taken < c.of(limit)
}

// of is the cap in requests: at least one, or nothing would ever be sent.
func (c *windowCap) of(limit int) int {
	return max(int(math.Floor(c.share*float64(limit))), 1)
}

func (c *windowCap) send()    { c.taken++ }
func (c *windowCap) refused() { c.taken-- }
func (c *windowCap) turn()    { c.taken = 0 }
