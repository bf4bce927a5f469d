package client

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// ThrottleMargin is added to every reset time the throttle learns, at
// first. The service counts a request when it arrives, a little after we
// send it, so a window learnt from the send time may end a network latency
// early; the margin keeps the first request of the next window from
// arriving before the window has turned. A busy machine can hold a request
// back for longer than that between the throttle and the wire: a budget
// refused at the start of a window it turned to doubles its margin, up to
// MaxThrottleMargin, and lets it shrink back by an eighth a window.
const ThrottleMargin = 20 * time.Millisecond

// MaxThrottleMargin bounds the margin a budget learns.
const MaxThrottleMargin = time.Second

// throttle is an http.RoundTripper that keeps a Client within the
// service's rate limits before the service has to refuse a request. It
// keeps one budget for reads and one for writes, as the service counts
// them, shared by every request of the Client (so by every operation of a
// provider instance). When a budget is spent, requests wait for the window
// to turn instead of being sent to be answered 429.
type throttle struct {
	next        http.RoundTripper
	read, write *budget
}

// newThrottle throttles next; maxShare caps the part of each window this
// client may use (1: the whole allowance, when no other client takes it).
func newThrottle(next http.RoundTripper, now func() time.Time, maxShare float64) *throttle {
	if next == nil {
		next = http.DefaultTransport
	}
	return &throttle{
		next:  next,
		read:  newBudget(ClassRead, now, newWindowCap(maxShare)),
		write: newBudget(ClassWrite, now, newWindowCap(maxShare)),
	}
}

func (t *throttle) budgetFor(method string) *budget {
	if rateClass(method) == ClassRead {
		return t.read
	}
	return t.write
}

// RoundTrip waits for the budget, sends the request and learns from the
// answer's rate-limit headers.
func (t *throttle) RoundTrip(req *http.Request) (*http.Response, error) {
	b := t.budgetFor(req.Method)
	queued := b.now()
	tk, err := b.acquire(req.Context())
	noteRateWait(req.Context(), b.class, b.now().Sub(queued), false)
	if err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	b.observe(tk, resp)
	return resp, err
}

// budget is one allowance of the service, learnt from the X-RateLimit-*
// headers of its answers.
type budget struct {
	class string
	now   func() time.Time

	mu sync.Mutex
	// changed is closed (and replaced) whenever waiters should look again.
	changed chan struct{}
	// limit is the allowance per window; -1 until learnt.
	limit int
	// remaining is how many requests may still be sent in this window,
	// counting those already sent; -1 while unknown.
	remaining int
	// resetAt is when the window turns; zero while unknown.
	resetAt time.Time
	// windowStart is when this budget last turned its window: answers to
	// requests sent before it describe the old window.
	windowStart time.Time
	// refused is true when a 429 set resetAt in this window: the estimates
	// of other answers no longer move it.
	refused bool
	// probing is true while a request is out to learn an unknown budget.
	probing bool
	// inflight counts the requests sent and not yet answered.
	inflight int
	// margin is added to the resets learnt (see ThrottleMargin).
	margin time.Duration
	// longestReset is the longest reset the service has announced: about
	// the length of its windows.
	longestReset time.Duration
	// unmetered is true when the service sends no rate-limit headers: then
	// there is nothing to learn and nothing is held back.
	unmetered bool
	// reported is the lowest remaining the service has reported in this
	// window; -1 while none. A higher one later means the window turned.
	reported int
	// ceiling is the configured part of each window this client may use.
	ceiling *windowCap
	// pace is this client's turn-taking with others using the same key.
	pace *keyShare
}

// ticket is what acquire hands a request and observe takes back.
type ticket struct {
	sentAt time.Time
	probe  bool
	// metered is whether the request was counted against this window
	// (not so while the service meters nothing).
	metered bool
}

func newBudget(class string, now func() time.Time, ceiling *windowCap) *budget {
	return &budget{
		class: class, now: now, changed: make(chan struct{}),
		limit: -1, remaining: -1, reported: -1, margin: ThrottleMargin,
		ceiling: ceiling, pace: newKeyShare(),
	}
}

// throttleWaitError is a request given up while it waited for its budget:
// it was never sent, so even a POST is not ambiguous.
type throttleWaitError struct{ err error }

func (e *throttleWaitError) Error() string {
	return fmt.Sprintf("stopped waiting for the rate-limit window to turn: %v", e.err)
}
func (e *throttleWaitError) Unwrap() []error { return []error{ErrNotSent, e.err} }

// acquire waits until the budget allows one more request and takes it.
// While the budget is unknown, one request at a time is let through to
// learn it.
func (b *budget) acquire(ctx context.Context) (ticket, error) {
	logged, queued := false, false
	for {
		b.mu.Lock()
		if !queued {
			// Counted while it waits (see keyShare.queued): it leaves the
			// queue in sendLocked, or below when it gives up.
			b.pace.join()
			queued = true
		}
		now := b.now()
		if !b.resetAt.IsZero() && !now.Before(b.resetAt) {
			b.turnWindowLocked(now)
		}
		if b.remaining == 0 && b.resetAt.IsZero() && b.inflight == 0 {
			// Spent, and no request on its way can still say when the
			// window turns (every answer lacked the reset or never came):
			// learn the budget again rather than wait for ever.
			b.remaining = -1
		}
		switch {
		case b.unmetered:
			b.inflight++
			b.pace.queued--
			b.mu.Unlock()
			return ticket{sentAt: now}, nil
		case b.remaining > 0 && b.ceiling.allows(b.limit) && (b.pace.allows(now.Sub(b.windowStart)) || b.inflight == 0 && b.wakeAtLocked(now).IsZero()):
			// (Held back by the pacing with no answer to come and no
			// time to wake at, a request would wait for ever: it goes.)
			b.remaining--
			return b.sendLocked(now, false), nil
		case b.remaining < 0 && !b.probing:
			b.probing = true
			return b.sendLocked(now, true), nil
		}
		changed, resetAt, wakeAt := b.changed, b.resetAt, b.wakeAtLocked(now)
		b.mu.Unlock()
		if !logged && !resetAt.IsZero() {
			tflog.Debug(ctx, "rate-limit budget spent: waiting for the window to turn", map[string]any{
				"class": b.class, "wait": resetAt.Sub(now).Round(time.Millisecond).String(),
			})
			logged = true
		}
		if err := waitFor(ctx, changed, wakeAt, now); err != nil {
			b.mu.Lock()
			b.pace.queued--
			b.mu.Unlock()
			return ticket{}, &throttleWaitError{err: err}
		}
	}
}

// wakeAtLocked is when a waiting request looks again without news: when
// the window turns, or sooner when the pacing holds it back for a while.
func (b *budget) wakeAtLocked(now time.Time) time.Time {
	if d := b.pace.wakeAfter(); d > 0 {
		if at := b.windowStart.Add(d); at.After(now) && (b.resetAt.IsZero() || at.Before(b.resetAt)) {
			return at
		}
	}
	return b.resetAt
}

// sendLocked hands out a ticket for a request about to be sent.
func (b *budget) sendLocked(now time.Time, probe bool) ticket {
	if b.windowStart.IsZero() {
		// The first request: the first window's clock starts here.
		b.windowStart = now
	}
	b.inflight++
	b.ceiling.send()
	b.pace.send()
	b.pace.queued--
	b.mu.Unlock()
	return ticket{sentAt: now, probe: probe, metered: true}
}

// waitFor returns when changed is closed, resetAt has passed (if known) or
// ctx ends.
func waitFor(ctx context.Context, changed <-chan struct{}, resetAt, now time.Time) error {
	var expired <-chan time.Time
	if !resetAt.IsZero() {
		timer := time.NewTimer(resetAt.Sub(now))
		defer timer.Stop()
		expired = timer.C
	}
	select {
	case <-changed:
	case <-expired:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// turnWindowLocked starts a new window with the whole allowance.
func (b *budget) turnWindowLocked(now time.Time) {
	b.windowStart, b.resetAt, b.refused = now, time.Time{}, false
	b.remaining = b.limit // -1 while the limit is unknown: probe again
	b.reported = -1
	b.margin = max(b.margin-b.margin/8, ThrottleMargin)
	b.ceiling.turn()
	b.pace.turn()
	b.broadcastLocked()
}

func (b *budget) broadcastLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// observe learns from an answer (resp is nil after a transport error).
func (b *budget) observe(tk ticket, resp *http.Response) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer b.broadcastLocked()
	b.inflight--
	if tk.probe {
		b.probing = false
	}
	current := tk.metered && !tk.sentAt.Before(b.windowStart)
	if resp == nil {
		if current {
			b.pace.lost()
		}
		return
	}
	now := b.now()
	rl, ok := parseRateLimit(resp.Header, now)
	if !ok && resp.StatusCode != http.StatusTooManyRequests {
		// No rate-limit headers: the service meters nothing, unless this
		// is an error page from in front of it (a gateway's 502), which
		// says nothing about its metering.
		if resp.StatusCode < 500 {
			b.unmetered = true
		}
		if current {
			b.pace.lost()
		}
		return
	}
	// A 429 is a refusal even without the headers: a gateway may send
	// Retry-After alone.
	b.unmetered = false
	rl = believable(rl)
	if b.turnedEarlyLocked(tk, rl) {
		// The service counted this request in its new window: so do we.
		b.turnWindowLocked(tk.sentAt)
		b.ceiling.send()
		b.pace.send()
	}
	if tk.sentAt.Before(b.windowStart) {
		return // an answer from the window that has turned since
	}
	refused := resp.StatusCode == http.StatusTooManyRequests
	b.learnLocked(tk, rl, refused, now)
	if refused {
		b.refuseLocked(tk, rl, resp.Header, now)
	}
}

// learnLocked takes in what an answer of this window says of the budget.
func (b *budget) learnLocked(tk ticket, rl RateLimit, refused bool, now time.Time) {
	if rl.Limit > 0 {
		b.limit = rl.Limit
	}
	if tk.metered {
		if refused {
			b.ceiling.refused()
		}
		b.pace.observe(b.limit, rl.Remaining, refused, now.Sub(tk.sentAt))
		b.pace.answeredAt = now.Sub(b.windowStart)
	}
	if rl.Reset >= 0 && !b.refused {
		// The request reached the service some time after we sent it:
		// the margin, or as much longer as this round trip took beyond
		// the shortest of the latest (a busy machine that held it back
		// before the wire delays its answer as much). A reset counted
		// from the send alone turned us to the next window early, and
		// its first request was refused in the old one.
		late := max(now.Sub(tk.sentAt)-b.pace.steadyRTT(), 0)
		if est := tk.sentAt.Add(rl.Reset + max(b.margin, late)); b.resetAt.IsZero() || est.Before(b.resetAt) {
			b.resetAt = est
		}
	}
	b.longestReset = max(b.longestReset, rl.Reset)
	b.pace.window = b.longestReset
	if rl.Remaining >= 0 && (b.reported < 0 || rl.Remaining < b.reported) {
		b.reported = rl.Remaining
	}
	if rl.Remaining >= 0 && (b.remaining < 0 || rl.Remaining < b.remaining) {
		// The service's count includes other users of the key; ours
		// includes requests still on their way. The smaller is safe.
		b.remaining = rl.Remaining
	}
}

// refuseLocked closes the window after a 429: nothing more goes out until
// the service says so. Retry-After is its own word and beats what the
// window suggests, now and when the answers still on their way come in.
func (b *budget) refuseLocked(tk ticket, rl RateLimit, h http.Header, now time.Time) {
	if b.turnedTooSoonLocked(tk, rl) {
		b.margin = min(2*b.margin, MaxThrottleMargin)
	}
	b.remaining, b.refused = 0, true
	if d, ok := retryAfter(h, now); ok {
		b.resetAt = now.Add(d)
	} else if b.resetAt.IsZero() {
		b.resetAt = now.Add(time.Second)
	}
}

// MaxBelievableReset is the longest wait for a window to turn that the
// throttle believes; a longer X-RateLimit-Reset is taken for garbage.
const MaxBelievableReset = 24 * time.Hour

// believable drops what no service means: a negative count, a remaining
// above the limit (the limit is believed, the remaining clamped), a reset
// beyond MaxBelievableReset.
func believable(rl RateLimit) RateLimit {
	if rl.Limit < 0 {
		rl.Limit = -1
	}
	if rl.Remaining < 0 {
		rl.Remaining = -1
	}
	if rl.Limit > 0 && rl.Remaining > rl.Limit {
		rl.Remaining = rl.Limit
	}
	if rl.Reset > MaxBelievableReset {
		rl.Reset = -1
	}
	return rl
}

// turnedTooSoonLocked is whether a refusal says that we turned to this
// window before the service did: the request went early in our window,
// yet the service's window is nearly over.
func (b *budget) turnedTooSoonLocked(tk ticket, rl RateLimit) bool {
	half := b.longestReset / 2
	return half > 0 && rl.Reset >= 0 && rl.Reset <= half && tk.sentAt.Sub(b.windowStart) < half
}

// turnedEarlyLocked is whether an answer shows that the service's window
// turned before we expected: it reports more remaining than it already
// told us was left in this window, and a reset later than the one we wait
// for by more than the headers' whole-second rounding. (More remaining
// alone is no proof: answers overtake each other.)
func (b *budget) turnedEarlyLocked(tk ticket, rl RateLimit) bool {
	if b.reported < 0 || rl.Remaining <= b.reported || rl.Reset < 0 || b.resetAt.IsZero() || tk.sentAt.Before(b.windowStart) {
		return false
	}
	return tk.sentAt.Add(rl.Reset).After(b.resetAt.Add(time.Second))
}
