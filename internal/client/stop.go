package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultStopGrace is how long writes already sent may run on after the
// provider is told to stop. GitHub Actions' documentation gives a cancel
// as SIGINT, then SIGTERM 7.5 s later (which makes Terraform exit at once);
// 5 s leaves Terraform time to record the results before that.
const DefaultStopGrace = 5 * time.Second

// Stop is the provider being told to stop: Terraform's StopProvider, sent on
// the first Ctrl-C or on a runner's SIGINT or SIGTERM. From then on nothing
// new is sent, and a write already on its way is given the grace period to
// finish, so that its result reaches the state instead of being abandoned
// while the service carries it out.
type Stop struct {
	// ctx ends when the stop begins; AfterFunc on it costs no goroutine.
	ctx   context.Context
	begin context.CancelFunc

	mu    sync.Mutex
	at    time.Time
	grace time.Duration
}

// NewStop returns a Stop not yet begun, with DefaultStopGrace.
func NewStop() *Stop {
	ctx, begin := context.WithCancel(context.Background())
	return &Stop{ctx: ctx, begin: begin, grace: DefaultStopGrace}
}

// SetGrace sets the grace period (the provider's stop_grace_period).
func (s *Stop) SetGrace(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grace = max(d, 0)
}

// Begin starts the stop; later calls do nothing.
func (s *Stop) Begin() {
	s.mu.Lock()
	if s.at.IsZero() {
		s.at = time.Now()
	}
	s.mu.Unlock()
	s.begin()
}

// Done is closed once the stop has begun.
func (s *Stop) Done() <-chan struct{} { return s.ctx.Done() }

// Begun reports whether the stop has begun.
func (s *Stop) Begun() bool { return s.ctx.Err() != nil }

// graceEnds is when writes still on their way are abandoned.
func (s *Stop) graceEnds() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at.Add(s.grace)
}

// Bind returns ctx that also ends when the stop begins: an operation's
// waits (for a rate-limit window, for a back-off) and its decision to send
// the next request end at once, since nothing was sent.
func (s *Stop) Bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if s.Begun() {
		cancel() // AfterFunc would run it later, in a goroutine
	}
	unbind := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { unbind(); cancel() }
}

// keepSent returns the context a write already sent runs under: it keeps
// ctx's values and deadline, but when ctx is cancelled because the provider
// is stopping, the write runs on until the grace period ends. A write cut
// short is ambiguous (the service may carry it out anyway), and its answer
// is what lets Terraform record the link.
func (s *Stop) keepSent(ctx context.Context) (context.Context, context.CancelFunc) {
	kept, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if deadline, ok := ctx.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		kept, cancelDeadline = context.WithDeadline(kept, deadline)
		inner := cancel
		cancel = func() { cancelDeadline(); inner() }
	}
	release := context.AfterFunc(ctx, func() {
		if !s.Begun() || ctx.Err() != context.Canceled {
			cancel() // not a stop (a deadline, a dead caller): end now
			return
		}
		t := time.AfterFunc(time.Until(s.graceEnds()), cancel)
		context.AfterFunc(kept, func() { t.Stop() })
	})
	return kept, func() { release(); cancel() }
}

// stopGuard is the transport layer that applies Stop: a request whose
// operation has ended is not sent, and a write that is sent runs under
// keepSent.
type stopGuard struct {
	next http.RoundTripper
	stop *Stop
}

func (g *stopGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotSent, err)
	}
	if g.stop.Begun() {
		// Bind cancels the operation's context a moment after Begin, in a
		// goroutine of its own: a request let go meanwhile is not sent.
		return nil, fmt.Errorf("%w: %w", ErrNotSent, context.Canceled)
	}
	if rateClass(req.Method) == ClassRead {
		return g.next.RoundTrip(req)
	}
	ctx, cancel := g.stop.keepSent(req.Context())
	resp, err := g.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends an attempt's context once its body has been read.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}
