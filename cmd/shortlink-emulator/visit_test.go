package main

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestClickAndExportSubcommands runs the subcommands against the real
// emulator; these tests put a fake one in its place to see the requests the
// subcommands send and to give the answers the emulator rarely gives.

// fakeEmulator answers every request with answer and keeps what it was asked.
type fakeEmulator struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

func serveFake(t *testing.T, answer http.HandlerFunc) *fakeEmulator {
	t.Helper()
	f := &fakeEmulator{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Clone(r.Context()))
		f.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeEmulator) seen() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// answerStatus answers every request with status and body.
func answerStatus(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// hangUp closes the connection without an answer.
func hangUp(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }

// Each visit is a GET of /r/<host><path>, with the Referer asked for and no
// other, and the redirect is not followed: the Location points back at the
// fake, which would see a second request.
func TestClickVisits(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		visits  int
		referer string
	}{
		{"with a referrer", []string{"-n", "2", "-referrer", "https://news.example/"}, 2, "https://news.example/"},
		{"without a referrer", nil, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := serveFake(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/destination", http.StatusFound) })
			args := append([]string{"-base", f.URL, "-url", "https://go.example.test/spring"}, tt.args...)
			if err := runClick(args, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			seen := f.seen()
			if len(seen) != tt.visits {
				t.Fatalf("%d requests, want %d", len(seen), tt.visits)
			}
			for _, r := range seen {
				if r.Method != http.MethodGet || r.URL.Path != "/r/go.example.test/spring" || r.Header.Get("Referer") != tt.referer {
					t.Errorf("%s %s with Referer %q, want GET /r/go.example.test/spring with %q", r.Method, r.URL, r.Header.Get("Referer"), tt.referer)
				}
			}
		})
	}
}

// A visit that is not redirected fails with a hint at what went wrong.
func TestClickWithoutARedirect(t *testing.T) {
	tests := []struct {
		name   string
		status int
		want   string
	}{
		{"unknown slug: where to list the links", http.StatusNotFound, "answered 404 Not Found, not a redirect: no link with that slug on that domain (list them with GET /api/links)"},
		{"expired link", http.StatusGone, "answered 410 Gone, not a redirect: the link has expired"},
		{"some other server at -base", http.StatusOK, "answered 200 OK, not a redirect: is -base the emulator's address?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := serveFake(t, answerStatus(tt.status, ""))
			err := runClick([]string{"-base", f.URL, "-url", "https://go.example.test/spring"}, io.Discard, io.Discard)
			if want := "https://go.example.test/spring " + tt.want; err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %q", err, want)
			}
		})
	}
}

// Arguments that cannot make a visit are refused before any request.
func TestClickArgumentErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"-url without a scheme", []string{"-url", "go.example.test/spring"}, `-url "go.example.test/spring" is not a short URL`},
		{"no -url", nil, `-url "" is not a short URL`},
		{"no visits", []string{"-url", "https://go.example.test/spring", "-n", "0"}, `-n 0: must be 1 or more`},
		{"-url that does not parse", []string{"-url", "https://go.example.test/%zz"}, `-url "https://go.example.test/%zz" is not a short URL`},
		{"-n not a number", []string{"-url", "https://go.example.test/spring", "-n", "x"}, `invalid value "x" for flag -n`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := serveFake(t, answerStatus(http.StatusFound, ""))
			err := runClick(append([]string{"-base", f.URL}, tt.args...), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			// A -url refused says what to give instead.
			if strings.HasPrefix(tt.want, "-url") && !strings.Contains(err.Error(), "such as https://go.example.test/spring") {
				t.Errorf("error = %v, want one showing what a short URL looks like", err)
			}
			if n := len(f.seen()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// The export asks for the link given, or every link, with the key from
// SHORTLINK_API_KEY, at -base or else SHORTLINK_BASE_URL.
func TestExportRequest(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		baseFromEnv bool
		linkID      string // the linkId query parameter, "" for none
	}{
		{name: "one link, escaped", args: []string{"-link-id", "a b&c/d"}, linkID: "a b&c/d"},
		{name: "every link"},
		{name: "at SHORTLINK_BASE_URL", baseFromEnv: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := serveFake(t, answerStatus(http.StatusOK, "clicked_at\r\n"))
			t.Setenv("SHORTLINK_API_KEY", "the-key")
			args := tt.args
			if tt.baseFromEnv {
				t.Setenv("SHORTLINK_BASE_URL", f.URL)
			} else {
				// -base wins: nothing listens at the variable's address.
				t.Setenv("SHORTLINK_BASE_URL", "http://127.0.0.1:1")
				args = append([]string{"-base", f.URL}, args...)
			}
			if err := runExport(args, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			seen := f.seen()
			if len(seen) != 1 {
				t.Fatalf("%d requests, want 1", len(seen))
			}
			r, q := seen[0], seen[0].URL.Query()
			if r.Method != http.MethodGet || r.URL.Path != "/api/analytics/export" || q.Get("linkId") != tt.linkID || q.Has("linkId") != (tt.linkID != "") {
				t.Errorf("request %s %s, want GET /api/analytics/export with linkId %q", r.Method, r.URL, tt.linkID)
			}
			if got := r.Header.Get("Authorization"); got != "Bearer the-key" {
				t.Errorf("Authorization %q, want the key of SHORTLINK_API_KEY", got)
			}
		})
	}
}

func TestExportErrors(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		args   []string
		answer http.HandlerFunc // nil: the export fails before it asks
		want   string           // in the error
	}{
		{name: "no API key: which to set", want: "set SHORTLINK_API_KEY to a key with links:read"},
		{name: "unknown flag", key: "k", args: []string{"-nope"}, want: "flag provided but not defined: -nope"},
		// The service's explanation is passed on, not printed as the export.
		{name: "refused", key: "sl_test_key", answer: answerStatus(http.StatusForbidden, "the key lacks links:read"), want: "export answered 403 Forbidden: the key lacks links:read"},
		{name: "an echoed key is not printed", key: "sl_test_echoed", answer: answerStatus(http.StatusUnauthorized, "the key sl_test_echoed is revoked"), want: "the key [REDACTED] is revoked"},
		// The quote is cut after the key is taken out: no part of it shows.
		{name: "a key where the quote is cut is not printed in part", key: "sl_test_echoed_0123456789", answer: answerStatus(http.StatusUnauthorized, strings.Repeat("x", 500)+" sl_test_echoed_0123456789 is revoked"), want: " [REDACT"},
		{name: "an encoded key where the quote is cut", key: "sl/test/echoed/0123456789", answer: answerStatus(http.StatusUnauthorized, strings.Repeat("x", 500)+" sl&#x2F;test&#x2F;echoed&#x2F;0123456789 is revoked"), want: " [REDACT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := tt.answer
			if answer == nil {
				answer = answerStatus(http.StatusOK, "clicked_at\r\n")
			}
			f := serveFake(t, answer)
			t.Setenv("SHORTLINK_API_KEY", tt.key)
			var stdout strings.Builder
			err := runExport(append([]string{"-base", f.URL}, tt.args...), &stdout, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("printed %q", stdout.String())
			}
			if tt.answer == nil && len(f.seen()) != 0 {
				t.Errorf("%d requests sent", len(f.seen()))
			}
		})
	}

	// An error page can be long; the error quotes only its start.
	t.Run("a long refusal is cut", func(t *testing.T) {
		f := serveFake(t, answerStatus(http.StatusInternalServerError, strings.Repeat("x", 64<<10)))
		t.Setenv("SHORTLINK_API_KEY", "k")
		err := runExport([]string{"-base", f.URL}, io.Discard, io.Discard)
		if err == nil || len(err.Error()) > 1<<10 {
			t.Fatalf("error = %.2000v, want one of at most 1 KiB", err)
		}
	})
	// An export cut off is an error, not a shorter export.
	t.Run("connection lost mid-export", func(t *testing.T) {
		f := serveFake(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = io.WriteString(w, "clicked_at\r\n")
		})
		t.Setenv("SHORTLINK_API_KEY", "k")
		if err := runExport([]string{"-base", f.URL}, io.Discard, io.Discard); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error = %v, want an unexpected EOF", err)
		}
	})
}

// When the emulator cannot be reached the error names the address tried,
// so that a wrong -base shows.
func TestSubcommandsUnreachable(t *testing.T) {
	t.Setenv("SHORTLINK_API_KEY", "k")
	f := serveFake(t, hangUp)
	for _, sub := range []struct {
		name string
		run  func(args []string, stdout, stderr io.Writer) error
		args []string
		path string
	}{
		{"click", runClick, []string{"-url", "https://go.example.test/spring"}, "/r/go.example.test/spring"},
		{"export", runExport, nil, "/api/analytics/export"},
	} {
		for _, base := range []struct{ name, url string }{
			{"no answer", f.URL},
			{"-base not a URL", "http://[::1"},
		} {
			t.Run(sub.name+", "+base.name, func(t *testing.T) {
				err := sub.run(append([]string{"-base", base.url}, sub.args...), io.Discard, io.Discard)
				var urlErr *url.Error
				if !errors.As(err, &urlErr) || urlErr.URL != base.url+sub.path {
					t.Fatalf("error = %v, want one about %s", err, base.url+sub.path)
				}
			})
		}
	}
}

// -base, else SHORTLINK_BASE_URL, else where the emulator listens by
// default; the help names that default once.
func TestBaseFlag(t *testing.T) {
	cases := []struct{ name, env, flag, want string }{
		{"neither", "", "", "http://127.0.0.1:8080"},
		{"environment", "http://127.0.0.1:9000", "", "http://127.0.0.1:9000"},
		{"flag over environment", "http://127.0.0.1:9000", "http://127.0.0.1:9001", "http://127.0.0.1:9001"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("SHORTLINK_BASE_URL", c.env)
			fs := flag.NewFlagSet("click", flag.ContinueOnError)
			base := baseFlag(fs)
			var args []string
			if c.flag != "" {
				args = []string{"-base", c.flag}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if got := base(); got != c.want {
				t.Errorf("base() = %q, want %q", got, c.want)
			}
		})
	}
	var help strings.Builder
	fs := flag.NewFlagSet("click", flag.ContinueOnError)
	fs.SetOutput(&help)
	baseFlag(fs)
	fs.PrintDefaults()
	if n := strings.Count(help.String(), "default"); n != 1 {
		t.Errorf("the help of -base names a default %d times, want once:\n%s", n, help.String())
	}
}
