package emulator

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const adminToken = "admin-secret"

// admin sends an admin API request with token and decodes the answer into out.
func (e *env) admin(t *testing.T, method, path, token string, body any, out any) *response {
	t.Helper()
	req, err := e.request(method, "/_emulator/"+path, "", body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set(AdminTokenHeader, token)
	}
	r, err := e.send(req)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && r.Status == http.StatusOK {
		if err := json.Unmarshal(r.Body, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, r.Body)
		}
	}
	return r
}

var adminRoutes = []struct{ method, path string }{
	{http.MethodGet, "settings"},
	{http.MethodPut, "settings"},
	{http.MethodGet, "faults"},
	{http.MethodPut, "faults"},
	{http.MethodGet, "counters"},
	{http.MethodDelete, "counters"},
	{http.MethodPost, "fixtures"},
	{http.MethodPost, "accounts/quota"},
	{http.MethodPost, "accounts/api"},
	{http.MethodPost, "keys/revoke"},
	{http.MethodPost, "links/seed"},
	{http.MethodGet, "links"},
}

func TestAdminAuth(t *testing.T) {
	e := newEnvWith(t, Options{Settings: testSettings(), AdminToken: adminToken})
	disabled := newEnv(t)
	for _, rt := range adminRoutes {
		for name, c := range map[string]struct {
			e     *env
			token string
		}{
			"no token":                  {e, ""},
			"wrong token":               {e, "admin-secreT"},
			"API key":                   {e, e.fx.APIKey},
			"admin disabled":            {disabled, ""},
			"admin disabled, any token": {disabled, "anything"},
		} {
			t.Run(rt.method+" "+rt.path+"/"+name, func(t *testing.T) {
				r := c.e.admin(t, rt.method, rt.path, c.token, map[string]any{}, nil)
				wantStatus(t, r, http.StatusUnauthorized)
				if body := r.object(t); body["error"] != "invalid_admin_token" {
					t.Errorf("body = %s", r.Body)
				}
			})
		}
	}
	// Nothing was changed by the refused requests.
	if s := e.srv.Settings(); s.Variants != testSettings().Variants || len(e.srv.Faults().Script) != 0 || len(e.srv.AllLinks()) != 0 {
		t.Errorf("refused admin requests changed the server")
	}
	wantStatus(t, e.admin(t, http.MethodGet, "nope", adminToken, nil, nil), http.StatusNotFound)
}

func TestAdminAPI(t *testing.T) {
	e := newEnvWith(t, Options{Settings: testSettings(), AdminToken: adminToken})

	t.Run("settings", func(t *testing.T) {
		var got Settings
		wantStatus(t, e.admin(t, http.MethodGet, "settings", adminToken, nil, &got), http.StatusOK)
		if !sameJSON(got, testSettings()) {
			t.Errorf("GET settings = %+v", got)
		}
		next := testSettings(func(s *Settings) {
			s.Variants.ObjectEnvelope = "data"
			s.Limits.Window = Duration(90 * time.Second)
		})
		wantStatus(t, e.admin(t, http.MethodPut, "settings", adminToken, next, nil), http.StatusOK)
		if !sameJSON(e.srv.Settings(), next) {
			t.Errorf("settings after PUT = %+v", e.srv.Settings())
		}
		// Durations are written as strings.
		r := e.admin(t, http.MethodGet, "settings", adminToken, nil, nil)
		var raw struct {
			Limits struct{ Window string }
		}
		if err := json.Unmarshal(r.Body, &raw); err != nil || raw.Limits.Window != "1m30s" {
			t.Errorf("window = %q (%v)", raw.Limits.Window, err)
		}
		// Invalid or unknown settings are refused and change nothing.
		bad := next
		bad.Variants.Paging = "pages"
		wantStatus(t, e.admin(t, http.MethodPut, "settings", adminToken, bad, nil), http.StatusBadRequest)
		wantStatus(t, e.admin(t, http.MethodPut, "settings", adminToken, `{"variants":{"colour":"red"}}`, nil), http.StatusBadRequest)
		wantStatus(t, e.admin(t, http.MethodPut, "settings", adminToken, `{"limits":{"write":5,"read":5,"window":"1s"}}`, nil), http.StatusBadRequest)
		wantStatus(t, e.admin(t, http.MethodPut, "settings", adminToken, `{`, nil), http.StatusBadRequest)
		// A body that leaves a setting out is refused, naming it, rather
		// than taken as its zero value (no fraud filter delay).
		for drop, named := range map[string]string{"filter": "filter", "variants.pageSize": "variants.pageSize"} {
			var whole map[string]any
			raw, _ := json.Marshal(next)
			if err := json.Unmarshal(raw, &whole); err != nil {
				t.Fatal(err)
			}
			if section, key, nested := strings.Cut(drop, "."); nested {
				delete(whole[section].(map[string]any), key)
			} else {
				delete(whole, drop)
			}
			r := e.admin(t, http.MethodPut, "settings", adminToken, whole, nil)
			if wantStatus(t, r, http.StatusBadRequest); !strings.Contains(string(r.Body), "setting "+named+" is missing") {
				t.Errorf("settings without %s: %s, want the setting named", drop, r.Body)
			}
		}
		if !sameJSON(e.srv.Settings(), next) {
			t.Errorf("a refused PUT changed the settings: %+v", e.srv.Settings())
		}
		// The change is in force.
		r = e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
		wantStatus(t, r, http.StatusCreated)
		if _, ok := r.object(t)["data"]; !ok {
			t.Errorf("objectEnvelope data not in force: %s", r.Body)
		}
		if err := e.srv.SetSettings(testSettings()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("faults", func(t *testing.T) {
		plan := `{"script":[{"kind":"status","status":503,"path":"/api/links","method":"GET"},{"kind":"delay","delay":"10ms"}],"seed":3}`
		var got FaultPlan
		wantStatus(t, e.admin(t, http.MethodPut, "faults", adminToken, plan, &got), http.StatusOK)
		if len(got.Script) != 2 || got.Script[0].Status != 503 || time.Duration(got.Script[1].Delay) != 10*time.Millisecond {
			t.Errorf("PUT faults = %+v", got)
		}
		// A fault the emulator could not do as asked is refused, naming what.
		for _, bad := range []struct{ plan, says string }{
			{`{"script":[{"kind":"status"}]}`, "status 0 is not an error status"},
			{`{"script":[{"kind":"status","status":200}]}`, "status 200 is not an error status"},
			{`{"script":[{"kind":"bogus"}]}`, "is not one of status, delay, close"},
			{`{"script":[{"kind":"status","status":429,"retryAfter":-3}]}`, "a negative wait"},
			{`{"rate":1.5,"random":[{"kind":"close"}]}`, "rate 1.5 is not between 0 and 1"},
			// A fault that could never fire is refused, not kept forever.
			{`{"script":[{"kind":"close","path":"/api/links/6f9619ff-8b86-d011-b42d-00cf4fc964ff"}]}`, `is not one of the API's path patterns (a link's ID is {id})`},
			{`{"script":[{"kind":"close","method":"FETCH"}]}`, `is not one of the API's: GET, HEAD, POST, PATCH, DELETE`},
		} {
			r := e.admin(t, http.MethodPut, "faults", adminToken, bad.plan, nil)
			if wantStatus(t, r, http.StatusBadRequest); !strings.Contains(string(r.Body), bad.says) {
				t.Errorf("PUT faults %s: %s, want it to say %q", bad.plan, r.Body, bad.says)
			}
		}
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusServiceUnavailable)
		wantStatus(t, e.admin(t, http.MethodGet, "faults", adminToken, nil, &got), http.StatusOK)
		if len(got.Script) != 1 || got.Script[0].Kind != FaultDelay {
			t.Errorf("GET faults = %+v", got)
		}
		wantStatus(t, e.admin(t, http.MethodPut, "faults", adminToken, `{}`, nil), http.StatusOK)
		if got := e.srv.Faults(); len(got.Script) != 0 || got.Rate != 0 {
			t.Errorf("{} did not turn faults off: %+v", got)
		}
		wantStatus(t, e.admin(t, http.MethodPut, "faults", adminToken, `{"rate":"high"}`, nil), http.StatusBadRequest)
	})

	t.Run("counters", func(t *testing.T) {
		wantStatus(t, e.admin(t, http.MethodDelete, "counters", adminToken, nil, nil), http.StatusOK)
		e.list(t)
		e.do(t, http.MethodGet, "/api/links", "", nil)
		var rows []CounterRow
		wantStatus(t, e.admin(t, http.MethodGet, "counters", adminToken, nil, &rows), http.StatusOK)
		want := []CounterRow{
			{CounterKey{http.MethodGet, "/api/links", 200}, 1},
			{CounterKey{http.MethodGet, "/api/links", 401}, 1},
		}
		if !sameJSON(rows, want) {
			t.Errorf("counters = %+v, want %+v", rows, want)
		}
		wantStatus(t, e.admin(t, http.MethodDelete, "counters", adminToken, nil, nil), http.StatusOK)
		if got := e.srv.TotalRequests(); got != 0 {
			t.Errorf("TotalRequests after DELETE = %d", got)
		}
		if r := e.admin(t, http.MethodGet, "counters", adminToken, nil, nil); strings.TrimSpace(string(r.Body)) != "[]" {
			t.Errorf("GET counters after DELETE = %s, want []", r.Body)
		}
	})

	var fx Fixture
	t.Run("fixtures", func(t *testing.T) {
		wantStatus(t, e.admin(t, http.MethodPost, "fixtures", adminToken, map[string]any{"name": "acme", "host": "Acme.Example.Test"}, &fx), http.StatusOK)
		if fx.AccountID == "" || fx.DomainID == "" || fx.APIKey == "" || fx.ReadKey == "" || fx.WriteKey == "" || fx.DomainHost != "acme.example.test" {
			t.Fatalf("fixture = %+v", fx)
		}
		r := e.do(t, http.MethodPost, "/api/links", fx.APIKey, map[string]any{"destination": "https://acme.example/", "domainId": fx.DomainID, "slug": "hello"})
		wantStatus(t, r, http.StatusCreated)
		if got := r.object(t)["shortUrl"]; got != "https://acme.example.test/hello" {
			t.Errorf("shortUrl = %v", got)
		}
		wantError(t, e.do(t, http.MethodPost, "/api/links", fx.ReadKey, map[string]any{"destination": "https://acme.example/", "domainId": fx.DomainID}), http.StatusForbidden, "insufficient_scope", "")
		wantError(t, e.do(t, http.MethodGet, "/api/links", fx.WriteKey, nil), http.StatusForbidden, "insufficient_scope", "")
		// A host that exists already is refused.
		wantStatus(t, e.admin(t, http.MethodPost, "fixtures", adminToken, map[string]any{"name": "dup", "host": "acme.example.test"}, nil), http.StatusBadRequest)
	})

	t.Run("links/seed and links", func(t *testing.T) {
		var got map[string]int
		wantStatus(t, e.admin(t, http.MethodPost, "links/seed", adminToken, map[string]any{"domainId": fx.DomainID, "prefix": "bulk", "count": 5}, &got), http.StatusOK)
		if got["seeded"] != 5 {
			t.Errorf("seeded = %v", got)
		}
		r := e.do(t, http.MethodGet, "/api/links", fx.APIKey, nil)
		if links := r.array(t); len(links) != 6 || links[1]["slug"] != "bulk-0" || links[5]["destination"] != "https://example.com/bulk/4" {
			t.Errorf("list after seeding = %s", r.Body)
		}
		var all []Link
		wantStatus(t, e.admin(t, http.MethodGet, "links", adminToken, nil, &all), http.StatusOK)
		if len(all) != len(e.srv.AllLinks()) || len(all) < 6 {
			t.Errorf("GET links has %d links", len(all))
		}
		wantStatus(t, e.admin(t, http.MethodPost, "links/seed", adminToken, map[string]any{"domainId": fx.DomainID, "prefix": "bulk", "count": 1}, nil), http.StatusBadRequest)
		wantStatus(t, e.admin(t, http.MethodPost, "links/seed", adminToken, map[string]any{"domainId": "nope", "prefix": "x", "count": 1}, nil), http.StatusBadRequest)
		// Slugs the API would refuse are not seeded either.
		wantStatus(t, e.admin(t, http.MethodPost, "links/seed", adminToken, map[string]any{"domainId": fx.DomainID, "prefix": "bad prefix", "count": 1}, nil), http.StatusBadRequest)
	})

	t.Run("accounts/quota", func(t *testing.T) {
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/quota", adminToken, map[string]any{"accountId": fx.AccountID, "quota": 1}, nil), http.StatusOK)
		// One link was created through the API this month.
		wantError(t, e.do(t, http.MethodPost, "/api/links", fx.APIKey, map[string]any{"destination": "https://acme.example/", "domainId": fx.DomainID}), http.StatusPaymentRequired, "link_quota", "")
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/quota", adminToken, map[string]any{"accountId": fx.AccountID, "quota": 0}, nil), http.StatusOK)
		wantStatus(t, e.do(t, http.MethodPost, "/api/links", fx.APIKey, map[string]any{"destination": "https://acme.example/", "domainId": fx.DomainID}), http.StatusCreated)
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/quota", adminToken, map[string]any{"accountId": "nope", "quota": 1}, nil), http.StatusBadRequest)
	})

	t.Run("accounts/api", func(t *testing.T) {
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/api", adminToken, map[string]any{"accountId": fx.AccountID, "enabled": false}, nil), http.StatusOK)
		wantError(t, e.do(t, http.MethodGet, "/api/links", fx.APIKey, nil), http.StatusUnauthorized, "invalid_api_key", "")
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/api", adminToken, map[string]any{"accountId": fx.AccountID, "enabled": true}, nil), http.StatusOK)
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", fx.APIKey, nil), http.StatusOK)
		wantStatus(t, e.admin(t, http.MethodPost, "accounts/api", adminToken, map[string]any{"accountId": "nope", "enabled": true}, nil), http.StatusBadRequest)
	})

	t.Run("keys/revoke", func(t *testing.T) {
		wantStatus(t, e.admin(t, http.MethodPost, "keys/revoke", adminToken, map[string]any{"key": fx.ReadKey}, nil), http.StatusOK)
		wantError(t, e.do(t, http.MethodGet, "/api/links", fx.ReadKey, nil), http.StatusUnauthorized, "invalid_api_key", "")
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", fx.APIKey, nil), http.StatusOK)
		wantStatus(t, e.admin(t, http.MethodPost, "keys/revoke", adminToken, map[string]any{"key": "nope"}, nil), http.StatusBadRequest)
	})
}

// A large account's listing is written a link at a time, in pieces of a
// few kilobytes, not built whole first: so built, a million links raised
// the emulator's peak memory by 1.2 GB (by 0.14 GB streamed).
func TestAdminLinksAreStreamed(t *testing.T) {
	e := newEnvWith(t, Options{Settings: testSettings(), AdminToken: adminToken})
	if r := e.admin(t, http.MethodGet, "links", adminToken, nil, nil); string(r.Body) != "[]\n" {
		t.Errorf("GET links with none stored = %q, want []", r.Body)
	}
	if _, err := e.srv.FillLinks(e.fx.DomainID, "bulk", 50_000); err != nil {
		t.Fatal(err)
	}
	var all []Link
	wantStatus(t, e.admin(t, http.MethodGet, "links", adminToken, nil, &all), http.StatusOK)
	if !sameJSON(all, e.srv.AllLinks()) || len(all) != 50_000 {
		t.Fatalf("GET links: %d links, not the %d stored, oldest first", len(all), len(e.srv.AllLinks()))
	}

	req, _ := http.NewRequest(http.MethodGet, "/_emulator/links", nil)
	req.Header.Set(AdminTokenHeader, adminToken)
	w := &countingWriter{}
	e.srv.ServeHTTP(w, req)
	if w.largest > 64<<10 {
		t.Errorf("the %d bytes of links were written in pieces of up to %d bytes, want at most 64 KiB each", w.n, w.largest)
	}
}

// A stored link that cannot be written as JSON (a data file written by hand
// with a time past the year 9999) breaks the admin listing off: the client
// reads an error, not an answer that is not JSON.
func TestAdminLinksBreakOffOnALinkThatIsNotJSON(t *testing.T) {
	e := newEnvWith(t, Options{Settings: testSettings(), AdminToken: adminToken})
	e.seedLinks(t, e.fx.DomainID, "fine", 2)
	beyond := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	e.srv.mu.Lock()
	e.srv.st.addLink(&Link{ID: "broken", AccountID: e.fx.AccountID, DomainID: e.fx.DomainID, Slug: "broken", Destination: "https://example.com/", ExpiresAt: &beyond, Seq: 1 << 40})
	e.srv.mu.Unlock()
	server := httptest.NewServer(e.srv)
	t.Cleanup(server.Close)
	req, _ := http.NewRequest(http.MethodGet, server.URL+"/_emulator/links", nil)
	req.Header.Set(AdminTokenHeader, adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // broken off before the status: as good
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("GET links read whole (%d, %d bytes, valid JSON: %v), want the answer broken off", resp.StatusCode, len(body), json.Valid(body))
	}
}
