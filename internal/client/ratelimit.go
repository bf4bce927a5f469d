package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Rate-limit classes. The service counts its limits per key and separately
// for read and write endpoints; the pacing keeps one pacer for each.
const (
	ClassRead  = "read"
	ClassWrite = "write"
)

// RateLimit is what the X-RateLimit-* headers of one response said. A
// field whose header was absent or unreadable is -1, so that an unknown
// allowance is never mistaken for an exhausted one.
type RateLimit struct {
	Limit, Remaining int
	// Reset is the time until the allowance resets.
	Reset time.Duration
}

// parseRateLimit reads the X-RateLimit-* headers; ok is false when none of
// them is present.
func parseRateLimit(h http.Header, now time.Time) (rl RateLimit, ok bool) {
	rl = RateLimit{Limit: -1, Remaining: -1, Reset: -1}
	if n, found := headerInt(h, "X-RateLimit-Limit"); found {
		rl.Limit, ok = n, true
	}
	if n, found := headerInt(h, "X-RateLimit-Remaining"); found {
		rl.Remaining, ok = n, true
	}
	if d, found := resetAfter(h, now); found {
		rl.Reset, ok = d, true
	}
	return rl, ok
}

func headerInt(h http.Header, name string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(h.Get(name)))
	return n, err == nil
}

// rateClass is the service's rate-limit class of a method: it counts reads
// and writes separately.
func rateClass(method string) string {
	if method == http.MethodGet || method == http.MethodHead {
		return ClassRead
	}
	return ClassWrite
}
