package emulator

import (
	"math"
	"net/http"
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
}

// rateDecision is the answer to one request. reset is how long until the
// allowance next grows (0: it is whole); a refused request may be sent
// again after it.
type rateDecision struct {
	allowed          bool
	limit, remaining int
	reset            time.Duration
}

func newRateLimiter() *rateLimiter { return &rateLimiter{allowances: map[string]*allowance{}} }

// take consumes one request of the key's allowance when there is one left.
// A refused request consumes nothing, so a client that waits for the reset
// gets what it waited for.
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
	limit, length := l.limitFor(class), time.Duration(l.Window)
	d := rateDecision{limit: limit}
	switch l.Model {
	case ModelSliding:
		d.remaining, d.reset = a.sliding(limit, length, now, consume)
	case ModelBucket:
		d.remaining, d.reset = a.bucket(limit, length, now, consume)
	default:
		d.remaining, d.reset = a.fixed(limit, length, l.Model == ModelClock, now, consume)
	}
	d.allowed = d.remaining >= 0
	d.remaining = max(d.remaining, 0)
	return d
}

// fixed counts in fixed windows. It returns what remains after this
// request (-1: refused) and the time until the window ends.
func (a *allowance) fixed(limit int, length time.Duration, aligned bool, now time.Time, consume bool) (int, time.Duration) {
	start, count := a.start, a.count
	if !now.Before(start.Add(length)) { // the window is over: the next starts now, or at the clock's turn
		start, count = now, 0
		if aligned {
			start = now.Truncate(length)
		}
	}
	reset := start.Add(length).Sub(now)
	switch {
	case !consume:
		return limit - count, reset
	case count >= limit:
		return -1, reset
	}
	a.start, a.count = start, count+1
	return limit - a.count, reset
}

// sliding counts the requests allowed in the last window length. The time
// until the allowance grows is when the oldest of them leaves the window.
func (a *allowance) sliding(limit int, length time.Duration, now time.Time, consume bool) (int, time.Duration) {
	for len(a.allowed) > 0 && !now.Before(a.allowed[0].Add(length)) {
		a.allowed = a.allowed[1:]
	}
	until := func() time.Duration {
		if len(a.allowed) == 0 {
			return 0
		}
		return a.allowed[0].Add(length).Sub(now)
	}
	switch {
	case !consume:
		return limit - len(a.allowed), until()
	case len(a.allowed) >= limit:
		return -1, until()
	}
	a.allowed = append(a.allowed, now)
	return limit - len(a.allowed), until()
}

// bucket refills limit tokens per window length, up to limit. The time
// until the allowance grows is until the next whole token.
func (a *allowance) bucket(limit int, length time.Duration, now time.Time, consume bool) (int, time.Duration) {
	perSecond := float64(limit) / length.Seconds()
	if a.fresh {
		a.tokens, a.filled, a.fresh = float64(limit), now, false
	}
	a.tokens = math.Min(float64(limit), a.tokens+now.Sub(a.filled).Seconds()*perSecond)
	a.filled = now
	if consume && a.tokens >= 1 {
		a.tokens--
	} else if consume {
		return -1, a.nextToken(limit, perSecond)
	}
	return int(a.tokens), a.nextToken(limit, perSecond)
}

func (a *allowance) nextToken(limit int, perSecond float64) time.Duration {
	if a.tokens >= float64(limit) {
		return 0
	}
	whole := math.Floor(a.tokens) + 1
	// Up to the millisecond, past the float's noise: never early.
	ms := math.Ceil((whole-a.tokens)/perSecond*1000 - 1e-6)
	return time.Duration(ms) * time.Millisecond
}

func setRateHeaders(w http.ResponseWriter, limit, remaining int, reset time.Duration) {
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(reset)))
}

// ceilSeconds rounds up, so a client that waits the advertised seconds is
// never early.
func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}
