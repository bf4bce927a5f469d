package testsupport

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WriteTracker wraps the emulator's handler and notes when each write
// (POST, PATCH, DELETE) arrives and when it is answered, so a test can
// signal the CLI while writes are in flight and a benchmark can tell how
// long they ran.
type WriteTracker struct {
	next http.Handler

	mu    sync.Mutex
	spans []Span
}

// Span is one write: End is zero while it is in flight. Abandoned says its
// client had gone when the service finished it: the client stopped waiting
// for the answer.
type Span struct {
	Start, End time.Time
	Abandoned  bool
}

// NewWriteTracker wraps next.
func NewWriteTracker(next http.Handler) *WriteTracker { return &WriteTracker{next: next} }

func (t *WriteTracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet || !strings.HasPrefix(r.URL.Path, "/api/") {
		t.next.ServeHTTP(w, r)
		return
	}
	t.mu.Lock()
	i := len(t.spans)
	t.spans = append(t.spans, Span{Start: time.Now()})
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.spans[i].End = time.Now()
		t.spans[i].Abandoned = r.Context().Err() != nil // cancelled by the server when the client's connection closed
		t.mu.Unlock()
	}()
	t.next.ServeHTTP(w, r)
}

// Counts returns the writes in flight and those answered.
func (t *WriteTracker) Counts() (inFlight, answered int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, s := range t.spans {
		if s.End.IsZero() {
			inFlight++
		} else {
			answered++
		}
	}
	return inFlight, answered
}

// InFlightAt returns the writes that had arrived and were not yet answered
// at the instant at.
func (t *WriteTracker) InFlightAt(at time.Time) []Span {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Span
	for _, s := range t.spans {
		if !s.Start.After(at) && (s.End.IsZero() || s.End.After(at)) {
			out = append(out, s)
		}
	}
	return out
}

// Abandoned returns the writes finished after their client had gone.
func (t *WriteTracker) Abandoned() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.spans {
		if s.Abandoned {
			n++
		}
	}
	return n
}

// WaitIdle waits until no write is in flight, at most limit.
func (t *WriteTracker) WaitIdle(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if n, _ := t.Counts(); n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("writes still in flight after %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ClosedAddr is a loopback address where nothing listens: a base URL that
// refuses every connection. Its port is below 1024, out of the range the
// system hands to listeners on port 0, so no other test's server can take
// it while the test runs.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	for port := 1; port < 1024; port++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			return addr
		}
	}
	t.Fatal("no loopback port below 1024 refuses connections")
	return ""
}
