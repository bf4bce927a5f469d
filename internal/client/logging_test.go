package client

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
)

func TestAPIKeyNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	rl := map[string]string{"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "0", "X-Echo": testKey}
	echo := `{"error":"invalid_api_key","message":"key ` + testKey + ` is revoked"}`

	_, srv := serve(t,
		step{status: 429, header: map[string]string{"Retry-After": "0", "X-RateLimit-Remaining": "0", "X-Echo": testKey}},
		step{status: 201, body: linkJSON, header: rl})
	c := newTestClient(t, srv)
	if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/?key=" + testKey, DomainID: "d"}); err != nil {
		t.Fatal(err)
	}
	_, srv = serve(t, step{hangUp: true}, step{status: 401, body: echo, header: rl})
	if _, err := newTestClient(t, srv).ListLinks(ctx); err == nil {
		t.Fatal("want an error")
	}
	_, srv = serve(t, step{status: 502, body: "<html>" + testKey + "</html>"})
	if err := newTestClient(t, srv).DeleteLink(ctx, testKey); err == nil {
		t.Fatal("want an error")
	}

	out := buf.String()
	if strings.Contains(out, testKey) {
		t.Fatalf("the API key appears in the log:\n%s", out)
	}
	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	assertLogged(t, entries, "received response", map[string]any{"status": float64(429), "attempt": float64(1), "method": "POST", "path": "/api/links", "x_ratelimit_remaining": "0", "retry_after": "0"})
	assertLogged(t, entries, "received response", map[string]any{"status": float64(201), "attempt": float64(2), "x_ratelimit_limit": "60"})
	assertLogged(t, entries, "waiting before retry", map[string]any{"method": "POST", "wait": "0s", "next_attempt": float64(2)})
	// Retry-After: 0 after a request was counted shows seconds rounded
	// down: the pacer holds the retry a second more, and says so.
	assertLogged(t, entries, "waiting for the rate limit", map[string]any{"class": "write"})
	assertLogged(t, entries, "sending request", map[string]any{"method": "GET", "path": "/api/links", "attempt": float64(2)})
	assertLogged(t, entries, "not retrying request", map[string]any{"method": "DELETE", "attempt": float64(4), "reason": "server error; retries exhausted (max_retries 3)"})
}

// assertLogged fails unless an entry with message msg has all fields.
func assertLogged(t *testing.T, entries []map[string]any, msg string, fields map[string]any) {
	t.Helper()
next:
	for _, e := range entries {
		if e["@message"] != msg {
			continue
		}
		for k, v := range fields {
			if !reflect.DeepEqual(e[k], v) {
				continue next
			}
		}
		return
	}
	t.Errorf("no log entry %q with %v among %d entries", msg, fields, len(entries))
}

func TestLoggerAdapterRedacts(t *testing.T) {
	// Without tflog's own masking, which do() adds, redact alone must hide the key.
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	c, err := New(Config{BaseURL: "https://h", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	l := &leveledLogger{ctx: ctx, redact: c.redact}
	l.Debug("request to "+testKey, "url", "http://h/?k="+testKey, "error", errors.New("bad key "+testKey), testKey, 1)
	l.Error("failed", "odd")
	l.Warn("w")
	l.Info("i", "n", 3)
	out := buf.String()
	if strings.Contains(out, testKey) || !strings.Contains(out, Redacted) {
		t.Fatalf("log not redacted:\n%s", out)
	}
	for _, want := range []string{`"@level":"error"`, `"@level":"warn"`, `"@level":"info"`, `"extra":"odd"`, `"n":"3"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

// Each answer's rate-limit headers are logged with its status, whatever
// the method; a header the answer lacks is not logged.
func TestResponseLogCarriesRateLimitHeaders(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	_, srv := serve(t,
		step{status: 201, body: linkJSON, header: map[string]string{"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "59", "X-RateLimit-Reset": "42"}},
		step{body: "[]", header: map[string]string{"X-RateLimit-Limit": "600", "X-RateLimit-Remaining": "17"}},
		step{status: 204})
	c := newTestClient(t, srv)
	if _, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://e/", DomainID: "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteLink(ctx, "l"); err != nil {
		t.Fatal(err)
	}
	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	assertLogged(t, entries, "received response", map[string]any{"method": "POST", "status": float64(201), "x_ratelimit_limit": "60", "x_ratelimit_remaining": "59", "x_ratelimit_reset": "42"})
	assertLogged(t, entries, "received response", map[string]any{"method": "GET", "status": float64(200), "x_ratelimit_limit": "600", "x_ratelimit_remaining": "17"})
	assertLogged(t, entries, "received response", map[string]any{"method": "DELETE", "status": float64(204)})
	for _, e := range entries {
		if e["@message"] != "received response" {
			continue
		}
		for _, k := range []string{"x_ratelimit_limit", "x_ratelimit_remaining", "x_ratelimit_reset"} {
			if _, logged := e[k]; logged && (e["method"] == "DELETE" || (e["method"] == "GET" && k == "x_ratelimit_reset")) {
				t.Errorf("%s logged for an answer without the header: %v", k, e)
			}
		}
	}
}

// What the service sends back is quoted in errors, cut to a few hundred
// bytes; a key it echoes across the cut is taken out before the cut, so
// that not even its first bytes show. Each body puts the key's start just
// before the cut of one quote.
func TestQuotesOfAnswersHoldNoPartOfTheKey(t *testing.T) {
	pad := func(n int) string { return strings.Repeat("x", n) }
	for name, tc := range map[string]struct {
		answer step
		call   func(*Client) error
		quoted func(error) string // the text that quotes the answer
	}{
		"error body": {
			answer: step{status: 500, body: pad(maxErrorSnippet-10) + testKey, header: map[string]string{"Content-Type": "text/plain"}},
			call:   func(c *Client) error { _, err := c.ListLinks(context.Background()); return err },
			quoted: func(err error) string { var e *APIError; errors.As(err, &e); return e.Body },
		},
		"error page": {
			answer: step{status: 502, body: "<html><p>" + pad(maxErrorSnippet-10) + testKey + "</p></html>", header: map[string]string{"Content-Type": "text/html"}},
			call:   func(c *Client) error { _, err := c.ListLinks(context.Background()); return err },
			quoted: func(err error) string { var e *APIError; errors.As(err, &e); return e.PageText },
		},
		"start of a list answer": {
			answer: step{body: `[{"id":"a","x":"` + pad(headBytes-10-len(`[{"id":"a","x":"`)) + testKey + `"}}`},
			call:   func(c *Client) error { _, err := c.ListLinks(context.Background()); return err },
			quoted: error.Error,
		},
		"what follows a link": {
			answer: step{body: `[{"id":"a"} ` + pad(headBytes-10) + testKey},
			call:   func(c *Client) error { _, err := c.ListLinks(context.Background()); return err },
			quoted: error.Error,
		},
		"a change's answer": {
			answer: step{body: pad(200-10) + testKey, header: map[string]string{"Content-Type": "application/json"}},
			call: func(c *Client) error {
				_, err := c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://e/"})
				return err
			},
			quoted: error.Error,
		},
		"a redirect's address": {
			answer: step{status: 302, header: map[string]string{"Location": "https://elsewhere.example/" + pad(40) + "?t=" + testKey}},
			call: func(c *Client) error {
				_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
				return err
			},
			quoted: error.Error,
		},
		"a page instead of an export": {
			answer: step{body: "<html>" + pad(200-10-len("<html>")) + testKey, header: map[string]string{"Content-Type": "text/html"}},
			call: func(c *Client) error {
				return c.ReadExport(context.Background(), analytics.Query{}, nil, &reading{})
			},
			quoted: error.Error,
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, srv := serve(t, tc.answer)
			c := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = new(0) })
			err := tc.call(c)
			if err == nil {
				t.Fatal("the call succeeded; want an error quoting the answer")
			}
			quote := tc.quoted(err)
			if !strings.Contains(quote, pad(40)) {
				t.Fatalf("the error does not quote the answer where the key begins, so it proves nothing: %.300q", quote)
			}
			if strings.Contains(quote, testKey[:8]) || strings.Contains(err.Error(), testKey[:8]) {
				t.Fatalf("the quote holds the key's first bytes: %q", quote)
			}
		})
	}
}
