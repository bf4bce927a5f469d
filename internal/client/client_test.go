// The tests of client.go (New's checks and defaults, the base URL), and the
// harness every test file of the package uses: a scripted test server
// (script, step, serve) and a test client (newTestClient). The harness is
// longer than the code of client.go because it is not client.go's alone:
// it stands in for the service in the tests of every file.

package client

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "sk_test_S3CRET_k3y_0123456789"

// recorded is one request as the test server saw it.
type recorded struct {
	Method, EscapedPath, RawQuery string
	Header                        http.Header
	Body                          string
}

// step is one scripted answer of the test server.
type step struct {
	status int
	body   string
	header map[string]string
	hangUp bool          // close the connection without answering
	delay  time.Duration // wait (or until the request ends) before answering
}

// script is a test server that answers its steps in turn, repeating the
// last one, and records every request.
type script struct {
	mu    sync.Mutex
	steps []step
	reqs  []recorded
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
	st := s.steps[min(len(s.reqs)-1, len(s.steps)-1)]
	s.mu.Unlock()
	answer(w, r, st)
}

func answer(w http.ResponseWriter, r *http.Request, st step) {
	if st.delay > 0 {
		select {
		case <-time.After(st.delay):
		case <-r.Context().Done():
			return
		}
	}
	if st.hangUp {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range st.header {
		w.Header().Set(k, v)
	}
	if w.Header().Get("Content-Type") == "" && st.body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(cmpOr(st.status, http.StatusOK))
	_, _ = io.WriteString(w, st.body)
}

func (s *script) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

func (s *script) count() int { return len(s.requests()) }

// serve starts a test server answering steps.
func serve(t *testing.T, steps ...step) (*script, *httptest.Server) {
	t.Helper()
	s := &script{steps: steps}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

// newRawServer starts a test server with handler h.
func newRawServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// newTestClient returns a client of srv with millisecond back-off and
// keep-alives off, so that a hung-up connection is never retried by
// net/http itself and request counts stay exact.
func newTestClient(t *testing.T, srv *httptest.Server, mods ...func(*Config)) *Client {
	t.Helper()
	hc := srv.Client()
	hc.Transport.(*http.Transport).DisableKeepAlives = true
	cfg := Config{
		BaseURL:      srv.URL,
		APIKey:       testKey,
		UserAgent:    "terraform-provider-shortlink/1.2.3",
		HTTPClient:   hc,
		MaxRetries:   new(3),
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 4 * time.Millisecond,
	}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

const linkJSON = `{"id":"l-1","destination":"https://example.com/a","domainId":"d-1","slug":"abc",` +
	`"shortUrl":"https://sho.rt/abc","qrCodeUrl":"https://sho.rt/abc.png","expiresAt":null,"utm":null,` +
	`"createdAt":"2026-01-02T03:04:05.678Z","updatedAt":"2026-01-02T03:04:05.678Z"}`

func TestNewValidatesConfig(t *testing.T) {
	tests := []struct {
		name, baseURL, key, wantErr string
	}{
		{"ok", "http://127.0.0.1:8080", "k", ""},
		{"ok https with prefix", "https://api.example.com/shortlink/", "k", ""},
		{"key trimmed", "https://h", " k\n", ""},
		{"empty base", "", "k", "absolute"},
		{"relative base", "/api", "k", "absolute"},
		{"other scheme", "ftp://h", "k", `must be an https URL (or http on loopback), such as https://api.example.com; its scheme is "ftp"`},
		{"no host", "http://", "k", "absolute"},
		{"query", "https://h?x=1", "k", "query"},
		{"plain http off loopback", "http://api.example.com", "k", "plain http"},
		{"plain http to localhost", "http://localhost:8080", "k", ""},
		{"user info", "https://u:p@h", "k", "user information"},
		{"unparsable", "http://h:port:x", "k", "not a valid URL"},
		// A secret in the URL is never quoted back, whichever check fails.
		{"key as password, plain http", "http://u:" + testKey + "@api.example.com", "k", "user information"},
		{"key in the query", "https://h/?api_key=" + testKey, "k", "query"},
		{"key in the query, plain http", "http://api.example.com/?api_key=" + testKey, "k", "plain http"},
		{"key in an unparsable URL", "https://u:" + testKey + "@h:port:x", "k", "not a valid URL"},
		{"key with a slash as password", "https://u:" + testKey + "/x=@h", "k", "user information"}, // read as a port
		{"empty key", "https://h", "  ", "empty"},
		{"bearer prefix", "https://h", "Bearer " + testKey, "Bearer"},
		{"control character", "https://h", "a\x00b", "control"},
		// A key written where the URL has no "//host" to mark user
		// information off, or set as the base URL itself, is never quoted.
		{"key before an @ without a scheme", testKey + "@api.example.com", "k", "no scheme and host"},
		{"key before an @ after a one-slash scheme", "https:/" + testKey + "@api.example.com", "k", "no scheme and host"},
		{"key after a scheme without a colon", "https//" + testKey + "@api.example.com", "k", "no scheme and host"},
		{"key set as the base URL", testKey, "k", "no scheme and host"},
		// url.Parse refuses these as a path with a colon in its first segment.
		{"loopback address and port without a scheme", "127.0.0.1:8080", "k", "no scheme and host (write https:// before the host name, or http:// before a loopback address"},
		{"host name and port without a scheme", "localhost:8080", "k", "no scheme and host"},
		{"an invisible character copied with the key", "https://h", testKey + "\u200b", "U+200B at character 30, which a Bearer token cannot hold"},
		{"a letter outside ASCII", "https://h", "sk_Äpfel", "U+00C4 at character 4"},
		{"a token's own characters", "https://h", "sk-live_a.b~c+d/e==", ""},
		{"the longest key", "https://h", strings.Repeat("k", MaxAPIKeyLength), ""},
		// The key would travel in every request's address.
		{"key in the path", "https://h/" + testKey, testKey, "holds the API key in its path"},
		{"key in the path, percent-encoded", "https://h/t/" + strings.ReplaceAll(strings.ToLower(testKey), "_", "%5F") + "/", testKey, "holds the API key in its path"},
		{"a short key's letters in a path", "https://h/shortlink/", "k", ""},
		{"a key far too long", "https://h", strings.Repeat("k", MaxAPIKeyLength+1), "characters long, more than the 8000 the provider sends"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(Config{BaseURL: tt.baseURL, APIKey: tt.key})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("New error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Fatalf("error reveals the API key: %v", err)
			}
		})
	}
}

// A visible character that no key holds, such as the colon of a URL set
// in the key's place, is no invisible character copied with the key: the
// error says what it is and what was likely set instead.
func TestNew_visibleCharacterInTheKey(t *testing.T) {
	for key, want := range map[string]string{
		"http://127.0.0.1:8080": "U+003A at character 5 (':')",
		"sk_live!" + testKey:    "U+0021 at character 8 ('!')",
	} {
		_, err := New(Config{BaseURL: "https://h", APIKey: key})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "such as the base URL") || strings.Contains(err.Error(), "invisible") {
			t.Errorf("key %q: error = %v, want one naming %s and the base URL, not an invisible character", key, err, want)
		}
	}
	for _, key := range []string{testKey + "\u200b", "\ufeff" + testKey} {
		if _, err := New(Config{BaseURL: "https://h", APIKey: key}); err == nil || !strings.Contains(err.Error(), "often an invisible character copied with the key") {
			t.Errorf("key with an invisible character: error = %v, want one saying it is often copied with the key", err)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	tests := []struct {
		name        string
		cfg         Config
		wantRetries int
		wantMin     time.Duration
		wantMax     time.Duration
	}{
		{"zero values", Config{}, DefaultMaxRetries, DefaultRetryWaitMin, DefaultRetryWaitMax},
		{"no retries", Config{MaxRetries: new(0)}, 0, DefaultRetryWaitMin, DefaultRetryWaitMax},
		{"explicit", Config{MaxRetries: new(2), RetryWaitMin: time.Millisecond, RetryWaitMax: time.Second}, 2, time.Millisecond, time.Second},
		{"max below min", Config{RetryWaitMin: time.Minute, RetryWaitMax: time.Second}, DefaultMaxRetries, time.Minute, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.BaseURL, tt.cfg.APIKey = "https://h", "k"
			c, err := New(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.maxRetries != tt.wantRetries || c.waitMin != tt.wantMin || c.waitMax != tt.wantMax {
				t.Fatalf("got retries=%d min=%v max=%v", c.maxRetries, c.waitMin, c.waitMax)
			}
			if c.userAgent != DefaultUserAgent || c.http.CheckRedirect == nil {
				t.Fatalf("user agent %q, redirect policy set %v", c.userAgent, c.http.CheckRedirect != nil)
			}
		})
	}
}

func TestBaseURLWithPathPrefix(t *testing.T) {
	s, srv := serve(t, step{body: "[]"})
	c := newTestClient(t, srv, func(cfg *Config) { cfg.BaseURL = srv.URL + "/prefix/" })
	if _, err := c.ListLinks(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.requests()[0].EscapedPath; got != "/prefix/api/links" {
		t.Fatalf("path %q, want /prefix/api/links", got)
	}
}
