package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// stopping returns a client of srv with a Stop of the given grace, and a
// function that stops the provider as Terraform does: the Stop begins,
// then the framework cancels every operation's context.
func stopping(t *testing.T, steps []step, grace time.Duration) (*script, *Client, context.Context, func()) {
	t.Helper()
	s, srv := serve(t, steps...)
	stop := NewStop()
	stop.SetGrace(grace)
	c := newTestClient(t, srv, func(cfg *Config) { cfg.Stop = stop })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return s, c, ctx, func() { stop.Begin(); cancel() }
}

// result is what a call returned, for calls run in a goroutine.
type result struct {
	link *Link
	err  error
}

func createAsync(ctx context.Context, c *Client) <-chan result {
	out := make(chan result, 1)
	go func() {
		link, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		out <- result{link, err}
	}()
	return out
}

func TestStop_sentWriteFinishesWithinGrace(t *testing.T) {
	s, c, ctx, stop := stopping(t, []step{{status: 201, body: linkJSON, delay: 400 * time.Millisecond}}, 10*time.Second)
	done := createAsync(ctx, c)
	await(t, "the request to arrive", func() bool { return s.count() == 1 })
	stop()
	got := testsupport.Receive(t, done, "the create")
	if got.err != nil || got.link == nil || got.link.ID != "l-1" {
		t.Fatalf("create = %+v, %v; want the link the service made", got.link, got.err)
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

// A write still unanswered when the grace ends may be carried out: a
// create is ambiguous (its link is to be looked for), a change or delete
// unanswered (the next refresh shows it); neither is "not sent".
func TestStop_writeOutlivingGraceMayBeCarriedOut(t *testing.T) {
	for _, tc := range []struct {
		method string
		send   func(context.Context, *Client) error
		want   error
	}{
		{http.MethodPost, func(ctx context.Context, c *Client) error {
			_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
			return err
		}, ErrAmbiguous},
		{http.MethodPatch, func(ctx context.Context, c *Client) error {
			_, err := c.ChangeDestination(ctx, "l-1", ChangeDestinationInput{Destination: "https://e/2"})
			return err
		}, ErrUnanswered},
		{http.MethodDelete, func(ctx context.Context, c *Client) error { return c.DeleteLink(ctx, "l-1") }, ErrUnanswered},
	} {
		t.Run(tc.method, func(t *testing.T) {
			s, c, ctx, stop := stopping(t, []step{{status: 200, body: linkJSON, delay: time.Minute}}, 50*time.Millisecond)
			done := make(chan error, 1)
			go func() { done <- tc.send(ctx, c) }()
			await(t, "the request to arrive", func() bool { return s.count() == 1 })
			stop()
			err := testsupport.Receive(t, done, "the "+tc.method)
			if !errors.Is(err, tc.want) || errors.Is(err, ErrNotSent) {
				t.Fatalf("error = %v, want %v (the service may carry it out), not ErrNotSent", err, tc.want)
			}
			if other := map[error]error{ErrAmbiguous: ErrUnanswered, ErrUnanswered: ErrAmbiguous}[tc.want]; errors.Is(err, other) {
				t.Fatalf("error = %v, want %v and not %v", err, tc.want, other)
			}
		})
	}
}

// A create waiting in the pacer's queue when Terraform stops is not sent,
// and says so (not ambiguous: no link is to be looked for).
func TestStop_requestWaitingForBudgetIsNotSent(t *testing.T) {
	spent := map[string]string{"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "600"}
	s, c, ctx, stop := stopping(t, []step{{status: 201, body: linkJSON, header: spent}}, 10*time.Second)
	if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"}); err != nil {
		t.Fatal(err)
	}
	writes := c.http.Transport.(*paced).write
	done := createAsync(ctx, c) // waits ten minutes for the window
	await(t, "the create to wait in the pacer's queue", func() bool { return writes.placesGiven() == 2 })
	stop()
	got := testsupport.Receive(t, done, "the create waiting for its budget")
	if !errors.Is(got.err, ErrNotSent) || errors.Is(got.err, ErrAmbiguous) || !strings.Contains(got.err.Error(), "waiting for the rate limit") {
		t.Fatalf("error = %v, want one given up waiting for the rate limit, ErrNotSent and not ErrAmbiguous", got.err)
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests, want 1: the waiting create must not be sent", n)
	}
}

func TestStop_backOffEndsWithoutRetry(t *testing.T) {
	busy := step{status: http.StatusServiceUnavailable, header: map[string]string{"Retry-After": "600"}}
	s, c, ctx, stop := stopping(t, []step{busy}, 10*time.Second)
	done := make(chan error, 1)
	go func() { done <- c.DeleteLink(ctx, "l-1") }()
	await(t, "the request to arrive", func() bool { return s.count() == 1 })
	stop()
	if err := testsupport.Receive(t, done, "the delete waiting to retry"); err == nil {
		t.Fatal("the delete succeeded; want the stop's error")
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests, want 1: nothing is re-sent after the stop", n)
	}
}

func TestStop_nothingNewIsSent(t *testing.T) {
	s, c, _, stop := stopping(t, []step{{status: 201, body: linkJSON}}, 10*time.Second)
	stop()
	// A fresh context, as a Terraform operation that had not started yet.
	_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if !errors.Is(err, ErrNotSent) {
		t.Fatalf("error = %v, want ErrNotSent", err)
	}
	if _, err := c.ListLinks(context.Background()); !errors.Is(err, ErrNotSent) {
		t.Fatalf("list error = %v, want ErrNotSent", err)
	}
	if n := s.count(); n != 0 {
		t.Fatalf("%d requests after the stop, want 0", n)
	}
}

// Bind cancels an operation's context a moment after the stop begins; a
// request let go in that moment is not sent either.
func TestStop_guardRefusesOnceBegun(t *testing.T) {
	sent := 0
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		sent++
		return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody}, nil
	})
	for range 200 {
		stop := NewStop()
		ctx, unbind := stop.Bind(context.Background())
		stop.Begin()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://service.invalid/api/links", http.NoBody)
		resp, err := (&stopGuard{next: next, stop: stop}).RoundTrip(req)
		closeBody(resp)
		if !errors.Is(err, ErrNotSent) {
			t.Fatalf("error = %v, want ErrNotSent", err)
		}
		unbind()
	}
	if sent > 0 {
		t.Fatalf("%d of 200 requests sent after the stop began", sent)
	}
}

func TestStop_deadlineIsNotExtended(t *testing.T) {
	s, srv := serve(t, step{status: 201, body: linkJSON, delay: time.Minute})
	c := newTestClient(t, srv, func(cfg *Config) { cfg.Stop = NewStop() })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("error = %v, want the deadline, ambiguous", err)
	}
	if s.count() != 1 {
		t.Fatalf("%d requests, want 1", s.count())
	}
}

// roundTripFunc is a RoundTripper of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
