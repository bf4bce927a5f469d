package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
)

// A slow write is never cut short by the per-attempt bound of reads: only
// the operation's deadline ends it. A hung read is cut and sent again.
func TestReadAttemptTimeoutSparesSlowWrites(t *testing.T) {
	// The bound leaves a loaded machine room to answer the second listing
	// within it.
	const bound = 500 * time.Millisecond
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			time.Sleep(3 * bound) // the fraud filter
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"l1","destination":"https://example.com/","domainId":"d1","slug":"s","shortUrl":"https://go.example.test/s","qrCodeUrl":"https://go.example.test/qr/s.png","createdAt":"2026-11-21T00:00:00Z","updatedAt":"2026-11-21T00:00:00Z","expiresAt":null,"utm":null}`))
		case http.MethodGet:
			if gets.Add(1) == 1 {
				select { // the first listing hangs
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer ts.Close()
	c, err := New(Config{BaseURL: ts.URL, APIKey: "k", HTTPClient: ts.Client(),
		ReadAttemptTimeout: bound, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*bound)
	defer cancel()
	link, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://example.com/", DomainID: "d1"})
	if err != nil || link.ID != "l1" {
		t.Fatalf("a %s create under a %s read bound: %v, %v", 3*bound, bound, link, err)
	}
	start := time.Now()
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatalf("list after a hung attempt: %v", err)
	}
	if n := gets.Load(); n != 2 {
		t.Fatalf("%d GET attempts, want the hung one cut and one more", n)
	}
	if elapsed := time.Since(start); elapsed > 8*bound {
		t.Fatalf("the hung read was waited on for %v", elapsed)
	}
}

func TestRequestShape(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	expires := time.Date(2027, 2, 1, 0, 59, 59, 123456789, cet)
	tests := []struct {
		name       string
		answer     step
		run        func(*Client) error
		method     string
		path       string
		query      string
		accept     string
		wantBody   string // "" means no body and no Content-Type
		wantLinkID string
	}{
		{
			name:   "create with every field, expiresAt from a non-UTC time",
			answer: step{status: 201, body: linkJSON},
			run: func(c *Client) error {
				_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://example.com/a?b=1&c=<2>", DomainID: "d-1", Slug: "abc", ExpiresAt: &expires})
				return err
			},
			method: "POST", path: "/api/links", accept: "application/json",
			wantBody: `{"destination":"https://example.com/a?b=1&c=<2>","domainId":"d-1","slug":"abc","expiresAt":"2027-01-31T23:59:59.123Z"}`,
		},
		{
			name:   "create with required fields only",
			answer: step{status: 201, body: linkJSON},
			run: func(c *Client) error {
				_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://example.com/", DomainID: "d-1"})
				return err
			},
			method: "POST", path: "/api/links", accept: "application/json",
			wantBody: `{"destination":"https://example.com/","domainId":"d-1"}`,
		},
		{
			name:   "create with a whole-second expiry still sends milliseconds",
			answer: step{status: 201, body: linkJSON},
			run: func(c *Client) error {
				e := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)
				_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d", ExpiresAt: &e})
				return err
			},
			method: "POST", path: "/api/links", accept: "application/json",
			wantBody: `{"destination":"https://e/","domainId":"d","expiresAt":"2027-01-31T23:59:59.000Z"}`,
		},
		{
			name:   "list",
			answer: step{body: "[]"},
			run: func(c *Client) error {
				_, err := c.ListLinks(context.Background())
				return err
			},
			method: "GET", path: "/api/links", accept: "application/json",
		},
		{
			name:   "change destination without utm omits utm",
			answer: step{body: linkJSON},
			run: func(c *Client) error {
				_, err := c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://example.com/b"})
				return err
			},
			method: "PATCH", path: "/api/links/l-1", accept: "application/json",
			wantBody: `{"destination":"https://example.com/b"}`,
		},
		{
			name:   "change destination with utm omits empty keys",
			answer: step{body: linkJSON},
			run: func(c *Client) error {
				_, err := c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://example.com/b", UTM: &UTM{Source: "news", Campaign: "spring", Content: "a&b"}})
				return err
			},
			method: "PATCH", path: "/api/links/l-1", accept: "application/json",
			wantBody: `{"destination":"https://example.com/b","utm":{"source":"news","campaign":"spring","content":"a&b"}}`,
		},
		{
			name:   "change destination clearing utm sends null",
			answer: step{status: 204},
			run: func(c *Client) error {
				_, err := c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://example.com/b", ClearUTM: true})
				return err
			},
			method: "PATCH", path: "/api/links/l-1", accept: "application/json",
			wantBody: `{"destination":"https://example.com/b","utm":null}`,
		},
		{
			name:   "delete escapes the id",
			answer: step{status: 204},
			run: func(c *Client) error {
				return c.DeleteLink(context.Background(), "a/b c?d")
			},
			method: "DELETE", path: "/api/links/a%2Fb%20c%3Fd", accept: "application/json",
		},
		{
			name:   "export all",
			answer: step{body: "a,b\n", header: map[string]string{"Content-Type": "text/csv"}},
			run: func(c *Client) error {
				return c.ReadExport(context.Background(), analytics.Query{}, nil, &reading{})
			},
			method: "GET", path: "/api/analytics/export", accept: "text/csv",
		},
		{
			name:   "export one link",
			answer: step{body: "a,b\n", header: map[string]string{"Content-Type": "text/csv"}},
			run: func(c *Client) error {
				return c.ReadExport(context.Background(), analytics.Query{LinkID: "l-1 &x"}, nil, &reading{})
			},
			method: "GET", path: "/api/analytics/export", query: "linkId=l-1+%26x", accept: "text/csv",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, tt.answer)
			if err := tt.run(newTestClient(t, srv)); err != nil {
				t.Fatalf("request failed: %v", err)
			}
			reqs := s.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tt.method || r.EscapedPath != tt.path || r.RawQuery != tt.query {
				t.Errorf("request %s %s?%s, want %s %s?%s", r.Method, r.EscapedPath, r.RawQuery, tt.method, tt.path, tt.query)
			}
			wantHeaders := map[string]string{
				"Authorization": "Bearer " + testKey,
				"User-Agent":    "terraform-provider-shortlink/1.2.3",
				"Accept":        tt.accept,
				"Content-Type":  "",
			}
			if tt.wantBody != "" {
				wantHeaders["Content-Type"] = "application/json"
			}
			for k, want := range wantHeaders {
				if got := r.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if r.Body != tt.wantBody {
				t.Errorf("body\n got %s\nwant %s", r.Body, tt.wantBody)
			}
		})
	}
}

func TestWriteIsNotRedirected(t *testing.T) {
	s, srv := serve(t, step{status: http.StatusFound, header: map[string]string{"Location": "/elsewhere"}})
	_, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusFound || !strings.Contains(apiErr.Message, "/elsewhere") {
		t.Fatalf("error = %v, want an APIError 302 naming the Location", err)
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d requests, want 1 (the redirect must not be followed)", n)
	}
}

// A read redirected to another origin is not followed, however alike the
// host: net/http would carry the Authorization header to another port of
// the same host, or from https to http on it, and the redirect says
// base_url is wrong.
func TestReadIsNotRedirectedToAnotherOrigin(t *testing.T) {
	other, otherSrv := serve(t, step{body: "[]"}) // the same host, another port
	_, srv := serve(t, step{status: http.StatusFound, header: map[string]string{"Location": otherSrv.URL + "/api/links"}})
	if _, err := newTestClient(t, srv).ListLinks(context.Background()); err == nil {
		t.Fatal("the list succeeded; want the redirect reported")
	}
	if n := other.count(); n != 0 {
		t.Fatalf("%d requests went to the other origin, carrying the API key", n)
	}
}

func TestCanceledContextSendsNothing(t *testing.T) {
	s, srv := serve(t, step{status: 201, body: linkJSON})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newTestClient(t, srv).CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrAmbiguous) {
		t.Fatalf("error = %v, want context.Canceled and not ErrAmbiguous", err)
	}
	if s.count() != 0 {
		t.Fatal("a request was sent")
	}
}
