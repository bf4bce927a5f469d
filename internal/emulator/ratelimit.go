package emulator

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

const (
	classRead  = "read"
	classWrite = "write"
)

// The rate-limit models (Limits.Model). The spec does not say how the
// service counts; these are the four common ways, so that the provider's
// pacing is tested on each.
const (
	// ModelFirstRequest: fixed windows, each starting at the first request
	// after the previous one ended (the default).
	ModelFirstRequest = "first-request"
	// ModelClock: fixed windows aligned to the clock (a window of 60 s
	// turns at every whole minute).
	ModelClock = "clock"
	// ModelSliding: a request is allowed when fewer than the limit were
	// allowed in the last window length.
	ModelSliding = "sliding"
	// ModelBucket: a token bucket of the limit's size, refilled
	// continuously at the limit per window length.
	ModelBucket = "bucket"
)

// rateModels are the model names Settings accepts ("" is the default).
var rateModels = []string{"", ModelFirstRequest, ModelClock, ModelSliding, ModelBucket}

// The ways of making X-RateLimit-Reset and Retry-After whole seconds
// (Limits.Rounding). The spec says "seconds" and not which way; a service
// that truncates is as likely as one that rounds up.
const (
	// RoundUp: a client that waits the seconds said is never early (the default).
	RoundUp = "up"
	// RoundDown: the seconds are truncated; a wait under a second is 0.
	RoundDown = "down"
	// RoundNearest: the seconds are rounded to the nearest.
	RoundNearest = "nearest"
)

// roundings are the rounding names Settings accepts ("" is the default).
var roundings = []string{"", RoundUp, RoundDown, RoundNearest}

// What X-RateLimit-Remaining counts on an allowed request
// (Limits.Remaining). The spec says "requests remaining", not whether the
// request answered is counted in it yet.
const (
	// RemainingAfter: what remains once the request is counted (the default).
	RemainingAfter = "after"
	// RemainingBefore: what remained when it arrived, the request not yet
	// counted (a fresh window says the whole limit).
	RemainingBefore = "before"
)

// remainingCounts are the Remaining names Settings accepts ("" is the default).
var remainingCounts = []string{"", RemainingAfter, RemainingBefore}

// What X-RateLimit-Reset counts down to (Limits.Reset). The spec says
// "seconds until the allowance resets"; where it is given back a unit at
// a time (a sliding window, a token bucket), a service may count to the
// next unit rather than to the whole.
const (
	// ResetWhole: until the allowance is whole again (the default).
	ResetWhole = "whole"
	// ResetNext: until it next grows by a unit, as Retry-After does.
	ResetNext = "next"
)

// resetReadings are the Reset names Settings accepts ("" is the default).
var resetReadings = []string{"", ResetWhole, ResetNext}

// RemainingSaid is what X-RateLimit-Remaining says of an answer whose
// request was allowed or not, remaining being what is left after it.
func (l Limits) RemainingSaid(allowed bool, remaining int) int {
	if allowed && l.Remaining == RemainingBefore {
		return remaining + 1
	}
	return remaining
}

func (l Limits) limitFor(class string) int {
	if class == classWrite {
		return l.Write
	}
	return l.Read
}

// rateLimiter keeps one allowance per key and class.
type rateLimiter struct {
	mu         sync.Mutex
	allowances map[string]*allowance
}

// allowance is what one key and class has spent, in the terms of every
// model: the one in use reads its own fields.
type allowance struct {
	// Fixed windows: when the current window started, and its count.
	start time.Time
	count int
	// Sliding window: when each request counted in the last window was
	// allowed, oldest first.
	allowed []time.Time
	// Token bucket: the tokens left at filled.
	tokens float64
	filled time.Time
	fresh  bool // the bucket has not been used yet: it is full
	// counted is the latest time the counter took a request at.
	counted time.Time
}

// rateDecision is the answer to one request. reset is how long until the
// allowance is whole again (0: it is whole), the spec's "seconds until the
// allowance resets"; next, how long until it next grows (0: it is whole);
// retry is next once nothing remains, after which a refused request would
// be allowed (0 when one may go now). In fixed windows all three are the
// end of the window.
type rateDecision struct {
	allowed            bool
	limit, remaining   int
	reset, next, retry time.Duration
}

func newRateLimiter() *rateLimiter { return &rateLimiter{allowances: map[string]*allowance{}} }

// take consumes one request of the key's allowance when there is one left.
// A refused request consumes nothing, so a client that waits for the retry
// time gets what it waited for.
func (rl *rateLimiter) take(key, class string, l Limits, now time.Time) rateDecision {
	return rl.decide(key, class, l, now, true)
}

// peek reports the key's allowance without consuming any.
func (rl *rateLimiter) peek(key, class string, l Limits, now time.Time) rateDecision {
	return rl.decide(key, class, l, now, false)
}

func (rl *rateLimiter) decide(key, class string, l Limits, now time.Time, consume bool) rateDecision {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	id := key + "\x00" + class
	a, ok := rl.allowances[id]
	if !ok {
		a = &allowance{fresh: true}
		rl.allowances[id] = a
	}
	// Requests reach the counter in the order it takes them: one whose
	// clock was read before a request counted already counts after it.
	if now.Before(a.counted) {
		now = a.counted
	}
	if !consume {
		a = a.clone() // a look, at any time, changes nothing
	}
	limit, length := l.limitFor(class), time.Duration(l.Window)
	var d rateDecision
	switch l.Model {
	case ModelSliding:
		d = a.sliding(limit, length, now, consume)
	case ModelBucket:
		d = a.bucket(limit, length, now, consume)
	default:
		d = a.fixed(limit, length, l.Model == ModelClock, now, consume)
	}
	d.limit = limit
	if l.Reset == ResetNext {
		d.reset = d.next
	}
	if d.remaining >= limit {
		d.reset = 0 // whole already (a look at a key that has sent nothing)
	}
	if consume {
		a.counted = now
	}
	return d
}

// clone is a copy sharing nothing that a decision changes.
func (a *allowance) clone() *allowance {
	c := *a
	c.allowed = slices.Clone(a.allowed)
	return &c
}

// fixed counts in fixed windows: the allowance is whole again, and grows,
// when the window ends.
func (a *allowance) fixed(limit int, length time.Duration, aligned bool, now time.Time, consume bool) rateDecision {
	start, count := a.start, a.count
	if !now.Before(start.Add(length)) { // the window is over: the next starts now, or at the clock's turn
		start, count = now, 0
		if aligned {
			start = now.Truncate(length)
		}
	}
	end := start.Add(length).Sub(now)
	d := rateDecision{allowed: count < limit, reset: end, next: end, retry: end}
	if d.allowed && consume {
		a.start, a.count = start, count+1
		count++
	}
	d.remaining = max(limit-count, 0) // a limit lowered at run time may be overspent
	if d.allowed && count < limit {
		d.retry = 0
	}
	return d
}

// sliding counts the requests allowed in the last window length. The
// allowance grows when the oldest of them leaves the window and is whole
// when the newest has.
func (a *allowance) sliding(limit int, length time.Duration, now time.Time, consume bool) rateDecision {
	for len(a.allowed) > 0 && !now.Before(a.allowed[0].Add(length)) {
		a.allowed = a.allowed[1:]
	}
	d := rateDecision{allowed: len(a.allowed) < limit}
	if d.allowed && consume {
		a.allowed = append(a.allowed, now)
	}
	d.remaining = max(limit-len(a.allowed), 0)
	if n := len(a.allowed); n > 0 {
		d.reset, d.next = a.allowed[n-1].Add(length).Sub(now), a.allowed[0].Add(length).Sub(now)
		if d.remaining == 0 {
			d.retry = d.next
		}
	}
	return d
}

// bucket refills limit tokens per window length, up to limit. The
// allowance grows with the next whole token and is whole when the bucket
// is full.
func (a *allowance) bucket(limit int, length time.Duration, now time.Time, consume bool) rateDecision {
	perSecond := float64(limit) / length.Seconds()
	if a.fresh {
		a.tokens, a.filled, a.fresh = float64(limit), now, false
	}
	a.tokens = math.Min(float64(limit), a.tokens+now.Sub(a.filled).Seconds()*perSecond)
	a.filled = now
	d := rateDecision{allowed: a.tokens >= 1}
	if d.allowed && consume {
		a.tokens--
	}
	d.remaining = int(a.tokens)
	d.reset = untilTokens(float64(limit)-a.tokens, perSecond)
	d.next = untilTokens(min(math.Floor(a.tokens)+1, float64(limit))-a.tokens, perSecond)
	if d.remaining == 0 {
		d.retry = d.next
	}
	return d
}

// untilTokens is how long the bucket takes to gain n tokens, up to the
// millisecond past the float's noise: never early.
func untilTokens(n, perSecond float64) time.Duration {
	if n <= 0 {
		return 0
	}
	ms := math.Ceil(n/perSecond*1000 - 1e-6)
	return time.Duration(ms) * time.Millisecond
}

func setRateHeaders(w http.ResponseWriter, l Limits, limit, remaining int, reset time.Duration) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(l.WholeSeconds(reset)))
}

// WholeSeconds is d in whole seconds, made so as Rounding says: what the
// headers carry.
func (l Limits) WholeSeconds(d time.Duration) int {
	switch {
	case d <= 0:
		return 0
	case l.Rounding == RoundDown:
		return int(d / time.Second)
	case l.Rounding == RoundNearest:
		return int(d.Round(time.Second) / time.Second)
	}
	return int((d + time.Second - 1) / time.Second)
}

// RateLimiter counts write requests as the server does, for simulations of
// clients that run without HTTP (the provider's pacing tests).
type RateLimiter struct{ rl *rateLimiter }

// NewRateLimiter returns a limiter with no request counted.
func NewRateLimiter() *RateLimiter { return &RateLimiter{rl: newRateLimiter()} }

// Take answers one write of key at now under l: whether it is allowed,
// what remains, how long until the allowance is whole again and how long
// until it next grows, exactly (the server rounds both up to whole seconds
// in its headers).
func (r *RateLimiter) Take(key string, l Limits, now time.Time) (allowed bool, remaining int, reset, retry time.Duration) {
	d := r.rl.take(key, classWrite, l, now)
	return d.allowed, d.remaining, d.reset, d.retry
}

// Peek answers as Take would, without counting the write.
func (r *RateLimiter) Peek(key string, l Limits, now time.Time) (allowed bool, remaining int, reset, retry time.Duration) {
	d := r.rl.peek(key, classWrite, l, now)
	return d.allowed, d.remaining, d.reset, d.retry
}
