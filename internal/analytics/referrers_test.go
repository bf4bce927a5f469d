package analytics

import (
	"fmt"
	"reflect"
	"testing"
)

// Past its capacity the counter keeps the heavy referrers, with counts
// over by no more than total/capacity, always the same ones.
func TestReferrerCounterBounded(t *testing.T) {
	const capacity = 8
	run := func() (*referrerCounter, int) {
		c := newReferrerCounter(capacity)
		total := 0
		for i := range 1000 {
			c.add(fmt.Sprintf("https://once.example/%d", i))
			total++
			if i%3 == 0 {
				c.add("https://heavy.example/")
				total++
			}
			if i%5 == 0 {
				c.add("https://medium.example/")
				total++
			}
		}
		return c, total
	}
	c, total := run()
	if len(c.entries) != capacity || len(c.byClicks) != capacity || c.exact() {
		t.Fatalf("%d entries, %d in the heap, exact %t; want %d, %d, false", len(c.entries), len(c.byClicks), c.exact(), capacity, capacity)
	}
	top := c.top(2)
	bound := int64(total / capacity)
	for i, want := range []ReferrerClicks{{"https://heavy.example/", 334}, {"https://medium.example/", 200}} {
		if top[i].Referrer != want.Referrer || top[i].Clicks < want.Clicks || top[i].Clicks > want.Clicks+bound {
			t.Fatalf("top[%d] = %v, want %s with %d to %d clicks", i, top[i], want.Referrer, want.Clicks, want.Clicks+bound)
		}
	}
	again, _ := run()
	if !reflect.DeepEqual(again.top(capacity), c.top(capacity)) {
		t.Fatalf("two readings of the same clicks differ: %v / %v", again.top(capacity), c.top(capacity))
	}

	exact := newReferrerCounter(capacity)
	for i := range capacity {
		for range i + 1 {
			exact.add(fmt.Sprint(i))
		}
	}
	if !exact.exact() || exact.top(1)[0] != (ReferrerClicks{"7", 8}) {
		t.Fatalf("within capacity: exact %t, top %v", exact.exact(), exact.top(1))
	}
}
