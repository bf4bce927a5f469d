package client

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

var sentinels = map[string]error{
	"ErrNotFound": ErrNotFound, "ErrUnauthorized": ErrUnauthorized, "ErrForbidden": ErrForbidden,
	"ErrQuota": ErrQuota, "ErrBlocked": ErrBlocked, "ErrRateLimited": ErrRateLimited,
	"ErrConflict": ErrConflict, "ErrInvalidRequest": ErrInvalidRequest,
}

func TestErrorStatuses(t *testing.T) {
	del := func(c *Client) error { return c.DeleteLink(context.Background(), "l-1") }
	create := func(c *Client) error {
		_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://evil.test/", DomainID: "d"})
		return err
	}
	list := func(c *Client) error { _, err := c.ListLinks(context.Background()); return err }
	tests := []struct {
		name         string
		op           func(*Client) error
		answer       step
		wantSentinel string // "" = none of them
		wantCode     string
		wantMessage  string
		wantBody     string
		wantRequests int
		ambiguous    bool
	}{
		{"400", create, step{status: 400, body: `{"error":"invalid_request","message":"slug: must match [A-Za-z0-9_-]{1,64}"}`}, "ErrInvalidRequest", "invalid_request", "slug: must match [A-Za-z0-9_-]{1,64}", "", 1, false},
		{"401", list, step{status: 401, body: `{"error":"invalid_api_key"}`}, "ErrUnauthorized", "invalid_api_key", "", "", 1, false},
		{"402", create, step{status: 402, body: `{"error":"link_quota","detail":"monthly quota of 100 links reached"}`}, "ErrQuota", "link_quota", "monthly quota of 100 links reached", "", 1, false},
		{"403", list, step{status: 403, body: `{"error":"insufficient_scope","message":"links:read required"}`}, "ErrForbidden", "insufficient_scope", "links:read required", "", 1, false},
		{"404", del, step{status: 404, body: `{"error":"not_found"}`}, "ErrNotFound", "not_found", "", "", 1, false},
		{"410", del, step{status: 410}, "ErrNotFound", "not_found", "", "", 1, false},
		{"409", create, step{status: 409, body: `{"error":"slug_taken","message":"slug: taken"}`}, "ErrConflict", "slug_taken", "slug: taken", "", 1, false},
		{"422", create, step{status: 422, body: `{"error":"blocked_by_filter","message":"destination host \"evil.test\" is blocked"}`}, "ErrBlocked", "blocked_by_filter", `destination host "evil.test" is blocked`, "", 1, false},
		{"429 asking a wait past the deadline, GET", list, step{status: 429, body: `{"error":"rate_limited"}`, header: map[string]string{"Retry-After": "7200"}}, "ErrRateLimited", "rate_limited", "", "", 1, false},
		{"429 asking a wait past the deadline, POST", create, step{status: 429, body: `{"error":"rate_limited"}`, header: map[string]string{"Retry-After": "7200"}}, "ErrRateLimited", "rate_limited", "", "", 1, false},
		{"500 after retries, GET", list, step{status: 500, body: `{"error":"internal","message":"boom"}`}, "", "internal", "boom", "", 4, false},
		{"502 HTML from a proxy, DELETE", del, step{status: 502, body: "<html><h1>502 Bad Gateway</h1></html>", header: map[string]string{"Content-Type": "text/html"}}, "", "", "", "<html><h1>502 Bad Gateway</h1></html>", 4, false},
		{"503 on POST is not retried and is ambiguous", create, step{status: 503}, "", "", "", "", 1, true},
		{"non-JSON 401 derives the code from the status", list, step{status: 401, body: "Unauthorized\n", header: map[string]string{"Content-Type": "text/plain"}}, "ErrUnauthorized", "invalid_api_key", "", "Unauthorized\n", 1, false},
		{"nested error object", create, step{status: 422, body: `{"error":{"code":"blocked_by_filter","message":"nope"}}`}, "ErrBlocked", "blocked_by_filter", "nope", "", 1, false},
		{"error that is a sentence", del, step{status: 404, body: `{"error":"Link not found"}`}, "ErrNotFound", "not_found", "Link not found", "", 1, false},
		{"top-level code", create, step{status: 409, body: `{"code":"slug_taken","title":"Conflict"}`}, "ErrConflict", "slug_taken", "Conflict", "", 1, false},
		{"JSON without code", create, step{status: 422, body: `{"status":422}`}, "ErrBlocked", "blocked_by_filter", "", "", 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, tt.answer)
			err := tt.op(newTestClient(t, srv))
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error = %v (%T), want an *APIError", err, err)
			}
			if apiErr.StatusCode != tt.answer.status || apiErr.Code != tt.wantCode || apiErr.Message != tt.wantMessage || apiErr.Body != tt.wantBody {
				t.Errorf("APIError = %+v, want status %d code %q message %q body %q", apiErr, tt.answer.status, tt.wantCode, tt.wantMessage, tt.wantBody)
			}
			for name, sentinel := range sentinels {
				if got := errors.Is(err, sentinel); got != (name == tt.wantSentinel) {
					t.Errorf("errors.Is(err, %s) = %v", name, got)
				}
			}
			if got := errors.Is(err, ErrAmbiguous); got != tt.ambiguous {
				t.Errorf("errors.Is(err, ErrAmbiguous) = %v, want %v", got, tt.ambiguous)
			}
			if n := s.count(); n != tt.wantRequests || apiErr.Attempts != n {
				t.Errorf("%d requests, Attempts %d; want %d", n, apiErr.Attempts, tt.wantRequests)
			}
		})
	}
}

func TestAPIErrorMessage(t *testing.T) {
	tests := []struct {
		err  APIError
		want string
	}{
		{APIError{StatusCode: 422, Code: "blocked_by_filter", Message: `destination host "evil.test" is blocked`, Method: "POST", Path: "/api/links", Attempts: 1},
			`POST /api/links: 422 blocked_by_filter: destination host "evil.test" is blocked`},
		{APIError{StatusCode: 502, Method: "GET", Path: "/api/links", Body: "<html>bad gateway</html>", Attempts: 6},
			`GET /api/links: 502 Bad Gateway: non-JSON body "<html>bad gateway</html>" (after 6 attempts)`},
		// A code derived from the status is not printed as the service's.
		{APIError{StatusCode: 400, Code: "invalid_request", CodeDerived: true, Method: "GET", Path: "/api/links", Body: "Client sent an HTTP request to an HTTPS server."},
			`GET /api/links: 400 Bad Request: non-JSON body "Client sent an HTTP request to an HTTPS server."`},
		{APIError{StatusCode: 404, Code: "not_found", Method: "DELETE", Path: "/api/links/x"},
			`DELETE /api/links/x: 404 not_found`},
		{APIError{StatusCode: 599, Method: "GET", Path: "/p"}, `GET /p: 599`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestIsNotFound(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&APIError{StatusCode: 404}, true},
		{&APIError{StatusCode: 410}, true},
		{errors.Join(errors.New("context"), &APIError{StatusCode: 404}), true},
		{&APIError{StatusCode: 403}, false},
		{errors.New("not found"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := IsNotFound(tt.err); got != tt.want {
			t.Errorf("IsNotFound(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// A 429 surfaces as an error only when its wait ends past the operation's
// deadline; the error keeps the wait the service asked for.
func TestAPIErrorKeepsRetryAfter(t *testing.T) {
	for _, c := range []struct {
		header string
		want   time.Duration
	}{{"120", 2 * time.Minute}, {"30", 30 * time.Second}} {
		_, srv := serve(t, step{status: 429, header: map[string]string{"Retry-After": c.header}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := newTestClient(t, srv).ListLinks(ctx)
		cancel()
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.RetryAfter != c.want || apiErr.Attempts != 1 {
			t.Fatalf("Retry-After %s: error = %#v, want RetryAfter %s after 1 attempt", c.header, err, c.want)
		}
	}
}

func TestErrorBodiesAreBoundedAndRedacted(t *testing.T) {
	long := "<html>" + strings.Repeat("x", 4000) + testKey + "</html>"
	_, srv := serve(t, step{status: 401, body: long, header: map[string]string{"Content-Type": "text/html"}})
	_, err := newTestClient(t, srv).ListLinks(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatal(err)
	}
	if len(apiErr.Body) > maxErrorSnippet+len("…") || !strings.HasPrefix(apiErr.Body, "<html>xxx") {
		t.Fatalf("Body has %d bytes: %.40q", len(apiErr.Body), apiErr.Body)
	}

	_, srv = serve(t, step{status: 401, body: `{"error":"invalid_api_key","message":"key ` + testKey + ` is revoked"}`})
	_, err = newTestClient(t, srv).ListLinks(context.Background())
	if !errors.As(err, &apiErr) || strings.Contains(err.Error(), testKey) || !strings.Contains(apiErr.Message, "[REDACTED]") {
		t.Fatalf("the echoed key was not redacted: %v", err)
	}
}

// A page that lets the echoed key wrap, or marks part of it up, shows it
// as one word: its text must not quote it in two halves.
func TestErrorPageQuotesNoKeyItsMarkupParts(t *testing.T) {
	half := len(testKey) / 2
	for name, inside := range map[string]string{
		"a line-break opportunity": "<wbr>",
		"an inline element":        "</span><span class=k>",
		"a comment":                "<!-- -->",
		"a soft hyphen":            "&shy;",
		"a zero-width space":       "&#8203;",
	} {
		t.Run(name, func(t *testing.T) {
			page := "<html><body><h1>Bad Gateway</h1><p>Authorization: Bearer <span>" + testKey[:half] + inside + testKey[half:] + "</span></p></body></html>"
			_, srv := serve(t, step{status: 502, body: page, header: map[string]string{"Content-Type": "text/html"}})
			_, err := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = new(0) }).ListLinks(context.Background())
			var apiErr *APIError
			if !errors.As(err, &apiErr) || !strings.Contains(apiErr.PageText, "Bad Gateway") {
				t.Fatalf("error %v, want an *APIError quoting the page", err)
			}
			if strings.Contains(err.Error(), testKey[half:]) || !strings.Contains(apiErr.PageText, Redacted) {
				t.Fatalf("the page's text quotes the key in parts: %q", apiErr.PageText)
			}
		})
	}
}

func TestStatusTable(t *testing.T) {
	// Every status with a sentinel has a derived code, so a non-JSON body
	// still yields the service's vocabulary.
	for status := range statusSentinels {
		if statusCodes[status] == "" {
			t.Errorf("status %d (%s) has a sentinel but no derived code", status, http.StatusText(status))
		}
	}
}
