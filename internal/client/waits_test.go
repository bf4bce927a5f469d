package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
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
			if sum := waits.Sum(); sum.Refused != 1 || sum.Total < tt.atLeast {
				t.Fatalf("%d refused, waited %s; want 1, and at least %s", sum.Refused, sum.Total, tt.atLeast)
			}
		})
	}
}

// A context without TrackWaits records nothing and still works.
func TestWaits_untracked(t *testing.T) {
	noteRateWait(context.Background(), ClassWrite, time.Second, 0, true)
	ctx, waits := TrackWaits(context.Background())
	noteRateWait(ctx, ClassWrite, 0, 0, false)
	noteRateWait(ctx, ClassWrite, 2*time.Second, time.Second, false)
	if sum := waits.Sum(); sum != (WaitSum{Total: 2 * time.Second, ForAnswers: time.Second}) {
		t.Fatalf("counted %+v; want 2s, 1s of it for answers, none refused", sum)
	}
}

// A write held until an answer says how much of the allowance remains
// counts that wait apart from a wait for the window: the warning tells a
// slow service from a spent window by it. The first write of a new client
// goes alone and is answered after 300 ms, saying one write remains; the
// two others wait for that answer (for answers), one of them goes, and
// its answer says the window is spent: the last waits the rest of the
// second for the window, not for answers.
func TestWaits_waitForAnAnswerIsCountedApart(t *testing.T) {
	link := `{"id":"l1","destination":"https://e/","domainId":"d","slug":"s","shortUrl":"https://s/s"}`
	s, srv := serve(t,
		step{status: 201, delay: 300 * time.Millisecond, body: link, header: map[string]string{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "1"}},
		step{status: 201, body: link, header: map[string]string{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1"}},
		step{status: 201, body: link, header: map[string]string{"X-RateLimit-Limit": "2", "X-RateLimit-Remaining": "1", "X-RateLimit-Reset": "1"}},
	)
	c := newTestClient(t, srv)
	create := func(ctx context.Context, slug string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d", Slug: slug})
			done <- err
		}()
		return done
	}
	first := create(context.Background(), "a")
	for s.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, waits := TrackWaits(context.Background())
	second, third := create(ctx, "b"), create(ctx, "c")
	for _, done := range []<-chan error{first, second, third} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	sum := waits.Sum()
	if sum.ForAnswers < 500*time.Millisecond || sum.Total-sum.ForAnswers < 500*time.Millisecond {
		t.Fatalf("waited %s, %s of it for answers; want about 300ms each for the first answer, and the rest of the second for the window", sum.Total, sum.ForAnswers)
	}
}

// A wait of LongWait or more is logged at INFO, with its class and length,
// and whether a 429 asked for it; a shorter one is not.
func TestWaits_longWaitIsLoggedAtInfo(t *testing.T) {
	for _, tc := range []struct {
		wait    time.Duration
		refused bool
		want    string
	}{
		{LongWait, true, "waiting for the rate limit, as a 429 asked"},
		{6 * time.Second, false, "waited for the rate limit before sending"},
		{LongWait - time.Millisecond, true, ""},
	} {
		var logs bytes.Buffer
		ctx := tflogtest.RootLogger(context.Background(), &logs)
		noteRateWait(ctx, ClassWrite, tc.wait, 0, tc.refused)
		got := logs.String()
		if tc.want == "" && got != "" || tc.want != "" && (!strings.Contains(got, `"@level":"info"`) || !strings.Contains(got, tc.want) || !strings.Contains(got, `"wait":"`+tc.wait.String()+`"`)) {
			t.Errorf("a wait of %s (refused %v) logged %q, want %q", tc.wait, tc.refused, got, tc.want)
		}
	}
}
