package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// countingDials is an HTTP client that counts its connection attempts.
func countingDials(dials *atomic.Int32) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

func TestVerdict_unreachableServiceIsGivenUpOnceForEveryOperation(t *testing.T) {
	var dials atomic.Int32
	c, err := New(Config{
		BaseURL: "http://" + testsupport.ClosedAddr(t), APIKey: testKey, HTTPClient: countingDials(&dials),
		MaxRetries: new(100), RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond,
		UnreachableAfter: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListLinks(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("error = %v, want ErrUnreachable naming the cause", err)
	}
	tried := dials.Load()
	if tried < 2 || tried > 100 {
		t.Fatalf("%d connection attempts, want retries within the patience, far below max_retries", tried)
	}
	// Every later operation fails at once, sending nothing; a create is
	// not ambiguous.
	_, err = c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrNotSent) || errors.Is(err, ErrAmbiguous) {
		t.Fatalf("create error = %v, want ErrUnreachable, unsent and not ambiguous", err)
	}
	// It quotes the listing's failure, so it says that another request
	// found it, lest the reader take the listing's URL for a slip.
	if want := "POST /api/links: the request was not sent, for an earlier request of this run found: the service cannot be reached"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("create error = %q, want it to start %q", err, want)
	}
	if n := dials.Load(); n != tried {
		t.Fatalf("%d more connection attempts after the verdict", n-tried)
	}
}

// A max_retries that ends the trying before the patience does concludes
// the same: the service cannot be reached, for every later request too,
// rather than leave each operation to fail on its own (a plan would then
// go on with a warning, as if the service had only failed once).
func TestVerdict_retriesRunningOutConcludeUnreachable(t *testing.T) {
	for _, maxRetries := range []int{0, 2} {
		var dials atomic.Int32
		c, err := New(Config{
			BaseURL: "http://" + testsupport.ClosedAddr(t), APIKey: testKey, HTTPClient: countingDials(&dials),
			MaxRetries: new(maxRetries), RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ListLinks(context.Background())
		if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), fmt.Sprintf("max_retries is %d", maxRetries)) {
			t.Fatalf("max_retries %d: error = %v, want ErrUnreachable naming max_retries", maxRetries, err)
		}
		tried := dials.Load()
		if tried != int32(maxRetries+1) {
			t.Fatalf("max_retries %d: %d connection attempts", maxRetries, tried)
		}
		_, err = c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		if !errors.Is(err, ErrUnreachable) || !errors.Is(err, ErrNotSent) || dials.Load() != tried {
			t.Fatalf("max_retries %d: create error = %v after %d more attempts, want ErrUnreachable, unsent", maxRetries, err, dials.Load()-tried)
		}
	}
}

// Only failures to reach the service conclude it unreachable when
// max_retries runs out. A service that answered 5xx, or whose connection
// broke after the request went, was reached: that request fails, and the
// next one is sent.
func TestVerdict_otherFailuresRunningOutAreNoVerdict(t *testing.T) {
	for name, failing := range map[string]step{"server errors": {status: http.StatusBadGateway}, "connections broken": {hangUp: true}} {
		t.Run(name, func(t *testing.T) {
			s, srv := serve(t, failing, failing, step{status: http.StatusOK, body: `[]`})
			c := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = new(1) })
			if _, err := c.ListLinks(context.Background()); err == nil || IsVerdict(err) {
				t.Fatalf("first list: error = %v, want the failure, no verdict", err)
			}
			if _, err := c.ListLinks(context.Background()); err != nil {
				t.Fatalf("second list: %v; want it sent and answered", err)
			}
			if n := s.count(); n != 3 {
				t.Fatalf("%d requests, want 3", n)
			}
		})
	}
}

func TestVerdict_anAnswerRestartsThePatience(t *testing.T) {
	v := &verdict{patience: time.Minute}
	start := time.Now()
	refused := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	if v.unreachable(start, refused) {
		t.Fatal("gave up at the first failure")
	}
	v.answered()
	if v.unreachable(start.Add(59*time.Second), refused) || v.unreachable(start.Add(90*time.Second), refused) {
		t.Fatal("gave up although the service answered within the patience")
	}
	if !v.unreachable(start.Add(120*time.Second), refused) {
		t.Fatal("did not give up after a whole patience of failures")
	}
}

func TestVerdict_wrongBaseURL(t *testing.T) {
	for name, answer := range map[string]step{
		"404 JSON": {status: http.StatusNotFound, body: `{"error":"not_found"}`},
		"404 page": {status: http.StatusNotFound, body: "<html>Not Found</html>", header: map[string]string{"Content-Type": "text/html"}},
		"200 page": {status: http.StatusOK, body: "<!doctype html><html>Welcome</html>", header: map[string]string{"Content-Type": "text/html"}},
		"200 text": {status: http.StatusOK, body: "Sign in"},
	} {
		t.Run(name, func(t *testing.T) {
			s, srv := serve(t, answer)
			c := newTestClient(t, srv, func(cfg *Config) { cfg.BaseURL = srv.URL + "/api/" })
			_, err := c.ListLinks(context.Background())
			if !errors.Is(err, ErrWrongBaseURL) || errors.Is(err, ErrNotFound) {
				t.Fatalf("error = %v, want ErrWrongBaseURL and not ErrNotFound", err)
			}
			// The URL reached, base_url as written, and the answer, which names no other path.
			for _, want := range []string{srv.URL + "/api/api/links", `base_url (now "` + srv.URL + `/api/")`, "/api/links"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "<html") { // a page is quoted by the text it shows
				t.Fatalf("error %q quotes a page's markup", err)
			}
			if strings.Count(err.Error(), "/api/links") != 2 { // the URL reached, and the API's paths
				t.Fatalf("error %q quotes a path it did not reach", err)
			}
			if err := c.DeleteLink(context.Background(), "l-1"); !errors.Is(err, ErrWrongBaseURL) {
				t.Fatalf("a later request: %v, want the same verdict", err)
			}
			if n := s.count(); n != 1 {
				t.Fatalf("%d requests, want 1: nothing is sent after the verdict", n)
			}
		})
	}
}

func TestVerdict_404OfALinkIsNotAVerdict(t *testing.T) {
	_, srv := serve(t, step{status: http.StatusNotFound, body: `{"error":"not_found"}`})
	c := newTestClient(t, srv)
	if err := c.DeleteLink(context.Background(), "l-1"); !errors.Is(err, ErrNotFound) || IsVerdict(err) {
		t.Fatalf("error = %v, want ErrNotFound", err)
	}
	if err := c.DeleteLink(context.Background(), "l-2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// A key the service refuses is refused the same way for the rest of the
// run: a 401 stops every later request, a 403 every later request of its
// scope (reads need links:read, writes links:write), unsent.
func TestVerdict_refusedKey(t *testing.T) {
	for name, tc := range map[string]struct {
		answer       step
		first        func(*Client) error
		wantErr      error
		readsStopped bool
	}{
		"401 on a read": {
			answer:       step{status: 401, body: `{"error":"invalid_api_key"}`},
			first:        func(c *Client) error { _, err := c.ListLinks(context.Background()); return err },
			wantErr:      ErrUnauthorized,
			readsStopped: true,
		},
		"403 on a write": {
			answer: step{status: 403, body: `{"error":"insufficient_scope"}`},
			first: func(c *Client) error {
				_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
				return err
			},
			wantErr: ErrForbidden,
		},
	} {
		t.Run(name, func(t *testing.T) {
			s, srv := serve(t, tc.answer, step{body: `[]`})
			c := newTestClient(t, srv)
			if err := tc.first(c); !errors.Is(err, tc.wantErr) || !IsVerdict(err) {
				t.Fatalf("first error = %v, want %v, a verdict", err, tc.wantErr)
			}
			err := c.DeleteLink(context.Background(), "l1")
			if !errors.Is(err, tc.wantErr) || !errors.Is(err, ErrNotSent) {
				t.Fatalf("later write: error = %v, want %v, unsent", err, tc.wantErr)
			}
			_, err = c.ListLinks(context.Background())
			if stopped := err != nil; stopped != tc.readsStopped {
				t.Fatalf("later read: error = %v; want reads stopped: %v", err, tc.readsStopped)
			}
			want := 1
			if !tc.readsStopped {
				want = 2
			}
			if got := s.count(); got != want {
				t.Fatalf("the service received %d requests, want %d", got, want)
			}
		})
	}
}

func TestVerdict_retryGoesWhenThePatienceEnds(t *testing.T) {
	v := &verdict{patience: 20 * time.Second}
	start := time.Now()
	if got := v.capWait(start, 16*time.Second); got != 16*time.Second {
		t.Fatalf("wait before any failure = %v, want the back-off's 16s", got)
	}
	refused := &net.OpError{Op: "dial", Err: errors.New("connection refused")}
	v.unreachable(start, refused)
	if got := v.capWait(start.Add(15*time.Second), 16*time.Second); got != 5*time.Second {
		t.Fatalf("wait 15s into the patience = %v, want the 5s left of it", got)
	}
	if got := v.capWait(start.Add(25*time.Second), 16*time.Second); got != 0 {
		t.Fatalf("wait past the patience = %v, want 0", got)
	}
	v.answered()
	if got := v.capWait(start.Add(15*time.Second), 16*time.Second); got != 16*time.Second {
		t.Fatalf("wait once the service answered = %v, want the back-off's 16s", got)
	}
}

func TestVerdict_unreachableConcludedWhenThePatienceEnds(t *testing.T) {
	// A back-off of 2 s doubling tries at 0, 2 and 4-6 s: past a patience
	// of 2.1 s it would conclude at 4-6 s, not when the patience ends.
	c, err := New(Config{
		BaseURL: "http://" + testsupport.ClosedAddr(t), APIKey: testKey,
		MaxRetries: new(100), RetryWaitMin: 2 * time.Second, RetryWaitMax: 30 * time.Second,
		UnreachableAfter: 2100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ListLinks(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "(tried for 2s)") {
		t.Fatalf("error = %v, want ErrUnreachable when the 2.1 s patience ends", err)
	}
}

// A host name that does not exist (a typo in base_url) is concluded
// unreachable at the first attempt, with the resolver's words; a name
// server that did not answer is waited for, as a refused connection is.
func TestVerdict_unknownHostIsConcludedAtOnce(t *testing.T) {
	for name, lookup := range map[string]struct {
		err         *net.DNSError
		wantAttempt bool // several attempts, within the patience
	}{
		"no such host":          {&net.DNSError{Err: "no such host", Name: "shortlnk.example", IsNotFound: true}, false},
		"name server timed out": {&net.DNSError{Err: "i/o timeout", Name: "shortlink.example", IsTimeout: true}, true},
	} {
		t.Run(name, func(t *testing.T) {
			var dials atomic.Int32
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.DialContext = func(context.Context, string, string) (net.Conn, error) {
				dials.Add(1)
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: lookup.err}
			}
			c, err := New(Config{BaseURL: "https://" + lookup.err.Name, APIKey: testKey, HTTPClient: &http.Client{Transport: tr},
				MaxRetries: new(100), RetryWaitMin: time.Millisecond, RetryWaitMax: 10 * time.Millisecond,
				UnreachableAfter: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ListLinks(context.Background())
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), lookup.err.Err) {
				t.Fatalf("error = %v, want ErrUnreachable naming %q", err, lookup.err.Err)
			}
			want := map[bool]string{true: "several, and to say for how long", false: "one, and no time"}[lookup.wantAttempt]
			if got := dials.Load(); (got > 1) != lookup.wantAttempt || strings.Contains(err.Error(), "tried for") != lookup.wantAttempt {
				t.Fatalf("%d attempts, error %q; want %s", got, err, want)
			}
		})
	}
}

// A TLS record the client cannot read after its request went (here one
// longer than TLS allows) is no refused handshake: a create stays in doubt
// and the service is not concluded unreachable.
func TestVerdict_aBadRecordAfterTheRequestIsNoRefusedHandshake(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		tlsConn, ok := conn.(*tls.Conn)
		if !ok {
			t.Errorf("hijacked a %T, want a TLS connection", conn)
			return
		}
		_, _ = tlsConn.NetConn().Write([]byte{0x17, 0x03, 0x03, 0xff, 0xff}) // an application record of 65535 bytes
	}))
	t.Cleanup(ts.Close)
	c, err := New(Config{BaseURL: ts.URL, APIKey: testKey, HTTPClient: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateLink(context.Background(), CreateLinkInput{DomainID: "d", Destination: "https://example.com/"})
	if !errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrNotSent) {
		t.Fatalf("err = %v, want the create in doubt, the service not concluded unreachable", err)
	}
}
