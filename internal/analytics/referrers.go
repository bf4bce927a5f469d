package analytics

import (
	"container/heap"
	"sort"
	"strings"
)

// referrerCounter counts clicks per referrer in bounded memory. Up to its
// capacity of distinct referrers the counts are exact. Past it, it is the
// Space-Saving algorithm (Metwally, Agrawal and El Abbadi, 2005): a new
// referrer takes the place of the one with the fewest clicks and inherits
// its count plus one. Every referrer with more than total/capacity clicks
// is then still counted, and the counts are upper bounds, over by at most
// total/capacity. Which referrer gives
// way among equals is fixed (the greatest in byte order), so a reading of
// the same export always gives the same result.
type referrerCounter struct {
	capacity int
	entries  map[string]*referrerEntry
	byClicks referrerHeap // built once the capacity is reached
	evicted  bool
}

type referrerEntry struct {
	referrer string
	clicks   int64
	index    int // in byClicks
}

func newReferrerCounter(capacity int) *referrerCounter {
	return &referrerCounter{capacity: capacity, entries: map[string]*referrerEntry{}}
}

func (c *referrerCounter) add(referrer string) {
	if e, ok := c.entries[referrer]; ok {
		e.clicks++
		if c.byClicks != nil {
			heap.Fix(&c.byClicks, e.index)
		}
		return
	}
	if len(c.entries) < c.capacity {
		referrer = strings.Clone(referrer) // see increment
		c.entries[referrer] = &referrerEntry{referrer: referrer, clicks: 1}
		return
	}
	if c.byClicks == nil {
		c.byClicks = make(referrerHeap, 0, len(c.entries))
		for _, e := range c.entries {
			e.index = len(c.byClicks)
			c.byClicks = append(c.byClicks, e)
		}
		heap.Init(&c.byClicks)
	}
	fewest := c.byClicks[0]
	delete(c.entries, fewest.referrer)
	fewest.referrer = strings.Clone(referrer)
	fewest.clicks++
	c.entries[fewest.referrer] = fewest
	heap.Fix(&c.byClicks, 0)
	c.evicted = true
}

func (c *referrerCounter) exact() bool { return !c.evicted }

// top returns the n referrers with the most clicks, ties in byte order.
func (c *referrerCounter) top(n int) []ReferrerClicks {
	all := make([]ReferrerClicks, 0, len(c.entries))
	for _, e := range c.entries {
		all = append(all, ReferrerClicks{Referrer: e.referrer, Clicks: e.clicks})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Clicks != all[j].Clicks {
			return all[i].Clicks > all[j].Clicks
		}
		return all[i].Referrer < all[j].Referrer
	})
	return all[:min(n, len(all))]
}

// referrerHeap orders entries by clicks, fewest first; among equals the
// greatest referrer first, the one to give way.
type referrerHeap []*referrerEntry

func (h referrerHeap) Len() int { return len(h) }
func (h referrerHeap) Less(i, j int) bool {
	if h[i].clicks != h[j].clicks {
		return h[i].clicks < h[j].clicks
	}
	return h[i].referrer > h[j].referrer
}

func (h referrerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *referrerHeap) Push(x any) {
	e := x.(*referrerEntry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *referrerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
