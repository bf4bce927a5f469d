package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"

	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
)

// throttleEnv is an emulator served over HTTP with one seeded fixture and
// the given rate limits.
type throttleEnv struct {
	srv *emulator.Server
	url string
	fx  emulator.Fixture
}

func newThrottleEnv(t *testing.T, limits emulator.Limits) *throttleEnv {
	t.Helper()
	svc := testsupport.Start(t, testsupport.Options{Settings: func(s *emulator.Settings) { s.Limits = limits }})
	return &throttleEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
}

// throttleClient is a client of baseURL, throttled as every Client is,
// with tiny retry waits. Keep-alives are off so that net/http never resends
// a request on a reused connection by itself: every request the server
// sees went through the throttle.
func throttleClient(t *testing.T, baseURL, key string) *Client {
	t.Helper()
	c, err := New(Config{
		BaseURL:      baseURL,
		APIKey:       key,
		HTTPClient:   &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func (e *throttleEnv) client(t *testing.T) *Client {
	return throttleClient(t, e.url, e.fx.APIKey)
}

func (e *throttleEnv) create(ctx context.Context, c *Client, i int) error {
	_, err := c.CreateLink(ctx, CreateLinkInput{
		Destination: fmt.Sprintf("https://example.com/%d", i),
		DomainID:    e.fx.DomainID,
	})
	return err
}

// concurrencyWindow is the emulator's window in the tests of many
// concurrent requests. X-RateLimit-Reset counts whole seconds, rounded up,
// so the client learns a 1 s window from it and turns its own window
// ThrottleMargin after that. With an emulator window of exactly 1 s, that
// margin alone would have to absorb the time between the client's send and
// the emulator's count, which a loaded machine can stretch beyond it; a
// slightly shorter window leaves slack for that and paces the client the
// same, one batch per second and a margin.
const concurrencyWindow = 800 * time.Millisecond

// runConcurrently runs f(0) … f(n-1) in parallel and returns their errors.
func runConcurrently(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}

func checkNoErrors(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

func TestThrottleConcurrentCreatesStayWithinWriteLimit(t *testing.T) {
	t.Parallel()
	const n, limit = 25, 5
	e := newThrottleEnv(t, emulator.Limits{Write: limit, Read: 1000, Window: emulator.Duration(concurrencyWindow)})
	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	checkNoErrors(t, runConcurrently(n, func(i int) error { return e.create(ctx, c, i) }))
	elapsed := time.Since(start)

	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
	if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusCreated); got != n {
		t.Errorf("%d creates answered 201, want %d", got, n)
	}
	if got := len(e.srv.Links(e.fx.AccountID)); got != n {
		t.Errorf("the account has %d links, want %d", got, n)
	}
	// n requests at limit per window need at least n/limit-1 whole windows.
	if floor := time.Duration(n/limit-1) * concurrencyWindow; elapsed < floor {
		t.Errorf("%d creates took %v; the limit allows no less than %v", n, elapsed, floor)
	}
}

func TestThrottleConcurrentListsStayWithinReadLimit(t *testing.T) {
	t.Parallel()
	const n, limit = 25, 5
	e := newThrottleEnv(t, emulator.Limits{Write: 1000, Read: limit, Window: emulator.Duration(concurrencyWindow)})
	if _, err := e.srv.SeedLinks(e.fx.DomainID, "seed", 3); err != nil {
		t.Fatal(err)
	}
	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	checkNoErrors(t, runConcurrently(n, func(int) error {
		links, err := c.ListLinks(ctx)
		if err == nil && links.Len() != 3 {
			err = fmt.Errorf("listed %d links, want 3", links.Len())
		}
		return err
	}))
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links", http.StatusOK); got != n {
		t.Errorf("%d lists answered 200, want %d", got, n)
	}
}

func TestThrottleReadsAndWritesAreBudgetedSeparately(t *testing.T) {
	t.Parallel()
	e := newThrottleEnv(t, emulator.Limits{Write: 2, Read: 100, Window: emulator.Duration(time.Minute)})
	c := e.client(t)
	ctx := context.Background()
	for i := range 2 {
		if err := e.create(ctx, c, i); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	// The write budget is spent for a minute; a list must not wait for it.
	listCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	links, err := c.ListLinks(listCtx)
	if err != nil {
		t.Fatalf("ListLinks with the write budget spent: %v", err)
	}
	if links.Len() != 2 {
		t.Errorf("listed %d links, want 2", links.Len())
	}
	// And the write budget is still spent.
	wctx, wcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer wcancel()
	if err := e.create(wctx, c, 3); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a third create: %v, want it to wait for the window (context.DeadlineExceeded)", err)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
}

func TestThrottleWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	e := newThrottleEnv(t, emulator.Limits{Write: 2, Read: 2, Window: emulator.Duration(time.Minute)})
	c := e.client(t)
	ctx := context.Background()
	for i := range 2 {
		if err := e.create(ctx, c, i); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
		if _, err := c.ListLinks(ctx); err != nil {
			t.Fatalf("list %d: %v", i, err)
		}
	}
	// The window is a minute; returning within a few seconds is prompt.
	const deadline, prompt = 200 * time.Millisecond, 3 * time.Second

	t.Run("POST", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		start := time.Now()
		err := e.create(short, c, 99)
		if d := time.Since(start); d > prompt {
			t.Errorf("the create returned after %v, want about %v", d, deadline)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if errors.Is(err, ErrAmbiguous) {
			t.Errorf("err = %v: a POST that never left is not ambiguous", err)
		}
		if got := e.srv.Count(http.MethodPost, "/api/links"); got != 2 {
			t.Errorf("the emulator saw %d creates, want 2: the third must not be sent", got)
		}
	})
	t.Run("GET", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		start := time.Now()
		_, err := c.ListLinks(short)
		if d := time.Since(start); d > prompt {
			t.Errorf("the list returned after %v, want about %v", d, deadline)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if got := e.srv.Count(http.MethodGet, "/api/links"); got != 2 {
			t.Errorf("the emulator saw %d lists, want 2: the third must not be sent", got)
		}
	})
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
}

// barrier lets requests through once n of them are in flight together, or
// after a timeout; it records the most it saw at once.
type barrier struct {
	n        int
	mu       sync.Mutex
	inflight int
	most     int
	open     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait(timeout time.Duration) {
	b.mu.Lock()
	b.inflight++
	b.most = max(b.most, b.inflight)
	if b.inflight == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
	case <-time.After(timeout):
	}
	b.mu.Lock()
	b.inflight--
	b.mu.Unlock()
}

func (b *barrier) max() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.most
}

func TestThrottleUnmeteredServerIsNotSerialised(t *testing.T) {
	t.Parallel()
	const n = 5
	var warm atomic.Bool
	bar := newBarrier(n)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if warm.Load() {
			bar.wait(3 * time.Second)
		}
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, linkJSON)
			return
		}
		fmt.Fprint(w, "[]")
	}))
	t.Cleanup(srv.Close)
	c := throttleClient(t, srv.URL, testKey)
	ctx := context.Background()

	// The first request of each class learns that the service meters
	// nothing; after it, nothing is held back.
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://example.com/a", DomainID: "d-1"}); err != nil {
		t.Fatal(err)
	}
	warm.Store(true)

	checkNoErrors(t, runConcurrently(n, func(i int) error {
		if i%2 == 0 {
			_, err := c.ListLinks(ctx)
			return err
		}
		_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://example.com/a", DomainID: "d-1"})
		return err
	}))
	if got := bar.max(); got != n {
		t.Errorf("the server saw at most %d requests at once, want %d: they were held back", got, n)
	}
}

// await polls cond until it holds or a few seconds pass.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// arrivalLog wraps a handler, noting when each request arrived and when
// the first 429 was answered.
type arrivalLog struct {
	next     http.Handler
	mu       sync.Mutex
	arrivals []time.Time
	refused  time.Time
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (l *arrivalLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.arrivals = append(l.arrivals, time.Now())
	l.mu.Unlock()
	sw := &statusWriter{ResponseWriter: w}
	l.next.ServeHTTP(sw, r)
	l.mu.Lock()
	if sw.status == http.StatusTooManyRequests && l.refused.IsZero() {
		l.refused = time.Now() // before the client can have read the answer
	}
	l.mu.Unlock()
}

func (l *arrivalLog) snapshot() ([]time.Time, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Time(nil), l.arrivals...), l.refused
}

// checkHeldBack runs a first list that log's server answers 429 with
// Retry-After: 1, then, once it has been refused, a second list: neither
// the retry nor the second list may arrive before the second has passed.
func checkHeldBack(t *testing.T, c *Client, log *arrivalLog) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := c.ListLinks(ctx)
		first <- err
	}()
	await(t, "the 429", func() bool { _, refused := log.snapshot(); return !refused.IsZero() })
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatalf("second list: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first list: %v", err)
	}
	arrivals, refused := log.snapshot()
	if len(arrivals) != 3 {
		t.Fatalf("the server saw %d requests, want 3 (429, the retry, the second list)", len(arrivals))
	}
	for i, at := range arrivals[1:] {
		if wait := at.Sub(refused); wait < 950*time.Millisecond {
			t.Errorf("request %d arrived %v after the 429: Retry-After: 1 was not honoured", i+2, wait)
		}
	}
}

func TestThrottle429HoldsBackOtherRequests(t *testing.T) {
	t.Parallel()
	t.Run("emulator", func(t *testing.T) {
		t.Parallel()
		e := newThrottleEnv(t, emulator.DefaultSettings().Limits)
		e.srv.Burst429(1, 1)
		log := &arrivalLog{next: e.srv}
		ts := httptest.NewServer(log)
		t.Cleanup(ts.Close)
		checkHeldBack(t, throttleClient(t, ts.URL, e.fx.APIKey), log)
	})
	// A 429 without any X-RateLimit-* header, as a gateway in front of the
	// service may answer: Retry-After alone must hold the others back.
	t.Run("Retry-After only", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		log := &arrivalLog{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if calls.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":"rate_limited"}`)
				return
			}
			fmt.Fprint(w, "[]")
		})}
		ts := httptest.NewServer(log)
		t.Cleanup(ts.Close)
		checkHeldBack(t, throttleClient(t, ts.URL, testKey), log)
	})
}

func TestThrottleRetryAfterZeroDoesNotWait(t *testing.T) {
	t.Parallel()
	// The emulator's window is a minute: a client that waited for it
	// instead of Retry-After: 0 would take that long.
	e := newThrottleEnv(t, emulator.DefaultSettings().Limits)
	e.srv.Burst429(2, 0)
	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	checkNoErrors(t, runConcurrently(3, func(int) error {
		_, err := c.ListLinks(ctx)
		return err
	}))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the lists took %v after Retry-After: 0", d)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 2 {
		t.Errorf("%d answers 429, want the 2 injected", got)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links", http.StatusOK); got != 3 {
		t.Errorf("%d lists answered 200, want 3", got)
	}
}

// A window whose every request fails on its way (the service restarting,
// say) leaves no answer to say when it turns: the budget must be learnt
// again, not waited on for ever.
func TestThrottleRecoversWhenAWindowsRequestsAllFail(t *testing.T) {
	t.Parallel()
	e := newThrottleEnv(t, emulator.Limits{Write: 100, Read: 1, Window: emulator.Duration(time.Second)})
	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatal(err)
	}
	// The next list waits for the window, then its connection is closed
	// (after the emulator counted it); its retry must still go out.
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultClose, Method: http.MethodGet})
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatalf("list after a window whose request failed: %v", err)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links", http.StatusOK); got != 2 {
		t.Errorf("%d lists answered 200, want 2", got)
	}
}

// An error page without rate-limit headers (a gateway's 502) does not
// mean the service stopped metering: the spent budget still holds.
func TestThrottleHeaderlessErrorPageKeepsTheBudget(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("X-RateLimit-Limit", "2")
			w.Header().Set("X-RateLimit-Remaining", "1")
			w.Header().Set("X-RateLimit-Reset", "60")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "[]")
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "<html><body>502 Bad Gateway</body></html>")
		}
	}))
	t.Cleanup(ts.Close)
	c := throttleClient(t, ts.URL, testKey)
	if _, err := c.ListLinks(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The second list spends the budget and is answered 502; its retries
	// must wait for the window instead of being sent.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.ListLinks(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded while waiting for the window", err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("the server saw %d requests, want 2", got)
	}
}

// --- the budget alone, on a fake clock ---

// rlAnswer is a response with the given status and headers (name, value, …).
func rlAnswer(status int, kv ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &http.Response{StatusCode: status, Header: h}
}

// metered is a 200 with the three X-RateLimit-* headers.
func metered(limit, remaining int, reset string) *http.Response {
	return rlAnswer(http.StatusOK, "X-RateLimit-Limit", strconv.Itoa(limit),
		"X-RateLimit-Remaining", strconv.Itoa(remaining), "X-RateLimit-Reset", reset)
}

// tryAcquire acquires, giving up after d; ok is false when it had to wait.
func tryAcquire(t *testing.T, b *budget, d time.Duration) (ticket, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tk, err := b.acquire(ctx)
	if err != nil {
		var waiting *throttleWaitError
		if !errors.As(err, &waiting) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("acquire: %v, want a throttleWaitError wrapping context.DeadlineExceeded", err)
		}
		return ticket{}, false
	}
	return tk, true
}

// mustAcquire acquires without waiting.
func mustAcquire(t *testing.T, b *budget) ticket {
	t.Helper()
	tk, ok := tryAcquire(t, b, time.Second)
	if !ok {
		t.Fatal("acquire waited, want the budget to allow a request")
	}
	return tk
}

// mustWait checks that acquire waits.
func mustWait(t *testing.T, b *budget) {
	t.Helper()
	if _, ok := tryAcquire(t, b, 20*time.Millisecond); ok {
		t.Fatal("acquire did not wait, want the budget spent")
	}
}

func remainingOf(b *budget) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.remaining
}

// learnt is a budget whose probe was answered Limit limit, Remaining
// limit-1, Reset reset seconds.
func learnt(t *testing.T, clk *testclock.Clock, limit int, reset string) *budget {
	t.Helper()
	return learntCapped(t, clk, limit, reset, 1)
}

// learntCapped is learnt, with a cap on this client's part of each window.
func learntCapped(t *testing.T, clk *testclock.Clock, limit int, reset string, share float64) *budget {
	t.Helper()
	b := newBudget(ClassWrite, clk.Now, newWindowCap(share))
	tk := mustAcquire(t, b)
	if !tk.probe {
		t.Fatal("the first request of an unknown budget is not a probe")
	}
	b.observe(tk, metered(limit, limit-1, reset))
	if got := remainingOf(b); got != limit-1 {
		t.Fatalf("remaining after the probe = %d, want %d", got, limit-1)
	}
	// Past the first window, in which a client learns one request at a
	// time whether it is alone (see keyShare): these tests are about the
	// budget, alone.
	b.pace.windows = 1
	return b
}

func TestBudgetProbeLetsOneRequestThrough(t *testing.T) {
	clk := testclock.New()
	b := newBudget(ClassRead, clk.Now, newWindowCap(1))
	probe := mustAcquire(t, b)
	if !probe.probe {
		t.Fatal("the first request is not a probe")
	}
	mustWait(t, b)

	// Waiters are released by the probe's answer, not before, and in the
	// first window one at a time (see keyShare): each answer releases the
	// next until learningTime has passed without a sign of anybody else.
	tickets := make(chan ticket, 3)
	for range 3 {
		go func() {
			tk, err := b.acquire(context.Background())
			if err != nil {
				t.Error(err)
			}
			if tk.probe {
				t.Error("a second probe went out while the first was unanswered")
			}
			tickets <- tk
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if got := len(tickets); got != 0 {
		t.Fatalf("%d requests went out before the probe's answer", got)
	}
	b.observe(probe, metered(10, 9, "1"))
	for remaining := 8; remaining >= 7; remaining-- {
		tk := <-tickets
		time.Sleep(20 * time.Millisecond)
		if got := len(tickets); got != 0 {
			t.Fatalf("%d more requests went out before the answer, while learning", got)
		}
		b.observe(tk, metered(10, remaining, "1"))
	}
	<-tickets
	if got := remainingOf(b); got != 6 {
		t.Errorf("remaining = %d, want 6", got)
	}
}

func TestBudgetTransportErrorOnProbeReleasesNextProbe(t *testing.T) {
	clk := testclock.New()
	b := newBudget(ClassWrite, clk.Now, newWindowCap(1))
	first := mustAcquire(t, b)
	next := make(chan ticket, 1)
	go func() {
		tk, err := b.acquire(context.Background())
		if err != nil {
			t.Error(err)
		}
		next <- tk
	}()
	time.Sleep(10 * time.Millisecond)
	select {
	case <-next:
		t.Fatal("a second request went out while the probe was unanswered")
	default:
	}
	b.observe(first, nil) // the probe failed on its way
	select {
	case tk := <-next:
		if !tk.probe {
			t.Error("the request after a failed probe is not itself a probe")
		}
	case <-time.After(time.Second):
		t.Fatal("a failed probe did not release the next one")
	}
	mustWait(t, b) // still one probe at a time
}

func TestBudgetSpendsAndTurnsWindow(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 3, "1")
	mustAcquire(t, b)
	mustAcquire(t, b)
	mustWait(t, b)
	// The window turns at the reset plus the margin, not before.
	clk.Advance(time.Second)
	mustWait(t, b)
	clk.Advance(ThrottleMargin)
	for range 3 {
		if tk := mustAcquire(t, b); tk.probe {
			t.Error("a known budget sent a probe")
		}
	}
	mustWait(t, b)
}

func TestBudgetKeepsToItsCappedPartOfEachWindow(t *testing.T) {
	clk := testclock.New()
	b := learntCapped(t, clk, 10, "1", 0.5) // the probe took 1 of 5
	tks := []ticket{mustAcquire(t, b), mustAcquire(t, b), mustAcquire(t, b), mustAcquire(t, b)}
	mustWait(t, b) // 5 remain on the service: they are the others'
	// A 429 is not counted by the service, so it does not count against
	// the cap either; but it closes the window until the service says.
	b.observe(tks[0], rlAnswer(http.StatusTooManyRequests, "Retry-After", "1"))
	mustWait(t, b)
	clk.Advance(time.Second + ThrottleMargin)
	// The refusal came before we had sent the allowance: others use the
	// key, so requests take turns, each after the answer to the last.
	for i := range 5 {
		b.observe(mustAcquire(t, b), metered(10, 9-i, "1"))
	}
	mustWait(t, b)
}

// Headers that lie: what no service means is not believed, and a lie never
// blocks the client for longer than the truth would.
func TestBudgetDoesNotBelieveImpossibleHeaders(t *testing.T) {
	t.Run("negative remaining is unknown", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "30")
		b.observe(mustAcquire(t, b), metered(10, -3, "30"))
		if got := remainingOf(b); got != 8 {
			t.Errorf("remaining = %d after the service said -3, want our own count 8", got)
		}
	})
	t.Run("remaining above the limit is the limit", func(t *testing.T) {
		got := believable(RateLimit{Limit: 10, Remaining: 5000, Reset: time.Second})
		if got.Remaining != 10 {
			t.Errorf("remaining = %d, want 10", got.Remaining)
		}
	})
	t.Run("an absurd reset is no reset", func(t *testing.T) {
		clk := testclock.New()
		b := newBudget(ClassWrite, clk.Now, newWindowCap(1))
		probe := mustAcquire(t, b)
		b.observe(probe, metered(2, 0, "99999999")) // three years
		b.mu.Lock()
		resetAt := b.resetAt
		b.mu.Unlock()
		if !resetAt.IsZero() {
			t.Fatalf("resetAt = %v, want the absurd reset ignored", resetAt)
		}
		// Spent, with no believable reset and nothing on its way: the
		// budget is learnt again rather than waited for.
		if tk := mustAcquire(t, b); !tk.probe {
			t.Error("want a probe to learn the budget again")
		}
	})
	t.Run("missing headers on a 429", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "30")
		b.observe(mustAcquire(t, b), rlAnswer(http.StatusTooManyRequests))
		mustWait(t, b)
		clk.Advance(29 * time.Second) // a bare 429 waits for the reset we know
		mustWait(t, b)
		clk.Advance(time.Second + ThrottleMargin)
		mustAcquire(t, b)
	})
}

// A window that turns before the reset we learnt (a service that restarted
// its counters, a reset rounded up): an answer with more remaining than
// the service already reported, and a reset well past ours, starts the new
// window at once instead of waiting for the old reset.
func TestBudgetFollowsAWindowThatTurnsEarly(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 10, "30")
	var tks []ticket
	for range 9 {
		tks = append(tks, mustAcquire(t, b))
	}
	b.observe(tks[0], metered(10, 0, "30"))
	mustWait(t, b)
	clk.Advance(5 * time.Second)
	// Answers overtaking each other are no turn: more remaining, but
	// within the window we know.
	b.observe(tks[1], metered(10, 3, "25"))
	mustWait(t, b)
	b.observe(tks[2], metered(10, 8, "60"))
	if got := remainingOf(b); got != 8 {
		t.Fatalf("remaining = %d after the window turned early, want 8", got)
	}
	mustAcquire(t, b)
}

// A busy machine can hold a request back between the throttle and the
// wire for longer than the margin: the request that should open the next
// window then arrives before the service's window has turned, and is
// refused with the old window's short reset. The margin doubles, and
// shrinks back over the windows that follow.
func TestBudgetLearnsAWiderMarginWhenItTurnedTooSoon(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 2, "2")
	b.observe(mustAcquire(t, b), metered(2, 0, "2"))
	mustWait(t, b)
	clk.Advance(2*time.Second + ThrottleMargin)
	tk := mustAcquire(t, b) // we turned; the service has not
	b.observe(tk, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Limit", "2",
		"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1", "Retry-After", "1"))
	marginOf := func() time.Duration {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.margin
	}
	if got := marginOf(); got != 2*ThrottleMargin {
		t.Fatalf("margin = %v after turning too soon, want %v", got, 2*ThrottleMargin)
	}
	// Refused at the start of the next window with its whole reset to go
	// (another client took it): no sign of an early turn, the margin only
	// shrinks by the eighth of a window that turned.
	clk.Advance(time.Second)
	tk = mustAcquire(t, b)
	b.observe(tk, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Limit", "2",
		"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2", "Retry-After", "2"))
	if got, want := marginOf(), 2*ThrottleMargin-2*ThrottleMargin/8; got != want {
		t.Fatalf("margin = %v after a refusal with the whole window to go, want %v", got, want)
	}
	for range 20 {
		clk.Advance(3 * time.Second)
		b.observe(mustAcquire(t, b), metered(2, 1, "2"))
	}
	if got := marginOf(); got != ThrottleMargin {
		t.Errorf("margin = %v after 20 quiet windows, want back at %v", got, ThrottleMargin)
	}
}

func TestBudgetOldWindowAnswerDoesNotShrinkNewWindow(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 5, "1")
	clk.Advance(500 * time.Millisecond)
	old := mustAcquire(t, b) // sent in the first window

	clk.Advance(time.Second) // past the reset and the margin
	cur := mustAcquire(t, b) // turns the window: 4 left
	if !old.sentAt.Before(cur.sentAt) {
		t.Fatal("fake clock did not move")
	}
	// The old request's answer says the old window is spent.
	b.observe(old, metered(5, 0, "1"))
	if got := remainingOf(b); got != 4 {
		t.Fatalf("remaining = %d after an answer from the old window, want 4", got)
	}
	b.mu.Lock()
	resetAt := b.resetAt
	b.mu.Unlock()
	if !resetAt.IsZero() {
		t.Errorf("resetAt = %v, learnt from the old window's answer", resetAt)
	}
	for range 4 {
		mustAcquire(t, b)
	}
	mustWait(t, b)
	// An answer from this window is learnt.
	b.observe(cur, metered(5, 4, "1"))
	b.mu.Lock()
	resetAt = b.resetAt
	b.mu.Unlock()
	if want := cur.sentAt.Add(time.Second + ThrottleMargin); !resetAt.Equal(want) {
		t.Errorf("resetAt = %v, want %v", resetAt, want)
	}
}

func TestBudgetTakesSmallerOfLocalAndServerRemaining(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 10, "30")
	tks := []ticket{mustAcquire(t, b), mustAcquire(t, b), mustAcquire(t, b)}
	if got := remainingOf(b); got != 6 {
		t.Fatalf("remaining = %d, want 6", got)
	}
	// The service counted only the first: ours, counting those on their
	// way, is smaller and stays.
	b.observe(tks[0], metered(10, 8, "30"))
	if got := remainingOf(b); got != 6 {
		t.Errorf("remaining = %d after the service said 8, want 6", got)
	}
	// Another user of the key spent more: the service's is smaller.
	b.observe(tks[1], metered(10, 2, "30"))
	if got := remainingOf(b); got != 2 {
		t.Errorf("remaining = %d after the service said 2, want 2", got)
	}
	// From now on our requests take turns with the other user's, one at
	// a time (see keyShare): none while one of ours is on its way.
	mustWait(t, b)
	b.observe(tks[2], metered(10, 2, "30"))
	mustAcquire(t, b)
	mustWait(t, b)
}

func TestBudgetResetIsTheEarliestLearnt(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 10, "5")
	start := clk.Now()
	tk := mustAcquire(t, b)
	b.observe(tk, metered(10, 8, "3")) // a later answer rounding to an earlier reset
	b.mu.Lock()
	resetAt := b.resetAt
	b.mu.Unlock()
	if want := start.Add(3*time.Second + ThrottleMargin); !resetAt.Equal(want) {
		t.Errorf("resetAt = %v, want %v", resetAt, want)
	}
	tk = mustAcquire(t, b)
	b.observe(tk, metered(10, 7, "9"))
	b.mu.Lock()
	later := b.resetAt
	b.mu.Unlock()
	if !later.Equal(resetAt) {
		t.Errorf("resetAt moved to %v by a later estimate, want it kept at %v", later, resetAt)
	}
}

func TestBudget429(t *testing.T) {
	t.Run("Retry-After beats the window", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "60")
		tk := mustAcquire(t, b)
		b.observe(tk, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Limit", "10",
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "60", "Retry-After", "2"))
		mustWait(t, b)
		clk.Advance(2 * time.Second)
		if tk := mustAcquire(t, b); tk.probe {
			t.Error("a known budget sent a probe")
		}
	})
	// Answers to requests sent before the refusal keep arriving; their
	// estimates of the window must not undercut the service's own word.
	t.Run("Retry-After is not undercut by later answers", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "1") // the window seems to turn at 1.15 s
		early, refused := mustAcquire(t, b), mustAcquire(t, b)
		clk.Advance(100 * time.Millisecond)
		b.observe(refused, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Limit", "10",
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1", "Retry-After", "3"))
		b.observe(early, metered(10, 7, "1"))
		clk.Advance(1500 * time.Millisecond)
		mustWait(t, b) // 1.6 s: past the estimate, not past Retry-After
		clk.Advance(1500 * time.Millisecond)
		mustAcquire(t, b) // 3.1 s
	})
	t.Run("without Retry-After", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "60")
		tk := mustAcquire(t, b)
		b.observe(tk, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Remaining", "3"))
		mustWait(t, b) // refused: nothing goes out, whatever Remaining says
	})
	t.Run("Retry-After: 0", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 10, "60")
		tk := mustAcquire(t, b)
		b.observe(tk, rlAnswer(http.StatusTooManyRequests, "X-RateLimit-Limit", "10",
			"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "60", "Retry-After", "0"))
		mustAcquire(t, b)
	})
	t.Run("Retry-After without X-RateLimit headers", func(t *testing.T) {
		clk := testclock.New()
		b := newBudget(ClassRead, clk.Now, newWindowCap(1))
		tk := mustAcquire(t, b)
		b.observe(tk, rlAnswer(http.StatusTooManyRequests, "Retry-After", "5"))
		mustWait(t, b)
		clk.Advance(5 * time.Second)
		if tk := mustAcquire(t, b); !tk.probe {
			t.Error("the budget is still unknown: want a probe")
		}
		mustWait(t, b)
	})
	t.Run("Retry-After: 0 without X-RateLimit headers", func(t *testing.T) {
		clk := testclock.New()
		b := newBudget(ClassRead, clk.Now, newWindowCap(1))
		b.observe(mustAcquire(t, b), rlAnswer(http.StatusTooManyRequests, "Retry-After", "0"))
		if tk := mustAcquire(t, b); !tk.probe {
			t.Error("the budget is still unknown: want a probe")
		}
	})
	t.Run("unmetered service", func(t *testing.T) {
		clk := testclock.New()
		b := newBudget(ClassRead, clk.Now, newWindowCap(1))
		b.observe(mustAcquire(t, b), rlAnswer(http.StatusOK))
		mustAcquire(t, b)
		tk := mustAcquire(t, b)
		b.observe(tk, rlAnswer(http.StatusTooManyRequests, "Retry-After", "5"))
		mustWait(t, b)
	})
}

func TestBudgetUnmetered(t *testing.T) {
	clk := testclock.New()
	b := newBudget(ClassRead, clk.Now, newWindowCap(1))
	b.observe(mustAcquire(t, b), rlAnswer(http.StatusOK))
	var tks []ticket
	for range 100 {
		tk := mustAcquire(t, b)
		if tk.probe {
			t.Fatal("an unmetered budget sent a probe")
		}
		tks = append(tks, tk)
	}
	// Headers appearing later are learnt.
	b.observe(tks[0], metered(5, 1, "10"))
	mustAcquire(t, b)
	mustWait(t, b)
}

func TestBudgetHeaderlessErrorDoesNotUnmeter(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 2, "60")
	tk := mustAcquire(t, b)
	mustWait(t, b)
	b.observe(tk, rlAnswer(http.StatusBadGateway))
	mustWait(t, b)
}

func TestBudgetSpentWithoutKnownReset(t *testing.T) {
	t.Run("no reset header", func(t *testing.T) {
		clk := testclock.New()
		b := newBudget(ClassRead, clk.Now, newWindowCap(1))
		b.observe(mustAcquire(t, b), rlAnswer(http.StatusOK, "X-RateLimit-Limit", "2", "X-RateLimit-Remaining", "1"))
		tk := mustAcquire(t, b)
		mustWait(t, b) // one is out and may yet say when the window turns
		b.observe(tk, rlAnswer(http.StatusOK, "X-RateLimit-Limit", "2", "X-RateLimit-Remaining", "0"))
		// Nothing out can tell: the next request learns the budget again.
		if tk := mustAcquire(t, b); !tk.probe {
			t.Error("want a probe")
		}
		mustWait(t, b)
	})
	t.Run("every request of the window failed", func(t *testing.T) {
		clk := testclock.New()
		b := learnt(t, clk, 2, "1")
		b.observe(mustAcquire(t, b), metered(2, 0, "1"))
		clk.Advance(2 * time.Second)
		a, c := mustAcquire(t, b), mustAcquire(t, b) // the window turned
		mustWait(t, b)
		b.observe(a, nil)
		mustWait(t, b) // c may yet answer
		b.observe(c, nil)
		if tk := mustAcquire(t, b); !tk.probe {
			t.Error("want a probe")
		}
	})
}

func TestBudgetWaitEndsWithContext(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 1, "60")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.acquire(ctx)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		var waiting *throttleWaitError
		if !errors.As(err, &waiting) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want a throttleWaitError wrapping context.Canceled", err)
		}
		if !neverSent(err) {
			t.Error("a request given up while waiting is not known never to have been sent")
		}
	case <-time.After(time.Second):
		t.Fatal("acquire did not return when its context was cancelled")
	}
}

func TestThrottleBudgetForMethod(t *testing.T) {
	th := newThrottle(nil, time.Now, 1)
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		if th.budgetFor(m) != th.read {
			t.Errorf("%s is not budgeted as a read", m)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete, http.MethodPut} {
		if th.budgetFor(m) != th.write {
			t.Errorf("%s is not budgeted as a write", m)
		}
	}
}

// The budget counts the requests waiting for it (keyShare.queued, which
// the tail try compares with a window's rest): a request leaves the count
// when it is sent and when it gives up waiting.
func TestBudgetCountsWaitingRequests(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 2, "30")
	mustAcquire(t, b)
	mustWait(t, b) // gives up after a while
	b.mu.Lock()
	queued := b.pace.queued
	b.mu.Unlock()
	if queued != 0 {
		t.Errorf("queued = %d after one request sent and one given up, want 0", queued)
	}
}

// A request a busy machine held back before the wire reached the service
// later than we sent it; its answer came as much later than our usual
// round trip. Its reset counts from its arrival, so the window's turn is
// reckoned from the send plus that delay: from the send alone, we would
// turn to the next window early and see its first request refused.
func TestBudgetResetOfADelayedRequestCountsTheDelay(t *testing.T) {
	clk := testclock.New()
	b := learnt(t, clk, 100, "3")
	for i := range 4 {
		tk := mustAcquire(t, b)
		clk.Advance(100 * time.Millisecond)
		b.observe(tk, metered(100, 98-i, "3"))
	}
	sent := clk.Now()
	tk := mustAcquire(t, b)
	clk.Advance(500 * time.Millisecond) // 400 ms more than usual
	b.observe(tk, metered(100, 90, "1"))
	b.mu.Lock()
	resetAt := b.resetAt
	b.mu.Unlock()
	if want := sent.Add(400*time.Millisecond + time.Second); resetAt.Before(want) {
		t.Errorf("window turns %v after the delayed request was sent, want at least %v (its delay and its reset)",
			resetAt.Sub(sent), want.Sub(sent))
	}
	if want := sent.Add(500*time.Millisecond + time.Second); resetAt.After(want) {
		t.Errorf("window turns %v after the delayed request was sent, want no later than its answer plus its reset", resetAt.Sub(sent))
	}
}
