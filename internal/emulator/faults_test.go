package emulator

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestScriptedStatusFaults(t *testing.T) {
	cases := []struct {
		status int
		html   bool
		code   string
	}{
		{http.StatusInternalServerError, false, "internal_error"},
		{http.StatusNotFound, false, "not_found"},
		{http.StatusBadRequest, false, "invalid_request"},
		{http.StatusGone, false, "gone"},
		{http.StatusMethodNotAllowed, false, "method_not_allowed"},
		{http.StatusTeapot, false, "i_m_a_teapot"},
		{499, false, "status_499"},
		{http.StatusBadGateway, true, ""},
		{http.StatusServiceUnavailable, true, ""},
		{http.StatusGatewayTimeout, true, ""},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			e := newEnv(t)
			e.srv.InjectFaults(Fault{Kind: FaultStatus, Status: c.status})
			r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
			wantStatus(t, r, c.status)
			wantRateHeaders(t, r)
			if c.html {
				if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.HasPrefix(string(r.Body), "<html>") {
					t.Errorf("proxy answer: %s %q", ct, r.Body)
				}
			} else {
				wantError(t, r, c.status, c.code, "")
			}
			if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
				t.Errorf("a status fault created %d links", n)
			}
			// The script is used up: the next request is served.
			e.create(t, "https://example.com/")
			if got := e.srv.Count(http.MethodPost, "/api/links", c.status); got != 1 {
				t.Errorf("Count(%d) = %d, want 1", c.status, got)
			}
		})
	}
}

func TestBurst429(t *testing.T) {
	e := newEnv(t)
	e.srv.Burst429(3, 7)
	// Any endpoint draws from the burst.
	for _, ep := range []endpoint{
		{method: http.MethodGet, path: "/api/links"},
		{method: http.MethodPost, path: "/api/links", body: e.createBody("https://example.com/")},
		{method: http.MethodGet, path: "/api/analytics/export"},
	} {
		r := e.do(t, ep.method, ep.path, e.fx.APIKey, ep.body)
		wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
		if got := r.Header.Get("Retry-After"); got != "7" {
			t.Errorf("Retry-After = %q, want 7", got)
		}
		wantRateHeaders(t, r)
	}
	e.create(t, "https://example.com/after-the-burst")
	if n := len(e.srv.Links(e.fx.AccountID)); n != 1 {
		t.Errorf("%d links, want 1", n)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 3 {
		t.Errorf("CountStatus(429) = %d, want 3", got)
	}
}

func TestDelayFault(t *testing.T) {
	e := newEnv(t)
	const delay = 100 * time.Millisecond
	e.srv.InjectFaults(Fault{Kind: FaultDelay, Delay: Duration(delay)})
	start := time.Now()
	r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusOK)
	if took := time.Since(start); took < delay {
		t.Errorf("request took %s, want at least %s", took, delay)
	}
	start = time.Now()
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
	if took := time.Since(start); took >= delay {
		t.Errorf("the second request was delayed too (%s)", took)
	}
}

func TestCloseFaults(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		e := newEnv(t)
		e.srv.InjectFaults(Fault{Kind: FaultClose})
		if r, err := e.try(http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/")); err == nil {
			t.Fatalf("no transport error: %s", r)
		}
		if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
			t.Errorf("%d links stored, want 0", n)
		}
		if got := e.srv.Count(http.MethodPost, "/api/links", 0); got != 1 {
			t.Errorf("Count(POST, 0) = %d, want 1", got)
		}
		e.create(t, "https://example.com/")
	})
	t.Run("close after commit", func(t *testing.T) {
		e := newEnv(t)
		e.srv.InjectFaults(Fault{Kind: FaultCloseAfterCommit, Method: http.MethodPost})
		if r, err := e.try(http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/committed", "slug", "committed")); err == nil {
			t.Fatalf("no transport error: %s", r)
		}
		links := e.srv.Links(e.fx.AccountID)
		if len(links) != 1 || links[0].Slug != "committed" {
			t.Fatalf("links = %+v, want the committed one", links)
		}
		if got := e.srv.Count(http.MethodPost, "/api/links", 0); got != 1 {
			t.Errorf("Count(POST, 0) = %d, want 1", got)
		}
		if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusCreated); got != 0 {
			t.Errorf("Count(POST, 201) = %d, want 0", got)
		}
		// A client retrying the POST learns the slug is taken; the list shows it.
		wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/committed", "slug", "committed")), http.StatusConflict, "slug_taken", "slug")
		if got := e.list(t); len(got) != 1 || got[0]["slug"] != "committed" {
			t.Errorf("list = %v", got)
		}
	})
	t.Run("close after commit on delete", func(t *testing.T) {
		e := newEnv(t)
		id := str(e.create(t, "https://example.com/")["id"])
		e.srv.InjectFaults(Fault{Kind: FaultCloseAfterCommit})
		if _, err := e.try(http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil); err == nil {
			t.Fatal("no transport error")
		}
		if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
			t.Errorf("the delete was not committed")
		}
		if got := e.srv.Count(http.MethodDelete, "/api/links/{id}", 0); got != 1 {
			t.Errorf("Count(DELETE, 0) = %d, want 1", got)
		}
	})
}

// answer-before-commit answers 504 at once, before the fraud filter is
// done, and the link is made afterwards: what a client sees when a gateway
// in front of a slow service gives up waiting.
func TestAnswerBeforeCommitFault(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Filter.Delay = Duration(time.Second) })
	e.srv.InjectFaults(Fault{Kind: FaultAnswerBeforeCommit, Method: http.MethodPost})
	r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/later", "slug", "later"))
	wantStatus(t, r, http.StatusGatewayTimeout)
	if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
		t.Fatalf("%d links stored when the 504 came, want none yet: the answer waited for the filter", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e.srv.Links(e.fx.AccountID)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if links := e.srv.Links(e.fx.AccountID); len(links) != 1 || links[0].Slug != "later" {
		t.Fatalf("links = %+v, want the one the 504 did not tell of", links)
	}
}

func TestFaultRestrictions(t *testing.T) {
	e := newEnv(t)
	id := str(e.create(t, "https://example.com/")["id"])
	e.srv.InjectFaults(
		Fault{Kind: FaultStatus, Status: 500, Method: http.MethodDelete, Path: "/api/links/{id}"},
		Fault{Kind: FaultStatus, Status: 503, Path: "/api/analytics/export"},
		Fault{Kind: FaultStatus, Status: 502, Method: "patch"},
	)
	// Unmatched requests pass untouched and leave the script alone.
	e.create(t, "https://example.com/2")
	e.list(t)
	if got := len(e.srv.Faults().Script); got != 3 {
		t.Fatalf("script has %d faults, want 3", got)
	}
	// Requests refused before the endpoint (401, 403, 429) draw no fault.
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+id, "", nil), http.StatusUnauthorized)
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.ReadKey, nil), http.StatusForbidden)
	if got := len(e.srv.Faults().Script); got != 3 {
		t.Fatalf("script has %d faults after refused requests, want 3", got)
	}

	wantStatus(t, e.do(t, http.MethodGet, "/api/analytics/export", e.fx.APIKey, nil), 503)
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/x"}), 502)
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil), 500)
	if got := e.srv.Faults().Script; len(got) != 0 {
		t.Errorf("script left = %+v", got)
	}
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil), http.StatusNoContent)
}

func TestRandomFaultsRepeatable(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.UpdateSettings(func(s *Settings) { s.Limits.Read = 10000 }); err != nil {
		t.Fatal(err)
	}
	plan := FaultPlan{
		Rate:   0.4,
		Seed:   42,
		Random: []Fault{{Kind: FaultStatus, Status: 500}, {Kind: FaultStatus, Status: 503}},
	}
	run := func() string {
		e.srv.SetFaults(plan)
		var out []string
		for range 60 {
			out = append(out, fmt.Sprint(e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil).Status))
		}
		return strings.Join(out, " ")
	}
	first, second := run(), run()
	if first != second {
		t.Errorf("same seed, different faults:\n%s\n%s", first, second)
	}
	n500, n503, n200 := strings.Count(first, "500"), strings.Count(first, "503"), strings.Count(first, "200")
	if n500 == 0 || n503 == 0 || n200 < 20 || n500+n503+n200 != 60 {
		t.Errorf("60 requests at rate 0.4 gave %d×500 %d×503 %d×200", n500, n503, n200)
	}
	plan.Seed = 7
	if third := run(); third == first {
		t.Errorf("another seed gave the same faults")
	}

	// Random faults restricted to a path spare the others.
	// Editing the plan's list, or the copy Faults returns, changes nothing.
	restricted := []Fault{{Kind: FaultStatus, Status: 500, Path: "/api/analytics/export"}}
	e.srv.SetFaults(FaultPlan{Rate: 1, Random: restricted})
	restricted[0].Path = ""
	e.srv.Faults().Random[0].Path = ""
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
	wantStatus(t, e.do(t, http.MethodGet, "/api/analytics/export", e.fx.APIKey, nil), http.StatusInternalServerError)

	// The default mix is used when Random is empty; the zero plan turns faults off.
	e.srv.SetFaults(FaultPlan{Rate: 0.5})
	if got := len(e.srv.Faults().Random); got != len(DefaultRandomFaults()) {
		t.Errorf("default mix has %d faults", got)
	}
	e.srv.SetFaults(FaultPlan{})
	for range 20 {
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
	}
}

func TestCounters(t *testing.T) {
	e := newEnv(t)
	e.create(t, "https://example.com/")
	e.list(t)
	e.list(t)
	e.do(t, http.MethodGet, "/api/links", "", nil)
	e.do(t, http.MethodDelete, "/api/links/nope", e.fx.APIKey, nil)
	e.do(t, http.MethodGet, "/r/go.example.test/nope", "", nil) // visits are not API requests
	want := map[CounterKey]int{
		{http.MethodPost, "/api/links", 201}:        1,
		{http.MethodGet, "/api/links", 200}:         2,
		{http.MethodGet, "/api/links", 401}:         1,
		{http.MethodDelete, "/api/links/{id}", 404}: 1,
	}
	if got := e.srv.Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Counts = %v, want %v", got, want)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links"); got != 3 {
		t.Errorf("Count(GET) = %d, want 3", got)
	}
	if got := e.srv.Count(http.MethodGet, "/api/links", 200, 401); got != 3 {
		t.Errorf("Count(GET, 200, 401) = %d, want 3", got)
	}
	if got := e.srv.TotalRequests(); got != 5 {
		t.Errorf("TotalRequests = %d, want 5", got)
	}
	e.srv.ResetCounts()
	if got := e.srv.TotalRequests(); got != 0 {
		t.Errorf("TotalRequests after reset = %d", got)
	}
}
