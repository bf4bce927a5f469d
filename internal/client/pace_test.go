package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// paceEnv is an emulator served over HTTP with one seeded fixture and
// the given rate limits.
type paceEnv struct {
	srv *emulator.Server
	url string
	fx  emulator.Fixture
}

func newPaceEnv(t *testing.T, limits emulator.Limits) *paceEnv {
	t.Helper()
	svc := testsupport.Start(t, testsupport.Options{Settings: func(s *emulator.Settings) { s.Limits = limits }})
	return &paceEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
}

// pacedClient is a client of baseURL, paced as every Client is,
// with tiny retry waits. Keep-alives are off so that net/http never resends
// a request on a reused connection by itself: every request the server
// sees went through the pacing.
func pacedClient(t *testing.T, baseURL, key string) *Client {
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

func (e *paceEnv) client(t *testing.T) *Client {
	return pacedClient(t, e.url, e.fx.APIKey)
}

func (e *paceEnv) create(ctx context.Context, c *Client, i int) error {
	_, err := c.CreateLink(ctx, CreateLinkInput{
		Destination: fmt.Sprintf("https://example.com/%d", i),
		DomainID:    e.fx.DomainID,
	})
	return err
}

// concurrencyWindow is the emulator's window in the tests of many
// concurrent requests. X-RateLimit-Reset counts whole seconds, rounded up,
// so the client learns a 1 s window from it; a slightly shorter window
// leaves slack for a loaded machine that holds a request back between the
// client's send and the emulator's count, and paces the client the same.
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

func TestPaceConcurrentCreatesStayWithinWriteLimit(t *testing.T) {
	t.Parallel()
	const n, limit = 25, 5
	e := newPaceEnv(t, emulator.Limits{Write: limit, Read: 1000, Window: emulator.Duration(concurrencyWindow)})
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

func TestPaceConcurrentListsStayWithinReadLimit(t *testing.T) {
	t.Parallel()
	const n, limit = 25, 5
	e := newPaceEnv(t, emulator.Limits{Write: 1000, Read: limit, Window: emulator.Duration(concurrencyWindow)})
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

func TestPaceReadsAndWritesAreBudgetedSeparately(t *testing.T) {
	t.Parallel()
	e := newPaceEnv(t, emulator.Limits{Write: 2, Read: 100, Window: emulator.Duration(time.Minute)})
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
	var past *WaitPastDeadlineError
	if err := e.create(wctx, c, 3); !errors.As(err, &past) || !past.Spent {
		t.Errorf("a third create: %v, want it held past its deadline by the spent window", err)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
}

// A request that the answers say the spent window holds past its
// deadline fails at once, unsent; one whose wait the caller cancels ends
// then, unsent too, and says so. Not even a POST is ambiguous.
func TestPaceWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	e := newPaceEnv(t, emulator.Limits{Write: 2, Read: 2, Window: emulator.Duration(time.Minute)})
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
	const deadline, prompt = 10 * time.Second, 3 * time.Second
	requests := []struct {
		method string
		send   func(context.Context) error
	}{
		{http.MethodPost, func(ctx context.Context) error { return e.create(ctx, c, 99) }},
		{http.MethodGet, func(ctx context.Context) error { _, err := c.ListLinks(ctx); return err }},
	}
	for _, r := range requests {
		t.Run(r.method+" past its deadline", func(t *testing.T) {
			short, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			err := r.send(short)
			if d := time.Since(start); d > prompt {
				t.Errorf("returned after %v, want at once: the window comes back after the deadline", d)
			}
			var past *WaitPastDeadlineError
			if !errors.As(err, &past) || !past.Spent || past.Wait < deadline {
				t.Fatalf("err = %v, want a wait past the deadline for the spent window", err)
			}
			if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrAmbiguous) {
				t.Errorf("err = %v: a request that never left is not sent, and not ambiguous", err)
			}
		})
		t.Run(r.method+" cancelled", func(t *testing.T) {
			cancelled, cancel := context.WithCancel(ctx)
			time.AfterFunc(200*time.Millisecond, cancel)
			start := time.Now()
			err := r.send(cancelled)
			if d := time.Since(start); d > prompt {
				t.Errorf("returned after %v, want about 200ms", d)
			}
			if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrNotSent) || errors.Is(err, ErrAmbiguous) {
				t.Fatalf("err = %v, want context.Canceled, unsent", err)
			}
		})
	}
	if got := e.srv.Count(http.MethodPost, "/api/links"); got != 2 {
		t.Errorf("the emulator saw %d creates, want 2: no other may be sent", got)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links"); got != 2 {
		t.Errorf("the emulator saw %d lists, want 2: no other may be sent", got)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 0 {
		t.Errorf("the emulator answered %d requests 429, want 0", got)
	}
}

// A request whose deadline passes while it waits for the answer to one
// already sent ends then, unsent, and its error names it once, not also
// by net/http's method and URL.
func TestPaceWaitForAnAnswerEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 2)
	svc := testsupport.Start(t, testsupport.Options{
		Settings: func(s *emulator.Settings) {
			s.Limits = emulator.Limits{Write: 10, Read: 10, Window: emulator.Duration(time.Minute)}
			s.Filter.Delay = emulator.Duration(2 * time.Second)
		},
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				next.ServeHTTP(w, r)
			})
		},
	})
	e := &paceEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
	c := e.client(t)
	first := make(chan error, 1)
	go func() { first <- e.create(context.Background(), c, 1) }()
	<-arrived // the first create is on its way: the epoch waits for its answer
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := e.create(short, c, 2)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotSent) || errors.Is(err, ErrAmbiguous) {
		t.Fatalf("err = %v, want the deadline, unsent", err)
	}
	if strings.Contains(err.Error(), "Post ") {
		t.Errorf("err = %q names the request twice", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first create: %v", err)
	}
}

// A change that reached the service (answered 502) and whose retry is
// then held past its deadline by a spent window may have been made: its
// error says so (ErrUnanswered), not that nothing was sent.
func TestPaceRetryGivenUpAfterAnAnswerKeepsItsDoubt(t *testing.T) {
	t.Parallel()
	var patches atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		patches.Add(1)
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "60")
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(ts.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := pacedClient(t, ts.URL, testKey).ChangeDestination(ctx, "l-1", ChangeDestinationInput{Destination: "https://example.com/b"})
	var past *WaitPastDeadlineError
	if !errors.As(err, &past) || !past.Spent || !errors.Is(err, ErrUnanswered) {
		t.Fatalf("err = %v, want a retry held past the deadline, the change unanswered", err)
	}
	if n := patches.Load(); n != 1 {
		t.Errorf("the service saw %d changes, want the one answered 502", n)
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

func TestPaceUnmeteredServerIsNotSerialised(t *testing.T) {
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
	c := pacedClient(t, srv.URL, testKey)
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

func (l *arrivalLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.arrivals = append(l.arrivals, time.Now())
	l.mu.Unlock()
	l.next.ServeHTTP(w, r)
	l.mu.Lock()
	// Only a 429 carries Retry-After, here.
	if w.Header().Get("Retry-After") != "" && l.refused.IsZero() {
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

func TestPace429HoldsBackOtherRequests(t *testing.T) {
	t.Parallel()
	t.Run("emulator", func(t *testing.T) {
		t.Parallel()
		e := newPaceEnv(t, emulator.DefaultSettings().Limits)
		e.srv.Burst429(1, 1)
		log := &arrivalLog{next: e.srv}
		ts := httptest.NewServer(log)
		t.Cleanup(ts.Close)
		checkHeldBack(t, pacedClient(t, ts.URL, e.fx.APIKey), log)
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
		checkHeldBack(t, pacedClient(t, ts.URL, testKey), log)
	})
}

// A Retry-After of 0 is a wait under a second rounded down (rounded up, it
// is a second at least): the client waits that second, not the window.
func TestPaceRetryAfterZeroWaitsASecondNotTheWindow(t *testing.T) {
	t.Parallel()
	// The emulator's window is a minute: a client that waited for it
	// instead of Retry-After: 0 would take that long.
	e := newPaceEnv(t, emulator.DefaultSettings().Limits)
	e.srv.Burst429(2, 0)
	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	checkNoErrors(t, runConcurrently(3, func(int) error {
		_, err := c.ListLinks(ctx)
		return err
	}))
	if d := time.Since(start); d < time.Second || d > 5*time.Second {
		t.Errorf("the lists took %v after Retry-After: 0; want the second it may have lost, not the window", d)
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
func TestPaceRecoversWhenAWindowsRequestsAllFail(t *testing.T) {
	t.Parallel()
	e := newPaceEnv(t, emulator.Limits{Write: 100, Read: 1, Window: emulator.Duration(time.Second)})
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

// An error page without rate-limit headers (a gateway's 502, a load
// balancer's 408, a proxy's 400) does not mean the service stopped
// metering: the spent budget still holds.
func TestPaceHeaderlessErrorPageKeepsTheBudget(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusBadGateway, http.StatusRequestTimeout, http.StatusBadRequest} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
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
					w.WriteHeader(status)
					fmt.Fprintf(w, "<html><body>%d</body></html>", status)
				}
			}))
			t.Cleanup(ts.Close)
			c := pacedClient(t, ts.URL, testKey)
			if _, err := c.ListLinks(context.Background()); err != nil {
				t.Fatal(err)
			}
			// The second list spends the budget and is answered with the
			// page; what follows must wait for the window instead of being sent.
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, _ = c.ListLinks(ctx)
			_, err := c.ListLinks(ctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("err = %v, want context.DeadlineExceeded while waiting for the window", err)
			}
			if got := calls.Load(); got != 2 {
				t.Errorf("the server saw %d requests, want 2", got)
			}
		})
	}
}

// Two Clients on one key (two Terraform runs) share its write allowance:
// every link is created once, and few requests are refused.
func TestPaceTwoClientsShareAKey(t *testing.T) {
	t.Parallel()
	const each = 15
	e := newPaceEnv(t, emulator.Limits{Write: 10, Read: 1000, Window: emulator.Duration(time.Second)})
	clients := []*Client{e.client(t), e.client(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	checkNoErrors(t, runConcurrently(2*each, func(i int) error { return e.create(ctx, clients[i%2], i) }))
	if got := len(e.srv.Links(e.fx.AccountID)); got != 2*each {
		t.Errorf("the account has %d links, want %d", got, 2*each)
	}
	// The retries after a 429 make every create succeed; the pacing
	// keeps them few (the simulation measures how few).
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got > each/2 {
		t.Errorf("the emulator answered %d requests 429, want at most %d", got, each/2)
	}
}

// The spec says "seconds" and "requests remaining", not which way a
// service rounds or whether it counts the request it answers. Each case
// is a service that answers otherwise than the emulator by default; the
// client learns it from an answer that could not be so otherwise, and
// every create succeeds with at most maxRefused answered 429.
//   - Seconds truncated: Retry-After: 0 for the last second of a window, a
//     Reset up to a second early. Read as rounded up, the retries went at
//     once and were refused until they ran out.
//   - A count taken before the request: the whole limit on a fresh
//     window, one more than remains after. Read as said, the last request
//     of every window was refused.
func TestPaceHeadersSaidOtherwise(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		n, maxRefused int
		limits        emulator.Limits
	}{
		{"seconds rounded down", 15, 2, emulator.Limits{Write: 5, Read: 1000, Window: emulator.Duration(2 * time.Second), Rounding: emulator.RoundDown}},
		{"a count taken before the request", 25, 0, emulator.Limits{Write: 5, Read: 1000, Window: emulator.Duration(concurrencyWindow), Remaining: emulator.RemainingBefore}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newPaceEnv(t, c.limits)
			client := e.client(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			checkNoErrors(t, runConcurrently(c.n, func(i int) error { return e.create(ctx, client, i) }))
			if got := len(e.srv.Links(e.fx.AccountID)); got != c.n {
				t.Errorf("the account has %d links, want %d", got, c.n)
			}
			if got := e.srv.CountStatus(http.StatusTooManyRequests); got > c.maxRefused {
				t.Errorf("the emulator answered %d requests 429, want at most %d", got, c.maxRefused)
			}
		})
	}
}

// MaxRateShare leaves the rest of each window to others: at half of 10 a
// minute, the sixth create waits.
func TestPaceKeepsToItsCappedPart(t *testing.T) {
	t.Parallel()
	e := newPaceEnv(t, emulator.Limits{Write: 10, Read: 1000, Window: emulator.Duration(time.Minute)})
	c, err := New(Config{BaseURL: e.url, APIKey: e.fx.APIKey, MaxRateShare: 0.5, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	errs := runConcurrently(6, func(i int) error { return e.create(ctx, c, i) })
	waited := 0
	for _, err := range errs {
		if errors.Is(err, context.DeadlineExceeded) && errors.Is(err, ErrNotSent) {
			waited++
		} else if err != nil {
			t.Errorf("create: %v", err)
		}
	}
	if got := e.srv.Count(http.MethodPost, "/api/links"); got != 5 || waited != 1 {
		t.Errorf("the emulator saw %d creates and %d waited, want 5 and 1", got, waited)
	}
}

// Headers no service means (more remaining than the limit, a reset years
// away) do not hold requests back for ever.
func TestPaceGarbageHeadersDoNotStall(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "10")
		w.Header().Set("X-RateLimit-Remaining", "5000")
		w.Header().Set("X-RateLimit-Reset", "315360000")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	}))
	t.Cleanup(ts.Close)
	c := pacedClient(t, ts.URL, testKey)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	checkNoErrors(t, runConcurrently(30, func(int) error {
		_, err := c.ListLinks(ctx)
		return err
	}))
}

// Requests waiting for the rate limit go in the order they came to it: the
// create that has waited longest is sent first, so that no link of a run
// waits behind ones that came later (its wait counts against its timeout).
func TestPaceServesWaitingRequestsInOrder(t *testing.T) {
	t.Parallel()
	const n = 6
	// The client learns a 1 s window from X-RateLimit-Reset; a window of
	// 400 ms leaves 600 ms for a loaded machine to hold a request back
	// between the client's send and the emulator's count. Past that the
	// request is refused, and a later one may go while it waits out its
	// Retry-After: the order under test is the queue's, without refusals.
	e := newPaceEnv(t, emulator.Limits{Write: 1, Read: 1000, Window: emulator.Duration(400 * time.Millisecond)})
	c := e.client(t)
	writes := c.http.Transport.(*paced).write
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Each create starts once the ones before it have their places in the
	// queue: they come to the pacer in the order of i, however loaded the
	// machine (a sleep between them would not make sure of it).
	checkNoErrors(t, runConcurrently(n, func(i int) error {
		for writes.placesGiven() < uint64(i) {
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for %d queue places: %w", i, ctx.Err())
			}
			time.Sleep(time.Millisecond)
		}
		return e.create(ctx, c, i)
	}))
	var order []string
	links := e.srv.Links(e.fx.AccountID)
	slices.SortFunc(links, func(a, b emulator.Link) int { return a.CreatedAt.Compare(b.CreatedAt) })
	for _, l := range links {
		order = append(order, strings.TrimPrefix(l.Destination, "https://example.com/"))
	}
	if got, want := strings.Join(order, " "), "0 1 2 3 4 5"; got != want {
		t.Errorf("created in the order %s, want %s", got, want)
	}
}

// placesGiven is how many queue places c has given.
func (c *classPace) placesGiven() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.issued
}

// A call keeps its place in the queue across its attempts: retried after
// a 429, it goes before the requests that came to the pacer after it did.
func TestPaceQueuePlaceIsKeptAcrossAttempts(t *testing.T) {
	c := newPaced(nil, systemClock{}, 1).write
	first, later := withQueuePlace(context.Background()), withQueuePlace(context.Background())
	c.leave(c.join(first)) // its first attempt went, and was refused
	c.join(later)
	c.join(context.Background()) // a request from outside a call: last
	retry := c.join(first)
	if c.queue[0] != retry || len(c.queue) != 3 {
		t.Fatalf("queue %v; want the retried call first of 3", c.queue)
	}
}
