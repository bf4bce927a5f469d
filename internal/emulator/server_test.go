package emulator

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// When a request fails several checks, the first in the documented order
// (doc.go: 401, 403, 429, then the request) answers, and the answer is
// counted under the endpoint's pattern; an unknown endpoint answers 404
// before any check and is counted under /api/.
func TestCheckOrder(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits.Write, s.Limits.Read = 1, 1 })
	// spent is a key that has used its one write and one read, then holds
	// scopes, and is revoked if revoke.
	spent := func(revoke bool, scopes ...string) string {
		t.Helper()
		key, err := e.srv.AddKey(e.fx.AccountID, ScopeRead, ScopeWrite)
		if err != nil {
			t.Fatal(err)
		}
		wantStatus(t, e.do(t, http.MethodPost, "/api/links", key, e.createBody("https://example.com/")), http.StatusCreated)
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", key, nil), http.StatusOK)
		if err := e.srv.SetKeyScopes(key, scopes...); err != nil {
			t.Fatal(err)
		}
		if revoke {
			if err := e.srv.RevokeKey(key); err != nil {
				t.Fatal(err)
			}
		}
		return key
	}
	cases := []struct {
		name                string
		key                 string
		method, path, count string // count: the path counted
		body                any
		status              int
		code                string
	}{
		{"401 before 403 and 429", spent(true, ScopeRead), http.MethodPost, "/api/links", "/api/links", e.createBody("https://example.com/"), 401, "invalid_api_key"},
		{"403 before 429", spent(false, ScopeRead), http.MethodPost, "/api/links", "/api/links", e.createBody("https://example.com/"), 403, "insufficient_scope"},
		{"403 before 400", e.fx.ReadKey, http.MethodPost, "/api/links", "/api/links", "{", 403, "insufficient_scope"},
		{"429 before 400", spent(false, ScopeRead, ScopeWrite), http.MethodPost, "/api/links", "/api/links", "{", 429, "rate_limited"},
		{"429 before 404", spent(false, ScopeRead, ScopeWrite), http.MethodDelete, "/api/links/" + uuid.NewString(), "/api/links/{id}", nil, 429, "rate_limited"},
		{"unknown endpoint before 401", "", http.MethodGet, "/api/domains", apiPrefix, nil, 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := e.srv.Count(c.method, c.count, c.status)
			wantError(t, e.do(t, c.method, c.path, c.key, c.body), c.status, c.code, "")
			if got := e.srv.Count(c.method, c.count, c.status) - before; got != 1 {
				t.Errorf("counted %d times as %s %s %d, want once", got, c.method, c.count, c.status)
			}
		})
	}
}

// Requests that name no endpoint share one counter row per API method, and
// one for every other method, so that no client can grow the counters.
func TestUnknownEndpointsShareOneRow(t *testing.T) {
	e := newEnv(t)
	for i := range 50 {
		wantStatus(t, e.do(t, http.MethodGet, fmt.Sprintf("/api/nothing/%d", i), e.fx.APIKey, nil), http.StatusNotFound)
		wantStatus(t, e.do(t, fmt.Sprintf("BREW%d", i), "/api/links", e.fx.APIKey, nil), http.StatusNotFound)
	}
	want := map[CounterKey]int{
		{http.MethodGet, apiPrefix, http.StatusNotFound}: 50,
		{"OTHER", apiPrefix, http.StatusNotFound}:        50,
	}
	if got := e.srv.Counts(); !maps.Equal(got, want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
}

// An answer cut off on purpose is counted as status 0 even when the
// endpoint had begun it, and the abort goes on to the HTTP server, which
// closes the connection.
func TestAbortedAnswerCountedAsClosed(t *testing.T) {
	e := newEnv(t)
	req := httptest.NewRequest(http.MethodPost, "/api/links", nil)
	req.Pattern = "POST /api/links"
	req.Header.Set("Authorization", "Bearer "+e.fx.APIKey)
	answerThenAbort := func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.WriteHeader(http.StatusCreated)
		panic(http.ErrAbortHandler)
	}
	func() {
		defer func() {
			if err, _ := recover().(error); !errors.Is(err, http.ErrAbortHandler) {
				t.Errorf("serveAPI did not pass the abort on: %v", err)
			}
		}()
		e.srv.serveAPI(httptest.NewRecorder(), req, answerThenAbort)
	}()
	if got := e.srv.Counts(); len(got) != 1 || got[CounterKey{http.MethodPost, "/api/links", 0}] != 1 {
		t.Errorf("Counts = %v, want one POST /api/links with status 0", got)
	}
}

// The token is what follows the scheme Bearer, in any case (auth schemes
// are case-insensitive, RFC 9110 §11.1), without surrounding spaces.
func TestBearerToken(t *testing.T) {
	cases := []struct{ name, header, want string }{
		{"Bearer", "Bearer sl_test_1", "sl_test_1"},
		{"lower case scheme", "bearer sl_test_1", "sl_test_1"},
		{"upper case scheme", "BEARER sl_test_1", "sl_test_1"},
		{"spaces around the token", "Bearer   sl_test_1 ", "sl_test_1"},
		{"scheme alone", "Bearer ", ""},
		{"no space after the scheme", "Bearersl_test_1", ""},
		{"token without a scheme", "sl_test_1", ""},
		{"no header", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/api/links", nil)
			if c.header != "" {
				r.Header.Set("Authorization", c.header)
			}
			if got := bearerToken(r); got != c.want {
				t.Errorf("bearerToken(%q) = %q, want %q", c.header, got, c.want)
			}
		})
	}
}

// statusRecorder counts what the client receives: the first status written,
// 200 for a body sent without one, 0 when nothing was sent.
func TestStatusRecorder(t *testing.T) {
	cases := []struct {
		name  string
		steps []int // a status for WriteHeader, 0 for a Write of the body
		want  int
	}{
		{"a body without a status", []int{0}, http.StatusOK},
		{"a status, then the body", []int{http.StatusCreated, 0}, http.StatusCreated},
		{"two statuses", []int{http.StatusCreated, http.StatusInternalServerError}, http.StatusCreated},
		{"a status after the body", []int{0, http.StatusInternalServerError}, http.StatusOK},
		{"nothing", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			under := httptest.NewRecorder()
			rec := &statusRecorder{ResponseWriter: under}
			var body []byte
			for _, step := range c.steps {
				if step != 0 {
					rec.WriteHeader(step)
					continue
				}
				if _, err := rec.Write([]byte("x")); err != nil {
					t.Fatal(err)
				}
				body = append(body, 'x')
			}
			if rec.status != c.want {
				t.Errorf("recorded status %d, want %d", rec.status, c.want)
			}
			if got := under.Body.Bytes(); !slices.Equal(got, body) {
				t.Errorf("the client got %q, want %q", got, body)
			}
		})
	}
}

// UpdateSettings hands change a copy: a change that edits the blocked list
// in place and is then refused leaves the rules in force as they were.
func TestUpdateSettingsChangesACopy(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Filter.Blocked = []string{"blocked.example"} })
	err := e.srv.UpdateSettings(func(s *Settings) {
		s.Filter.Blocked[0] = "example.com"
		s.Limits.Write = 0 // invalid: the change is refused
	})
	if err == nil {
		t.Fatal("UpdateSettings accepted a write limit of 0")
	}
	if got := e.srv.Settings().Filter.Blocked; !slices.Equal(got, []string{"blocked.example"}) {
		t.Errorf("blocked list in force = %v, want [blocked.example]", got)
	}
	e.create(t, "https://example.com/still-allowed")
}

// Settings and SetSettings copy the blocked list both ways: a caller that
// edits what it handed in or got back changes no rule in force.
func TestSettingsShareNoList(t *testing.T) {
	e := newEnv(t)
	mine := []string{"blocked.example"}
	if err := e.srv.SetSettings(testSettings(func(s *Settings) { s.Filter.Blocked = mine })); err != nil {
		t.Fatal(err)
	}
	mine[0] = "example.com"
	e.srv.Settings().Filter.Blocked[0] = "example.com"
	if got := e.srv.Settings().Filter.Blocked; !slices.Equal(got, []string{"blocked.example"}) {
		t.Errorf("blocked list in force = %v, want [blocked.example]", got)
	}
	e.create(t, "https://example.com/still-allowed")
}

// An answer that counted nothing, to a key that has sent nothing, says the
// allowance is whole: X-RateLimit-Reset 0, as EMULATOR.md says.
func TestNothingCountedSaysWhole(t *testing.T) {
	e := newEnv(t)
	for name, r := range map[string]*response{
		"401 to an unknown key":   e.do(t, http.MethodGet, "/api/links", "sk_unknown", nil),
		"403 to a key never used": e.do(t, http.MethodPost, "/api/links", e.fx.ReadKey, e.createBody("https://example.com/")),
	} {
		if got, limit := r.Header.Get("X-RateLimit-Reset"), r.Header.Get("X-RateLimit-Limit"); got != "0" || r.Header.Get("X-RateLimit-Remaining") != limit {
			t.Errorf("%s: Reset %q, Remaining %q of %q; want 0 and the whole limit", name, got, r.Header.Get("X-RateLimit-Remaining"), limit)
		}
	}
}
