package emulator

import (
	"net/http"
	"strconv"
	"sync"
	"time"
)

const (
	classRead  = "read"
	classWrite = "write"
)

func (l Limits) limitFor(class string) int {
	if class == classWrite {
		return l.Write
	}
	return l.Read
}

// rateLimiter keeps one fixed window per key and class.
type rateLimiter struct {
	mu      sync.Mutex
	windows map[string]*window
}

type window struct {
	start time.Time
	count int
}

type rateDecision struct {
	allowed          bool
	limit, remaining int
	reset            time.Duration
}

func newRateLimiter() *rateLimiter { return &rateLimiter{windows: map[string]*window{}} }

// take consumes one request of the key's allowance when there is one left. A
// refused request consumes nothing, so a client that waits for the reset gets
// the whole next window.
func (rl *rateLimiter) take(key, class string, limit int, length time.Duration, now time.Time) rateDecision {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	w := rl.current(key+"\x00"+class, length, now)
	reset := w.start.Add(length).Sub(now)
	if w.count >= limit {
		return rateDecision{allowed: false, limit: limit, remaining: 0, reset: reset}
	}
	w.count++
	return rateDecision{allowed: true, limit: limit, remaining: limit - w.count, reset: reset}
}

// peek reports the allowance left in the key's current window without
// consuming any; a window that is over counts as a fresh one.
func (rl *rateLimiter) peek(key, class string, limit int, length time.Duration, now time.Time) rateDecision {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	w, ok := rl.windows[key+"\x00"+class]
	if !ok || !now.Before(w.start.Add(length)) {
		return rateDecision{allowed: true, limit: limit, remaining: limit, reset: length}
	}
	return rateDecision{allowed: w.count < limit, limit: limit, remaining: max(limit-w.count, 0), reset: w.start.Add(length).Sub(now)}
}

func (rl *rateLimiter) current(id string, length time.Duration, now time.Time) *window {
	w, ok := rl.windows[id]
	if !ok || !now.Before(w.start.Add(length)) {
		w = &window{start: now}
		rl.windows[id] = w
	}
	return w
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
