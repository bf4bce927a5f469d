package client

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/shortlink/terraform-provider-shortlink/internal/pacing"
)

// Clock is what the pacing transport reads the time from and waits with.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed, and a
	// function that releases the timer early.
	After(d time.Duration) (<-chan time.Time, func())
}

// systemClock is the wall clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) After(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// paced is an http.RoundTripper that keeps a Client within the service's
// rate limits before the service has to refuse a request, by the rule of
// internal/pacing: one pacer for reads and one for writes, as the service
// counts them, shared by every request of the Client (so by every
// operation of a provider instance).
type paced struct {
	next        http.RoundTripper
	clock       Clock
	read, write *classPace
}

// classPace is one class's pacer and the requests waiting for it.
type classPace struct {
	class string
	mu    sync.Mutex
	pacer *pacing.Pacer
	// changed is closed (and replaced) when an answer may let waiting
	// requests go, or the first in the queue has gone.
	changed chan struct{}
	// queue is the places of the requests waiting, first come first; issued
	// counts the places given.
	queue  []*queuePlace
	issued uint64
	// refusedUntil is when the latest Retry-After ends, as the service
	// said it: no request of the class goes before.
	refusedUntil time.Time
	// slowestSuccess is the longest a request of the class took from
	// sending to a 2xx answer.
	slowestSuccess time.Duration
	// spent: the latest answer said nothing remains of the window (or
	// refused), so a wait for answers is a wait for the window.
	spent bool
}

// queuePlace is a call's place in its class's queue, taken when its first
// attempt comes to the pacer and kept by its retries, so that a request
// sent again after a 429 goes before those that came after it.
type queuePlace struct{ seq uint64 }

type queuePlaceKey struct{}

// withQueuePlace gives the call of ctx a place in the queue, kept across
// its attempts.
func withQueuePlace(ctx context.Context) context.Context {
	return context.WithValue(ctx, queuePlaceKey{}, &queuePlace{})
}

// join puts the request of ctx in the queue: at its call's place, or last
// (a request that did not come through withQueuePlace).
func (c *classPace) join(ctx context.Context) *queuePlace {
	place, ok := ctx.Value(queuePlaceKey{}).(*queuePlace)
	if !ok {
		place = &queuePlace{}
	}
	if place.seq == 0 {
		c.issued++
		place.seq = c.issued
	}
	i, _ := slices.BinarySearchFunc(c.queue, place.seq, func(q *queuePlace, seq uint64) int { return cmp.Compare(q.seq, seq) })
	c.queue = slices.Insert(c.queue, i, place)
	return place
}

// leave takes place out of the queue and wakes the others: the next may go.
func (c *classPace) leave(place *queuePlace) {
	c.queue = slices.DeleteFunc(c.queue, func(q *queuePlace) bool { return q == place })
	c.wake()
}

// wake lets the waiting requests look again.
func (c *classPace) wake() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// newPaced paces next; maxShare caps the part of each window this client
// may use (1: the whole allowance, when no other client takes it).
func newPaced(next http.RoundTripper, clock Clock, maxShare float64) *paced {
	if next == nil {
		next = http.DefaultTransport
	}
	class := func(name string) *classPace {
		return &classPace{class: name, pacer: pacing.New(maxShare), changed: make(chan struct{})}
	}
	return &paced{next: next, clock: clock, read: class(ClassRead), write: class(ClassWrite)}
}

// RoundTrip waits until the request may go, sends it and tells the pacer
// what the answer said.
func (p *paced) RoundTrip(req *http.Request) (*http.Response, error) {
	c := p.write
	if rateClass(req.Method) == ClassRead {
		c = p.read
	}
	queued := p.clock.Now()
	tk, forAnswers, err := c.acquire(req.Context(), p.clock, req.Method)
	if c != p.write {
		forAnswers = 0 // the warning names slow writes (the fraud filter); reads are answered at once
	}
	noteRateWait(req.Context(), c.class, p.clock.Now().Sub(queued), forAnswers, false)
	if err != nil {
		return nil, err
	}
	sent := p.clock.Now()
	noteSent(req.Context(), sent)
	resp, err := p.next.RoundTrip(req)
	c.answered(tk, sent, p.clock.Now(), resp)
	return resp, err
}

// SlowestWriteAnswer is the longest a write of this client took from
// sending to its successful answer (0 before the first): how long the
// service may work on a write, its fraud filter included, before it
// answers.
func (c *Client) SlowestWriteAnswer() time.Duration {
	p, ok := c.http.Transport.(*paced)
	if !ok {
		return 0
	}
	p.write.mu.Lock()
	defer p.write.mu.Unlock()
	return p.write.slowestSuccess
}

// paceWaitError is a request given up while it waited for the rate limit:
// it was never sent, so even a POST is not ambiguous.
type paceWaitError struct{ err error }

func (e *paceWaitError) Error() string {
	return fmt.Sprintf("stopped waiting for the rate limit: %v", e.err)
}
func (e *paceWaitError) Unwrap() []error { return []error{ErrNotSent, e.err} }

// acquire waits until the pacer lets one more request go and the request
// is the first in the queue, and takes it; forAnswers is how much of the
// wait only an answer could end while no answer had said the window spent
// (once one has, the wait is the window's, whatever ends it). A request
// that a Retry-After, or a window the answers said is spent, holds past
// its operation's deadline stops at once.
func (c *classPace) acquire(ctx context.Context, clock Clock, method string) (_ pacing.Ticket, forAnswers time.Duration, _ error) {
	c.mu.Lock()
	place := c.join(ctx)
	c.mu.Unlock()
	logged := false
	for {
		c.mu.Lock()
		now := clock.Now()
		wait := c.pacer.Next(now)
		if wait == 0 && c.queue[0] == place {
			tk := c.pacer.Sent(now)
			c.leave(place)
			c.mu.Unlock()
			return tk, forAnswers, nil
		}
		if wait == 0 {
			wait = pacing.WaitForAnswer // the first in the queue goes, then wakes the others
		}
		if end, spent := c.heldUntil(now, wait); endsPastDeadline(ctx, end) {
			past := &WaitPastDeadlineError{Method: method, Wait: end.Sub(now), Spent: spent}
			c.leave(place)
			c.mu.Unlock()
			return pacing.Ticket{}, forAnswers, &paceWaitError{err: past}
		}
		changed, forAnswer := c.changed, wait == pacing.WaitForAnswer && !c.spent
		c.mu.Unlock()
		var expired <-chan time.Time
		release := func() {}
		if wait != pacing.WaitForAnswer {
			expired, release = clock.After(wait)
			if !logged {
				tflog.Debug(ctx, "waiting for the rate limit", map[string]any{
					"class": c.class, "wait": wait.Round(time.Millisecond).String(),
				})
				logged = true
			}
		}
		select {
		case <-changed:
		case <-expired:
		case <-ctx.Done():
			release()
			if forAnswer {
				forAnswers += clock.Now().Sub(now)
			}
			c.mu.Lock()
			c.leave(place)
			c.mu.Unlock()
			return pacing.Ticket{}, forAnswers, &paceWaitError{err: ctx.Err()}
		}
		release()
		if forAnswer {
			forAnswers += clock.Now().Sub(now)
		}
	}
}

// heldUntil is how long the service's own answers hold the class's next
// request: until the latest Retry-After ends, or, once an answer said that
// nothing remains of the window (spent), for as long as the pacer waits
// for it to come back. A finite wait means no answer of the pacer's
// epoch is on its way (it would wait for that answer instead). An answer
// of an earlier epoch could bring the moment sooner only by a refusal
// whose Retry-After ends first; the request then fails where it might
// have gone late in its time, which this accepts to fail the rest at once.
func (c *classPace) heldUntil(now time.Time, wait time.Duration) (end time.Time, spent bool) {
	if c.spent && wait != pacing.WaitForAnswer && now.Add(wait).After(c.refusedUntil) {
		return now.Add(wait), true
	}
	return c.refusedUntil, false
}

// answered tells the pacer what the answer to tk, sent at sent, said (resp
// is nil after a transport error) and wakes the requests waiting.
func (c *classPace) answered(tk pacing.Ticket, sent, now time.Time, resp *http.Response) {
	c.mu.Lock()
	defer func() {
		c.wake()
		c.mu.Unlock()
	}()
	if resp == nil {
		c.pacer.Lost(tk)
		return
	}
	if resp.StatusCode < 300 {
		c.slowestSuccess = max(c.slowestSuccess, now.Sub(sent))
	}
	rl, metered := parseRateLimit(resp.Header, now)
	refused := resp.StatusCode == http.StatusTooManyRequests
	if !metered && !refused && resp.StatusCode >= 300 {
		// An error page from in front of the service (a gateway's 502, a
		// load balancer's 408) says nothing of its metering: only a
		// success without a count says the service meters nothing.
		c.pacer.Lost(tk)
		return
	}
	c.spent = refused || metered && rl.Remaining == 0
	a := pacing.Answer{Limit: rl.Limit, Remaining: rl.Remaining, Reset: rl.Reset, RetryAfter: -1, Refused: refused}
	if d, ok := retryAfter(resp.Header, now); ok {
		a.RetryAfter = d
		if refused && now.Add(d).After(c.refusedUntil) {
			c.refusedUntil = now.Add(d)
		}
	}
	c.pacer.Answered(tk, now, a)
}
