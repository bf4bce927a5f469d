// The service's error contract: each error code (401, 403, 404, 422, 402,
// 429, 409, 400) checked on the operations it applies to (endpoints lists
// all five), with its body and rate-limit headers, and a store that the
// refused requests left unchanged. The tests stand together, not in the
// _test.go of the file that answers each error, because one error is
// answered by several files (server.go checks the key, the scope and the
// rate limit; links.go and clicks.go the request itself) and the contract
// is read as a whole, in the order the service checks (see doc.go).

package emulator

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// endpoint is one of the five API operations, ready to send.
type endpoint struct {
	name   string
	method string
	path   string
	body   any
	write  bool
}

// endpoints lists the five operations; PATCH and DELETE address linkID.
func (e *env) endpoints(linkID string) []endpoint {
	return []endpoint{
		{"create", http.MethodPost, "/api/links", e.createBody("https://example.com/new"), true},
		{"list", http.MethodGet, "/api/links", nil, false},
		{"change", http.MethodPatch, "/api/links/" + linkID, map[string]any{"destination": "https://example.com/changed"}, true},
		{"delete", http.MethodDelete, "/api/links/" + linkID, nil, true},
		{"export", http.MethodGet, "/api/analytics/export", nil, false},
	}
}

func TestInvalidAPIKey(t *testing.T) {
	e := newEnv(t)
	link := e.create(t, "https://example.com/kept")
	revoked, err := e.srv.AddKey(e.fx.AccountID, ScopeRead, ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.RevokeKey(revoked); err != nil {
		t.Fatal(err)
	}
	// An account whose plan no longer includes the API, addressing its own link.
	lapsed := e.seedFixture(t, "lapsed", "lapsed.example.test")
	lapsedLinks := e.seedLinks(t, lapsed.DomainID, "l", 1)
	if err := e.srv.SetAPIEnabled(lapsed.AccountID, false); err != nil {
		t.Fatal(err)
	}

	keys := []struct {
		name, key, linkID string
	}{
		{"missing", "", str(link["id"])},
		{"unknown", "sl_test_00000000000000000000000000000000", str(link["id"])},
		{"revoked", revoked, str(link["id"])},
		{"plan without API", lapsed.APIKey, lapsedLinks[0].ID},
	}
	for _, k := range keys {
		for _, ep := range e.endpoints(k.linkID) {
			t.Run(k.name+"/"+ep.name, func(t *testing.T) {
				r := e.do(t, ep.method, ep.path, k.key, ep.body)
				wantError(t, r, http.StatusUnauthorized, "invalid_api_key", "")
				limit, remaining, _ := wantRateHeaders(t, r)
				if remaining != limit {
					t.Errorf("a 401 consumed allowance: remaining %d of %d", remaining, limit)
				}
			})
		}
	}

	t.Run("not a Bearer token", func(t *testing.T) {
		req, err := e.request(http.MethodGet, "/api/links", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Basic "+e.fx.APIKey)
		r, err := e.send(req)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, r, http.StatusUnauthorized, "invalid_api_key", "")
	})

	// Nothing was changed by the refused requests.
	if got := e.srv.Links(e.fx.AccountID); len(got) != 1 || got[0].Destination != "https://example.com/kept" {
		t.Errorf("links after refused requests = %+v", got)
	}
	if got := e.srv.Links(lapsed.AccountID); len(got) != 1 || got[0].Destination != lapsedLinks[0].Destination {
		t.Errorf("lapsed account's links after refused requests = %+v", got)
	}
	// Re-enabling the plan makes the key work again.
	if err := e.srv.SetAPIEnabled(lapsed.AccountID, true); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", lapsed.APIKey, nil), http.StatusOK)
}

func TestInsufficientScope(t *testing.T) {
	e := newEnv(t)
	link := e.create(t, "https://example.com/kept")
	for _, ep := range e.endpoints(str(link["id"])) {
		key, scope := e.fx.WriteKey, ScopeRead
		if ep.write {
			key, scope = e.fx.ReadKey, ScopeWrite
		}
		t.Run(ep.name, func(t *testing.T) {
			r := e.do(t, ep.method, ep.path, key, ep.body)
			wantError(t, r, http.StatusForbidden, "insufficient_scope", "")
			if msg := str(r.object(t)["message"]); !strings.Contains(msg, scope) {
				t.Errorf("message %q does not name the missing scope %s", msg, scope)
			}
			wantRateHeaders(t, r)
		})
	}
	if got := e.srv.Links(e.fx.AccountID); len(got) != 1 || got[0].Destination != "https://example.com/kept" {
		t.Errorf("links after refused requests = %+v", got)
	}
}

// A 403 reports the allowance of the key's current window for the class.
func TestInsufficientScopeReportsCurrentWindow(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits = Limits{Write: 5, Read: 3, Window: Duration(10 * time.Second)} })
	key, err := e.srv.AddKey(e.fx.AccountID, ScopeRead)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", key, nil), http.StatusOK)
	}
	if err := e.srv.SetKeyScopes(key, ScopeWrite); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(4 * time.Second)
	r := e.do(t, http.MethodGet, "/api/links", key, nil)
	wantError(t, r, http.StatusForbidden, "insufficient_scope", "")
	if limit, remaining, reset := wantRateHeaders(t, r); limit != 3 || remaining != 0 || reset != 6 {
		t.Errorf("403 inside the window: limit %d remaining %d reset %d, want 3 0 6", limit, remaining, reset)
	}
	e.clock.Advance(7 * time.Second) // the window is over
	r = e.do(t, http.MethodGet, "/api/links", key, nil)
	wantError(t, r, http.StatusForbidden, "insufficient_scope", "")
	if limit, remaining, _ := wantRateHeaders(t, r); limit != 3 || remaining != 3 {
		t.Errorf("403 after the window: limit %d remaining %d, want 3 3", limit, remaining)
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t)
	other := e.seedFixture(t, "other", "other.example.test")
	r := e.do(t, http.MethodPost, "/api/links", other.APIKey, map[string]any{"destination": "https://other.example.com/", "domainId": other.DomainID})
	wantStatus(t, r, http.StatusCreated)
	foreign := str(r.object(t)["id"])
	mine := str(e.create(t, "https://example.com/mine")["id"])

	cases := []struct {
		name, method, path string
		body               any
	}{
		{"change unknown id", http.MethodPatch, "/api/links/" + uuid.NewString(), map[string]any{"destination": "https://example.com/x"}},
		{"change non-UUID id", http.MethodPatch, "/api/links/nope", map[string]any{"destination": "https://example.com/x"}},
		{"change another account's link", http.MethodPatch, "/api/links/" + foreign, map[string]any{"destination": "https://example.com/x"}},
		{"delete unknown id", http.MethodDelete, "/api/links/" + uuid.NewString(), nil},
		{"delete non-UUID id", http.MethodDelete, "/api/links/nope", nil},
		{"delete another account's link", http.MethodDelete, "/api/links/" + foreign, nil},
		{"export unknown linkId", http.MethodGet, "/api/analytics/export?linkId=" + uuid.NewString(), nil},
		{"export another account's link", http.MethodGet, "/api/analytics/export?linkId=" + foreign, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, c.method, c.path, e.fx.APIKey, c.body)
			wantError(t, r, http.StatusNotFound, "not_found", "")
			wantRateHeaders(t, r)
		})
	}

	if got := ids(e.list(t)); len(got) != 1 || got[0] != mine {
		t.Errorf("list = %v, want only %s (never another account's link)", got, mine)
	}
	if got := e.srv.Links(other.AccountID); len(got) != 1 || got[0].ID != foreign || got[0].Destination != "https://other.example.com/" {
		t.Errorf("the other account's link was touched: %+v", got)
	}
}

func TestBlockedByFilter(t *testing.T) {
	e := newEnv(t) // default rules: host blocked.example, glob *phishing*
	link := e.create(t, "https://example.com/start")
	id := str(link["id"])
	blocked := []struct{ name, dest, rule string }{
		{"host", "https://blocked.example/offer", "blocked.example"},
		{"subdomain of host", "http://www.blocked.example/", "blocked.example"},
		{"host in capitals", "https://BLOCKED.Example/x", "blocked.example"},
		{"host with trailing dot", "https://blocked.example./x", "blocked.example"},
		{"glob in host", "https://phishing.example.net/login", "*phishing*"},
		{"glob in path", "https://example.org/kits/phishing/index.html", "*phishing*"},
		{"glob in capitals", "https://example.org/PHISHING", "*phishing*"},
	}
	for _, c := range blocked {
		t.Run("create/"+c.name, func(t *testing.T) {
			r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody(c.dest))
			wantError(t, r, http.StatusUnprocessableEntity, "blocked_by_filter", "destination")
			if msg := str(r.object(t)["message"]); !strings.Contains(msg, c.rule) {
				t.Errorf("message %q does not name the rule %q", msg, c.rule)
			}
			wantRateHeaders(t, r)
		})
		t.Run("change/"+c.name, func(t *testing.T) {
			r := e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": c.dest})
			wantError(t, r, http.StatusUnprocessableEntity, "blocked_by_filter", "destination")
		})
	}
	if got := e.srv.Links(e.fx.AccountID); len(got) != 1 || got[0].Destination != "https://example.com/start" {
		t.Errorf("blocked destinations changed the store: %+v", got)
	}

	allowed := []string{
		"https://notblocked.example/",     // not a subdomain
		"https://blocked.example.com/",    // a different host
		"https://example.com/fishing-rod", // no match of the glob
	}
	for _, dest := range allowed {
		t.Run("allowed/"+dest, func(t *testing.T) {
			e.create(t, dest)
			wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": dest}), http.StatusOK)
		})
	}

	t.Run("configured rules", func(t *testing.T) {
		if err := e.srv.UpdateSettings(func(s *Settings) { s.Filter.Blocked = []string{"evil.test", "https://*.example/free-*"} }); err != nil {
			t.Fatal(err)
		}
		wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://a.evil.test/")), http.StatusUnprocessableEntity, "blocked_by_filter", "destination")
		wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://shop.example/free-money/now")), http.StatusUnprocessableEntity, "blocked_by_filter", "destination")
		e.create(t, "https://blocked.example/now-allowed")
		e.create(t, "https://shop.example/paid")
	})
}

func TestLinkQuota(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 2); err != nil {
		t.Fatal(err)
	}
	first := e.create(t, "https://example.com/1")
	e.create(t, "https://example.com/2")
	r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/3"))
	wantError(t, r, http.StatusPaymentRequired, "link_quota", "")
	wantRateHeaders(t, r)
	if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
		t.Errorf("%d links stored, want 2", n)
	}
	// Deleting does not give the month's allowance back; other writes go on.
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+str(first["id"]), e.fx.APIKey, map[string]any{"destination": "https://example.com/1b"}), http.StatusOK)
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+str(first["id"]), e.fx.APIKey, nil), http.StatusNoContent)
	wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/3")), http.StatusPaymentRequired, "link_quota", "")
	// The next calendar month starts afresh.
	e.clock.Advance(31 * 24 * time.Hour)
	e.create(t, "https://example.com/april")
	// Quota 0 is unlimited.
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 0); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e.create(t, "https://example.com/unlimited/"+strconv.Itoa(i))
	}
}

func TestRateLimitedEveryEndpoint(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits = Limits{Write: 2, Read: 3, Window: Duration(time.Minute)} })
	links := e.seedLinks(t, e.fx.DomainID, "rl", 1)
	for _, ep := range e.endpoints(links[0].ID) {
		t.Run(ep.name, func(t *testing.T) {
			key, err := e.srv.AddKey(e.fx.AccountID, ScopeRead, ScopeWrite)
			if err != nil {
				t.Fatal(err)
			}
			limit := 3
			if ep.write {
				limit = 2
			}
			for i := range limit {
				r := e.do(t, ep.method, ep.path, key, ep.body)
				if r.Status == http.StatusTooManyRequests {
					t.Fatalf("request %d answered 429 within the limit %d", i+1, limit)
				}
			}
			r := e.do(t, ep.method, ep.path, key, ep.body)
			wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
			if got := r.Header.Get("Retry-After"); got != "60" {
				t.Errorf("Retry-After = %q, want 60", got)
			}
			if l, rem, reset := wantRateHeaders(t, r); l != limit || rem != 0 || reset != 60 {
				t.Errorf("rate headers %d/%d/%d, want %d/0/60", l, rem, reset, limit)
			}
		})
	}
}

func TestSlugTaken(t *testing.T) {
	e := newEnv(t)
	first := e.create(t, "https://example.com/a", "slug", "spring")
	r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/b", "slug", "spring"))
	wantError(t, r, http.StatusConflict, "slug_taken", "slug")
	wantRateHeaders(t, r)
	if n := len(e.srv.Links(e.fx.AccountID)); n != 1 {
		t.Fatalf("%d links after a slug conflict, want 1", n)
	}
	// Unique per domain: the same slug on another domain is fine.
	second, err := e.srv.AddDomain(e.fx.AccountID, "second.example.test")
	if err != nil {
		t.Fatal(err)
	}
	r = e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, map[string]any{"destination": "https://example.com/c", "domainId": second, "slug": "spring"})
	wantStatus(t, r, http.StatusCreated)
	if got := str(r.object(t)["shortUrl"]); got != "https://second.example.test/spring" {
		t.Errorf("shortUrl = %q", got)
	}
	// A deleted link frees its slug.
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+str(first["id"]), e.fx.APIKey, nil), http.StatusNoContent)
	e.create(t, "https://example.com/d", "slug", "spring")
}

func TestInvalidRequest(t *testing.T) {
	// More refused writes than one window of the default limit allows:
	// each case must meet the validation, not the rate limit.
	e := newEnv(t, func(s *Settings) { s.Limits.Write = 1000 })
	other := e.seedFixture(t, "other", "other.example.test")
	link := e.create(t, "https://example.com/start")
	id := str(link["id"])
	dom := e.fx.DomainID
	create := func(fields ...any) map[string]any { return e.createBody("https://example.com/", fields...) }

	cases := []struct {
		name   string
		method string
		path   string
		body   any
		field  string
	}{
		// create
		{"create malformed JSON", "POST", "/api/links", `{"destination": "https://example.com/",`, "body"},
		{"create not an object", "POST", "/api/links", `["https://example.com/"]`, "body"},
		{"create null", "POST", "/api/links", `null`, "body"},
		{"create empty body", "POST", "/api/links", ``, "body"},
		{"create trailing garbage", "POST", "/api/links", `{"destination":"https://example.com/","domainId":"` + dom + `"} x`, "body"},
		{"create missing destination", "POST", "/api/links", map[string]any{"domainId": dom}, "destination"},
		{"create empty destination", "POST", "/api/links", map[string]any{"destination": "", "domainId": dom}, "destination"},
		{"create ftp destination", "POST", "/api/links", map[string]any{"destination": "ftp://example.com/file", "domainId": dom}, "destination"},
		{"create relative destination", "POST", "/api/links", map[string]any{"destination": "/relative/path", "domainId": dom}, "destination"},
		{"create schemeless destination", "POST", "/api/links", map[string]any{"destination": "example.com/x", "domainId": dom}, "destination"},
		{"create javascript destination", "POST", "/api/links", map[string]any{"destination": "javascript:alert(1)", "domainId": dom}, "destination"},
		{"create destination without host", "POST", "/api/links", map[string]any{"destination": "https:///path", "domainId": dom}, "destination"},
		{"create destination with a port and no host", "POST", "/api/links", map[string]any{"destination": "http://:80/", "domainId": dom}, "destination"},
		{"create body not UTF-8", "POST", "/api/links", `{"destination":"https://example.com/` + "\xff" + `","domainId":"` + dom + `"}`, "body"},
		{"create field given twice", "POST", "/api/links", `{"destination":"https://example.com/","domainId":"` + dom + `","slug":"a","slug":"b"}`, "slug"},
		{"create destination with a space", "POST", "/api/links", map[string]any{"destination": "https://example.com/a b", "domainId": dom}, "destination"},
		{"create destination with a line break", "POST", "/api/links", map[string]any{"destination": "https://example.com/a\nb", "domainId": dom}, "destination"},
		{"create destination too long", "POST", "/api/links", map[string]any{"destination": "https://example.com/" + strings.Repeat("a", 2030), "domainId": dom}, "destination"},
		{"create destination of 2049 characters", "POST", "/api/links", map[string]any{"destination": "https://example.com/" + strings.Repeat("é", 2049-20), "domainId": dom}, "destination"},
		{"create destination wrong type", "POST", "/api/links", map[string]any{"destination": 42, "domainId": dom}, "destination"},
		{"create destination null", "POST", "/api/links", map[string]any{"destination": nil, "domainId": dom}, "destination"},
		{"create unknown field", "POST", "/api/links", create("title", "Spring"), "title"},
		{"create field name in other case", "POST", "/api/links", map[string]any{"destination": "https://example.com/", "DomainID": dom}, "DomainID"},
		{"create utm", "POST", "/api/links", create("utm", map[string]any{"source": "news"}), "utm"},
		{"create missing domainId", "POST", "/api/links", map[string]any{"destination": "https://example.com/"}, "domainId"},
		{"create domainId not a UUID", "POST", "/api/links", create("domainId", "go.example.test"), "domainId"},
		{"create domainId wrong type", "POST", "/api/links", create("domainId", 7), "domainId"},
		{"create unknown domainId", "POST", "/api/links", create("domainId", uuid.NewString()), "domainId"},
		{"create domain of another account", "POST", "/api/links", create("domainId", other.DomainID), "domainId"},
		{"create slug with space", "POST", "/api/links", create("slug", "spring sale"), "slug"},
		{"create slug with slash", "POST", "/api/links", create("slug", "spring/sale"), "slug"},
		{"create slug of 65 characters", "POST", "/api/links", create("slug", strings.Repeat("s", 65)), "slug"},
		{"create empty slug", "POST", "/api/links", create("slug", ""), "slug"},
		{"create slug with non-ASCII", "POST", "/api/links", create("slug", "frühling"), "slug"},
		{"create slug with trailing newline", "POST", "/api/links", create("slug", "spring\n"), "slug"},
		{"create slug wrong type", "POST", "/api/links", create("slug", 12), "slug"},
		{"create expiresAt not a time", "POST", "/api/links", create("expiresAt", "tomorrow"), "expiresAt"},
		{"create expiresAt date only", "POST", "/api/links", create("expiresAt", "2027-01-31"), "expiresAt"},
		{"create expiresAt without zone", "POST", "/api/links", create("expiresAt", "2027-01-31T23:59:59"), "expiresAt"},
		{"create expiresAt wrong type", "POST", "/api/links", create("expiresAt", 1800000000), "expiresAt"},
		{"create expiresAt with an offset", "POST", "/api/links", create("expiresAt", "2027-02-01T01:59:59.000+02:00"), "expiresAt"},
		{"create expiresAt without milliseconds", "POST", "/api/links", create("expiresAt", "2027-01-31T23:59:59Z"), "expiresAt"},
		{"create expiresAt in lower case", "POST", "/api/links", create("expiresAt", "2027-01-31t23:59:59.000z"), "expiresAt"},
		// change destination
		{"change malformed JSON", "PATCH", "/api/links/" + id, `{"destination":`, "body"},
		{"change missing destination", "PATCH", "/api/links/" + id, map[string]any{}, "destination"},
		{"change null", "PATCH", "/api/links/" + id, `null`, "body"},
		{"change ftp destination", "PATCH", "/api/links/" + id, map[string]any{"destination": "ftp://example.com/"}, "destination"},
		{"change relative destination", "PATCH", "/api/links/" + id, map[string]any{"destination": "relative"}, "destination"},
		{"change javascript destination", "PATCH", "/api/links/" + id, map[string]any{"destination": "javascript:alert(1)"}, "destination"},
		{"change destination wrong type", "PATCH", "/api/links/" + id, map[string]any{"destination": true}, "destination"},
		{"change slug", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "slug": "new"}, "slug"},
		{"change domainId", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "domainId": dom}, "domainId"},
		{"change expiresAt", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "expiresAt": "2027-01-31T23:59:59.000Z"}, "expiresAt"},
		{"change unknown field", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "color": "red"}, "color"},
		{"change utm a string", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "utm": "utm_source=x"}, "utm"},
		{"change utm an array", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "utm": []string{"x"}}, "utm"},
		{"change utm wrong value type", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "utm": map[string]any{"source": 5}}, "utm"},
		{"change utm unknown key", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "utm": map[string]any{"utm_source": "x"}}, "utm"},
		{"change utm key given twice", "PATCH", "/api/links/" + id, `{"destination":"https://example.com/","utm":{"source":"a","source":"b"}}`, "utm"},
		{"change utm key in capitals", "PATCH", "/api/links/" + id, map[string]any{"destination": "https://example.com/", "utm": map[string]any{"Medium": "email"}}, "utm"},
		// export
		{"export linkId not a UUID", "GET", "/api/analytics/export?linkId=abc", nil, "linkId"},
		{"export empty linkId", "GET", "/api/analytics/export?linkId=", nil, "linkId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, c.method, c.path, e.fx.APIKey, c.body)
			wantError(t, r, http.StatusBadRequest, "invalid_request", c.field)
			wantRateHeaders(t, r)
		})
	}
	if got := e.srv.Links(e.fx.AccountID); len(got) != 1 || got[0].Destination != "https://example.com/start" || got[0].UTM != nil {
		t.Errorf("invalid requests changed the store: %+v", got)
	}
}
