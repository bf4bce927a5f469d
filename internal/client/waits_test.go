package client

import (
	"context"
	"testing"
	"time"
)

// An operation learns how long it waited for the rate limit and how many
// 429s told it to: the provider tells the user of a long wait from this.
// A 429 whose Retry-After asks for no wait is counted too: the service
// refused the request all the same.
func TestWaits_countsWaitsAfter429(t *testing.T) {
	for _, tt := range []struct {
		retryAfter string
		atLeast    time.Duration
	}{
		{"1", 900 * time.Millisecond}, // about the second it asked
		{"0", 0},
	} {
		t.Run("Retry-After "+tt.retryAfter, func(t *testing.T) {
			_, srv := serve(t,
				step{status: 429, body: `{"error":"rate_limited"}`, header: map[string]string{"Retry-After": tt.retryAfter}},
				step{status: 201, body: `{"id":"l1","destination":"https://e/","domainId":"d","slug":"s","shortUrl":"https://s/s"}`},
			)
			c := newTestClient(t, srv)
			ctx, waits := TrackWaits(context.Background())
			if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d", Slug: "s"}); err != nil {
				t.Fatal(err)
			}
			if waits.Refused() != 1 || waits.Total() < tt.atLeast {
				t.Fatalf("%d refused, waited %s; want 1, and at least %s", waits.Refused(), waits.Total(), tt.atLeast)
			}
		})
	}
}

// A context without TrackWaits records nothing and still works.
func TestWaits_untracked(t *testing.T) {
	noteRateWait(context.Background(), ClassWrite, time.Second, true)
	ctx, waits := TrackWaits(context.Background())
	noteRateWait(ctx, ClassWrite, 0, false)
	noteRateWait(ctx, ClassWrite, 2*time.Second, false)
	if waits.Total() != 2*time.Second || waits.Refused() != 0 {
		t.Fatalf("waited %s, %d refused; want 2s, 0", waits.Total(), waits.Refused())
	}
}
