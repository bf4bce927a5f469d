package client

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

func TestShouldRetry(t *testing.T) {
	transportErr := &url.Error{Op: "Get", URL: "http://h/api/links", Err: io.ErrUnexpectedEOF}
	outcomes := []struct {
		name   string
		status int // 0: transport error
	}{
		{"200", 200}, {"429", 429}, {"500", 500}, {"502", 502}, {"503", 503},
		{"400", 400}, {"404", 404}, {"transport error", 0}, {"cannot connect", -1},
		{"connection reset", -2}, // a net.OpError too, but after the request went
	}
	// want[method][outcome]
	want := map[string]map[string]bool{
		"GET":    {"200": false, "429": true, "500": true, "502": true, "503": true, "400": false, "404": false, "transport error": true, "cannot connect": true, "connection reset": true},
		"PATCH":  {"200": false, "429": true, "500": true, "502": true, "503": true, "400": false, "404": false, "transport error": true, "cannot connect": true, "connection reset": true},
		"DELETE": {"200": false, "429": true, "500": true, "502": true, "503": true, "400": false, "404": false, "transport error": true, "cannot connect": true, "connection reset": true},
		"POST":   {"200": false, "429": true, "500": false, "502": false, "503": false, "400": false, "404": false, "transport error": false, "cannot connect": true, "connection reset": false},
	}
	for method, byOutcome := range want {
		for _, o := range outcomes {
			t.Run(method+" "+o.name, func(t *testing.T) {
				var resp *http.Response
				var err error
				switch o.status {
				case 0:
					err = transportErr
				case -1:
					err = &url.Error{Op: "Post", URL: "https://h", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}
				case -2:
					err = &url.Error{Op: "Post", URL: "https://h", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
				default:
					resp = &http.Response{StatusCode: o.status, Header: http.Header{}}
				}
				got, reason := shouldRetry(method, resp, err)
				if got != byOutcome[o.name] {
					t.Fatalf("shouldRetry(%s, %s) = %v (%s), want %v", method, o.name, got, reason, byOutcome[o.name])
				}
				if (got || o.status >= 500 || o.status == 0) && reason == "" {
					t.Fatalf("no reason given")
				}
			})
		}
	}
}

func TestShouldRetryPermanentErrors(t *testing.T) {
	for name, err := range map[string]error{
		"unknown CA":        &url.Error{Op: "Get", URL: "https://h", Err: x509.UnknownAuthorityError{}},
		"wrong host name":   &url.Error{Op: "Get", URL: "https://h", Err: x509.HostnameError{Host: "h"}},
		"oversized success": fmt.Errorf("reading: %w", &bodyTooLargeError{limit: MaxJSONBodyBytes}),
	} {
		if got, _ := shouldRetry(http.MethodGet, nil, err); got {
			t.Errorf("%s: retried", name)
		}
	}
	if got, _ := shouldRetry(http.MethodGet, &http.Response{StatusCode: http.StatusNotImplemented}, nil); got {
		t.Error("501 Not Implemented retried")
	}
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestRetryWait(t *testing.T) {
	const lo, hi = 10 * time.Millisecond, 80 * time.Millisecond
	future := time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	epoch := strconv.FormatInt(time.Now().Add(30*time.Second).Unix(), 10)
	tests := []struct {
		name     string
		status   int // 0: no response
		header   http.Header
		min, max time.Duration
	}{
		{"429 Retry-After seconds", 429, header("Retry-After", "3"), 3 * time.Second, 3 * time.Second},
		{"429 Retry-After seconds beyond RetryWaitMax is honoured", 429, header("Retry-After", "120"), 2 * time.Minute, 2 * time.Minute},
		{"429 Retry-After HTTP date", 429, header("Retry-After", future), 3 * time.Second, 5 * time.Second},
		{"429 Retry-After date in the past", 429, header("Retry-After", past), 0, 0},
		{"429 Retry-After zero", 429, header("Retry-After", "0"), 0, 0},
		{"429 Retry-After wins over X-RateLimit-Reset", 429, header("Retry-After", "2", "X-RateLimit-Reset", "50"), 2 * time.Second, 2 * time.Second},
		{"429 falls back to X-RateLimit-Reset seconds", 429, header("X-RateLimit-Reset", "7"), 7 * time.Second, 7 * time.Second},
		{"429 X-RateLimit-Reset as a Unix time", 429, header("X-RateLimit-Reset", epoch), 28 * time.Second, 31 * time.Second},
		{"429 unreadable Retry-After falls back to the reset", 429, header("Retry-After", "soon", "X-RateLimit-Reset", "4"), 4 * time.Second, 4 * time.Second},
		{"429 without headers backs off", 429, header(), lo, lo},
		{"429 Retry-After beyond a day is not believed: the reset is", 429, header("Retry-After", "1767225600", "X-RateLimit-Reset", "4"), 4 * time.Second, 4 * time.Second},
		{"429 X-RateLimit-Reset beyond a day is not believed", 429, header("X-RateLimit-Reset", "90000"), lo, lo},
		{"503 Retry-After date beyond a day is not believed", 503, header("Retry-After", time.Now().Add(48*time.Hour).UTC().Format(http.TimeFormat)), lo, lo},
		{"503 Retry-After", 503, header("Retry-After", "2"), 2 * time.Second, 2 * time.Second},
		{"503 ignores X-RateLimit-Reset", 503, header("X-RateLimit-Reset", "50"), lo, lo},
		{"500 backs off", 500, header("Retry-After", "50"), lo, lo},
		{"transport error backs off", 0, nil, lo, lo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var resp *http.Response
			if tt.status != 0 {
				resp = &http.Response{StatusCode: tt.status, Header: tt.header}
			}
			got := retryWait(lo, hi, 0, resp)
			if got < tt.min || got > tt.max {
				t.Fatalf("retryWait = %v, want within [%v, %v]", got, tt.min, tt.max)
			}
		})
	}
}

func TestBackoffGrowsWithJitterWithinBounds(t *testing.T) {
	const lo, hi = 10 * time.Millisecond, 160 * time.Millisecond
	for attempt := 0; attempt < 70; attempt++ {
		ceiling := min(lo<<min(attempt, 20), hi)
		for range 50 {
			got := backoff(lo, hi, attempt)
			if got < max(ceiling/2, lo) || got > ceiling {
				t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, got, max(ceiling/2, lo), ceiling)
			}
		}
	}
	if got := backoff(0, 0, 3); got != 0 {
		t.Fatalf("zero bounds: %v", got)
	}
}

func TestRetriesAgainstServer(t *testing.T) {
	get := func(ctx context.Context, c *Client) error { _, err := c.ListLinks(ctx); return err }
	patch := func(ctx context.Context, c *Client) error {
		_, err := c.ChangeDestination(ctx, "l-1", ChangeDestinationInput{Destination: "https://e/"})
		return err
	}
	del := func(ctx context.Context, c *Client) error { return c.DeleteLink(ctx, "l-1") }
	post := func(ctx context.Context, c *Client) error {
		_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		return err
	}
	hangUp := step{hangUp: true}
	refused := step{status: 429, header: map[string]string{"Retry-After": "0"}}
	tests := []struct {
		name         string
		op           func(context.Context, *Client) error
		steps        []step
		maxRetries   int
		deadline     bool // the operation has one of its own, as creates, changes and deletes do (a read gets defaults.ReadTimeout)
		wantRequests int
		wantErr      bool
		// outcomeUnknown: the sentinel saying the service may have carried
		// the request out (nil: it did not, or the answer said what it did).
		outcomeUnknown error
	}{
		{"GET 503, 502, then 200", get, []step{{status: 503}, {status: 502}, {body: "[]"}}, 3, false, 3, false, nil},
		{"GET transport error, then 200", get, []step{hangUp, {body: "[]"}}, 3, false, 2, false, nil},
		{"GET transport errors exhaust retries", get, []step{hangUp}, 2, false, 3, true, nil},
		{"PATCH 500, then 200", patch, []step{{status: 500}, {body: linkJSON}}, 3, false, 2, false, nil},
		{"DELETE 502, then 204", del, []step{{status: 502}, {status: 204}}, 3, false, 2, false, nil},
		{"DELETE transport error, then 204", del, []step{hangUp, {status: 204}}, 3, false, 2, false, nil},
		{"POST 429, then 201", post, []step{refused, {status: 201, body: linkJSON}}, 3, false, 2, false, nil},
		{"POST 500 is not re-sent", post, []step{{status: 500}, {status: 201, body: linkJSON}}, 3, false, 1, true, ErrAmbiguous},
		{"POST transport error is not re-sent", post, []step{hangUp, {status: 201, body: linkJSON}}, 3, false, 1, true, ErrAmbiguous},
		{"GET 400 is not retried", get, []step{{status: 400}, {body: "[]"}}, 3, false, 1, true, nil},
		{"DELETE 404 is not retried", del, []step{{status: 404, body: `{"error":"not_found"}`}, {status: 204}}, 3, false, 1, true, nil},
		{"no retries at all", get, []step{{status: 503}, {body: "[]"}}, 0, false, 1, true, nil},
		{"GET 429s are not counted", get, []step{refused, refused, refused, {body: "[]"}}, 0, false, 4, false, nil},
		{"POST 429s are not counted", post, []step{refused, refused, refused, refused, {status: 201, body: linkJSON}}, 1, true, 5, false, nil},
		{"PATCH 429s are not counted", patch, []step{refused, refused, refused, {body: linkJSON}}, 0, true, 4, false, nil},
		{"PATCH 503s under a deadline exhaust retries", patch, []step{{status: 503}}, 2, true, 3, true, ErrUnanswered},
		{"DELETE 500s exhaust retries", del, []step{{status: 500}}, 1, true, 2, true, ErrUnanswered},
		{"DELETE 500, then 404: the first may have deleted it", del, []step{{status: 500}, {status: 404, body: `{"error":"not_found"}`}}, 3, true, 2, true, ErrUnanswered},
		{"PATCH 502, then 400: the first may have changed it", patch, []step{{status: 502}, {status: 400}}, 3, true, 2, true, ErrUnanswered},
		{"GET 503s exhaust retries", get, []step{{status: 503}}, 1, false, 2, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Minute)
				defer cancel()
			}
			s, srv := serve(t, tt.steps...)
			err := tt.op(ctx, newTestClient(t, srv, func(c *Config) { c.MaxRetries = new(tt.maxRetries) }))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v", err, tt.wantErr)
			}
			for _, unknown := range []error{ErrAmbiguous, ErrUnanswered} {
				if got, want := errors.Is(err, unknown), errors.Is(tt.outcomeUnknown, unknown); got != want {
					t.Errorf("errors.Is(err, %q) = %v, want %v (err %v)", unknown, got, want, err)
				}
			}
			if n := s.count(); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
		})
	}
}

// A 5xx sent once because max_retries is 0 says so, and only then: the
// user's message names the setting that kept it to one attempt.
func TestRetriesOff_isSaid(t *testing.T) {
	for _, tt := range []struct {
		maxRetries int
		steps      []step
		want       bool
	}{
		{0, []step{{status: 503}}, true},
		{1, []step{{status: 503}}, false},
		{0, []step{{status: 400}}, false},
		{0, []step{{status: 501}}, false}, // never retried: max_retries is not why
	} {
		_, srv := serve(t, tt.steps...)
		_, err := newTestClient(t, srv, func(c *Config) { c.MaxRetries = new(tt.maxRetries) }).ListLinks(context.Background())
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.RetriesOff != tt.want {
			t.Errorf("max_retries %d, status %d: %v; want RetriesOff %v", tt.maxRetries, tt.steps[0].status, err, tt.want)
		}
	}
}

func TestRetryAfterSecondsIsHonoured(t *testing.T) {
	s, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": "1"}}, step{body: "[]"})
	start := time.Now()
	if _, err := newTestClient(t, srv).ListLinks(context.Background()); err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed < 950*time.Millisecond {
		t.Fatalf("retried after %v, want about 1s", elapsed)
	}
	if s.count() != 2 {
		t.Fatalf("%d requests, want 2", s.count())
	}
}

// A stop (a cancelled context) ends the wait for a retry at once, and a
// refused request is not ambiguous: nothing was created.
func TestCancelEndsWaitPromptly(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			s, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": "60"}})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			err := sendOne(ctx, newTestClient(t, srv), method)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Fatalf("returned after %v", elapsed)
			}
			if !errors.Is(err, context.Canceled) || errors.Is(err, ErrAmbiguous) {
				t.Fatalf("error = %v, want context.Canceled, not ambiguous", err)
			}
			if s.count() != 1 {
				t.Fatalf("%d requests, want 1", s.count())
			}
		})
	}
}

// A 429 whose wait ends after the operation's deadline fails at once, not
// at the deadline, and says so; so does the next request of the class,
// which the same Retry-After holds, without being sent.
func TestWaitPastDeadlineFailsAtOnce(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			s, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": "60"}})
			c := newTestClient(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			refused, held := sendOne(ctx, c, method), sendOne(ctx, c, method)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Fatalf("returned after %v", elapsed)
			}
			var past *WaitPastDeadlineError
			if !errors.As(refused, &past) || past.Wait != time.Minute || past.Method != method || !errors.Is(refused, ErrRateLimited) || errors.Is(refused, ErrAmbiguous) {
				t.Fatalf("refused: error = %v, want a 429 that asked a wait past the deadline, not ambiguous", refused)
			}
			if !errors.As(held, &past) || past.Wait < 55*time.Second || !errors.Is(held, ErrNotSent) || errors.Is(held, ErrAmbiguous) {
				t.Fatalf("held: error = %v, want a wait past the deadline, not sent", held)
			}
			if strings.Contains(held.Error(), "attempts") {
				t.Fatalf("held: error = %v; the wait holds past the deadline whatever the back-off, so it is not tried again", held)
			}
			if s.count() != 1 {
				t.Fatalf("%d requests, want 1", s.count())
			}
		})
	}
}

// A service unavailable (503) that asks for a wait past the operation's
// deadline fails a read at once too, rather than at the deadline.
func TestUnavailablePastDeadlineFailsAtOnce(t *testing.T) {
	s, srv := serve(t, step{status: 503, header: map[string]string{"Retry-After": "3600"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := newTestClient(t, srv).ListLinks(ctx)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("returned after %v", elapsed)
	}
	var past *WaitPastDeadlineError
	if !errors.As(err, &past) || past.Wait != time.Hour || past.Status != 503 {
		t.Fatalf("error = %v, want a 503 that asked a wait past the deadline", err)
	}
	if s.count() != 1 {
		t.Fatalf("%d requests, want 1", s.count())
	}
}

// A read has no deadline of its own (Terraform gives reads no timeout):
// defaults.ReadTimeout bounds it, so a 429 that asks a wait past that
// fails at once, naming the wait, rather than hold the refresh for it.
func TestReadWithoutDeadlineIsBoundedByTheReadTimeout(t *testing.T) {
	wait := defaults.ReadTimeout + time.Hour
	_, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": strconv.Itoa(int(wait.Seconds()))}})
	c := newTestClient(t, srv)
	ctx, cancel := context.WithCancel(context.Background()) // ends the test's read, but is no deadline
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := c.ListLinks(ctx)
		done <- err
	}()
	select {
	case err := <-done:
		var past *WaitPastDeadlineError
		if !errors.As(err, &past) || past.Wait != wait {
			t.Fatalf("error = %v, want the %s wait named as past the read's bound", err, wait)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the read still waits after 5s; want it to fail at once, its wait past defaults.ReadTimeout (%s)", defaults.ReadTimeout)
	}
}

// A create that could not connect (nothing listened yet: a service
// restarting) left nothing on the service, so it is sent again once the
// service is back, and reaches it exactly once. For 300 ms from the first
// dial the service's address is a loopback port that refuses connections (a port
// freed and bound again later could be taken meanwhile by another test).
func TestCreateWaitsForAServiceThatCannotBeReachedYet(t *testing.T) {
	s, srv := serve(t, step{status: 201, body: linkJSON})
	refusing := testsupport.ClosedAddr(t)
	var (
		firstDial sync.Once
		up        time.Time // 300 ms after the first dial
		refused   atomic.Int32
	)
	transport := srv.Client().Transport.(*http.Transport).Clone()
	transport.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		firstDial.Do(func() { up = time.Now().Add(300 * time.Millisecond) })
		addr := srv.Listener.Addr().String()
		if time.Now().Before(up) {
			addr = refusing
			refused.Add(1)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c, errNew := New(Config{BaseURL: "http://" + refusing, APIKey: testKey, UserAgent: "test", HTTPClient: &http.Client{Transport: transport},
		RetryWaitMin: 50 * time.Millisecond, RetryWaitMax: 100 * time.Millisecond, MaxRetries: new(10)})
	if errNew != nil {
		t.Fatal(errNew)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if refused.Load() == 0 || s.count() != 1 {
		t.Fatalf("%d connections refused, %d creates reached the service; want some, and 1", refused.Load(), s.count())
	}
}

// A Retry-After no service means (here a Unix time, 56 years away) is not
// believed: the refused request is sent again after the back-off, and no
// later request of its class is held by it.
func TestUnbelievableRetryAfterHoldsNothing(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			body := linkJSON
			if method == "GET" {
				body = "[" + linkJSON + "]"
			}
			s, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": "1767225600"}}, step{status: 200, body: body})
			c := newTestClient(t, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			for i := range 2 {
				if err := sendOne(ctx, c, method); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if s.count() != 3 {
				t.Errorf("%d requests, want 3", s.count())
			}
		})
	}
}

// sendOne lists the links (GET) or creates one (POST).
func sendOne(ctx context.Context, c *Client, method string) error {
	if method == "GET" {
		_, err := c.ListLinks(ctx)
		return err
	}
	_, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	return err
}

func TestContextEndingDuringPOSTIsAmbiguous(t *testing.T) {
	_, srv := serve(t, step{delay: 10 * time.Second, status: 201, body: linkJSON})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := newTestClient(t, srv).CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if time.Since(start) > 2*time.Second {
		t.Fatal("did not return promptly")
	}
	if !errors.Is(err, ErrAmbiguous) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want ErrAmbiguous and context.DeadlineExceeded", err)
	}
}

func TestAttemptTimeoutIsRetriedForGET(t *testing.T) {
	s, srv := serve(t, step{delay: 2 * time.Second, body: "[]"}, step{body: "[]"})
	c := newTestClient(t, srv)
	c.http.Timeout = 100 * time.Millisecond
	if _, err := c.ListLinks(context.Background()); err != nil {
		t.Fatalf("ListLinks: %v", err)
	}
	if s.count() != 2 {
		t.Fatalf("%d requests, want 2", s.count())
	}
}

func TestPOSTThatNeverLeftIsNotAmbiguous(t *testing.T) {
	base := "http://" + testsupport.ClosedAddr(t) // connecting fails
	c, err := New(Config{BaseURL: base, APIKey: testKey, RetryWaitMin: 1, RetryWaitMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if err == nil || errors.Is(err, ErrAmbiguous) {
		t.Fatalf("error = %v, want a connection error that is not ambiguous", err)
	}
	if got, _ := shouldRetry(http.MethodGet, nil, err); !got {
		t.Fatal("a GET would not be retried after a connection error")
	}
}
