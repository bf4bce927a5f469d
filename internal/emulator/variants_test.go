// One test per switch of Settings.Variants, the answers the specification
// leaves open (see doc.go and DESIGN.md). The tests are grouped by switch,
// not by source file, because a switch cuts across files: the envelopes,
// field and UTM styles and time formats change what render.go writes for
// links.go's handlers, paging runs through render.go and churn.go, the
// success statuses are links.go's, WriteGrantsRead changes server.go's
// scope check and HTMLErrors every error render.go writes.

package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestObjectEnvelope(t *testing.T) {
	for _, env := range []string{"data", "link"} {
		t.Run(env, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.ObjectEnvelope = env })
			unwrap := func(r *response) map[string]any {
				t.Helper()
				body := r.object(t)
				wantKeys(t, body, env)
				inner, ok := body[env].(map[string]any)
				if !ok {
					t.Fatalf("%s is not an object: %s", env, r.Body)
				}
				wantKeys(t, inner, canonicalFields...)
				return inner
			}
			r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
			wantStatus(t, r, http.StatusCreated)
			id := str(unwrap(r)["id"])
			r = e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/2"})
			wantStatus(t, r, http.StatusOK)
			if l := unwrap(r); l["id"] != id || l["destination"] != "https://example.com/2" {
				t.Errorf("changed link = %v", l)
			}
			// Lists are not affected by the object envelope.
			if got := e.list(t); len(got) != 1 {
				t.Errorf("list = %v", got)
			}
		})
	}
}

func TestListEnvelope(t *testing.T) {
	for _, env := range []string{"data", "links", "items"} {
		t.Run(env, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.ListEnvelope = env })
			a := str(e.create(t, "https://example.com/a")["id"])
			b := str(e.create(t, "https://example.com/b")["id"])
			r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
			wantStatus(t, r, http.StatusOK)
			var body map[string][]map[string]any
			if err := json.Unmarshal(r.Body, &body); err != nil {
				t.Fatalf("%v: %s", err, r.Body)
			}
			if len(body) != 1 || strings.Join(ids(body[env]), ",") != a+","+b {
				t.Errorf("list = %s", r.Body)
			}
		})
	}
}

func TestFieldStyle(t *testing.T) {
	cases := map[string][]string{
		"camel": canonicalFields,
		"snake": {"id", "destination", "domain_id", "slug", "short_url", "qr_code_url", "expires_at", "utm", "created_at", "updated_at"},
		"alias": {"id", "destination", "domainId", "slug", "shortLink", "qrCode", "expiresAt", "utm", "createdAt", "updatedAt"},
	}
	for style, fields := range cases {
		t.Run(style, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.FieldStyle = style })
			l := e.create(t, "https://example.com/", "slug", "styled", "expiresAt", "2027-01-31T23:59:59.000Z")
			wantKeys(t, l, fields...)
			shortKey, qrKey, expKey := fields[4], fields[5], fields[6]
			if l[shortKey] != "https://go.example.test/styled" || l[qrKey] != "https://go.example.test/qr/styled.png" ||
				l[expKey] != "2027-01-31T23:59:59.000Z" || l[fields[2]] != e.fx.DomainID {
				t.Errorf("link = %v", l)
			}
			for _, li := range e.list(t) {
				wantKeys(t, li, fields...)
			}
		})
	}
}

func TestSuccessStatuses(t *testing.T) {
	t.Run("createStatus 200", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.CreateStatus = 200 })
		r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
		wantStatus(t, r, http.StatusOK)
		wantKeys(t, r.object(t), canonicalFields...)
	})
	t.Run("changeStatus 204", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.ChangeStatus = 204 })
		id := str(e.create(t, "https://example.com/")["id"])
		r := e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/new"})
		wantStatus(t, r, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("204 with a body: %q", r.Body)
		}
		wantRateHeaders(t, r)
		if got := e.list(t); got[0]["destination"] != "https://example.com/new" {
			t.Errorf("the change was not applied: %v", got)
		}
	})
	t.Run("deleteStatus 200", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.DeleteStatus = 200 })
		id := str(e.create(t, "https://example.com/")["id"])
		r := e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil)
		wantStatus(t, r, http.StatusOK)
		if body := r.object(t); body["id"] != id || body["deleted"] != true {
			t.Errorf("delete body = %s", r.Body)
		}
		if got := e.list(t); len(got) != 0 {
			t.Errorf("list after delete = %v", got)
		}
	})
}

func TestPaging(t *testing.T) {
	modes := []struct {
		paging, envelope, style string
		next                    func(t *testing.T, e *env, r *response) string // "" at the end
		items                   func(t *testing.T, r *response) []map[string]any
	}{
		{paging: "cursor", style: "camel", next: cursorNext("nextCursor"), items: itemsIn("data")},
		{paging: "cursor", style: "snake", envelope: "links", next: cursorNext("next_cursor"), items: itemsIn("links")},
		{paging: "cursor", style: "alias", next: cursorNext("cursor"), items: itemsIn("data")},
		{paging: "next", style: "camel", next: nextURL, items: itemsIn("data")},
		{paging: "next", style: "camel", envelope: "items", next: nextURL, items: itemsIn("items")},
		{paging: "link", style: "camel", next: linkHeader, items: bareItems},
		{paging: "link", style: "camel", envelope: "data", next: linkHeader, items: itemsIn("data")},
	}
	for _, m := range modes {
		t.Run(fmt.Sprintf("%s/%s/%q", m.paging, m.style, m.envelope), func(t *testing.T) {
			e := newEnv(t, func(s *Settings) {
				s.Variants.Paging, s.Variants.PageSize = m.paging, 3
				s.Variants.ListEnvelope, s.Variants.FieldStyle = m.envelope, m.style
			})
			want := e.srv.mustSeed(t, e.fx.DomainID, 10)
			var got []string
			var sizes []int
			path := "/api/links"
			for page := 0; path != ""; page++ {
				if page > 10 {
					t.Fatalf("more than 10 pages")
				}
				r := e.do(t, http.MethodGet, path, e.fx.APIKey, nil)
				wantStatus(t, r, http.StatusOK)
				items := m.items(t, r)
				sizes = append(sizes, len(items))
				got = append(got, ids(items)...)
				path = m.next(t, e, r)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("pages gave %v, want %v", got, want)
			}
			if fmt.Sprint(sizes) != "[3 3 3 1]" {
				t.Errorf("page sizes = %v, want [3 3 3 1]", sizes)
			}
			r := e.do(t, http.MethodGet, "/api/links?cursor=!!not-a-cursor", e.fx.APIKey, nil)
			wantError(t, r, http.StatusBadRequest, "invalid_request", "cursor")
			wantRateHeaders(t, r)
		})
	}

	t.Run("exact multiple of the page size", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.Paging, s.Variants.PageSize = "cursor", 5 })
		e.srv.mustSeed(t, e.fx.DomainID, 10)
		r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
		path := cursorNext("nextCursor")(t, e, r)
		r = e.do(t, http.MethodGet, path, e.fx.APIKey, nil)
		if items := itemsIn("data")(t, r); len(items) != 5 {
			t.Errorf("second page has %d links", len(items))
		}
		if next := cursorNext("nextCursor")(t, e, r); next != "" {
			t.Errorf("a cursor after the last link: %s", next)
		}
	})
	t.Run("links deleted between pages", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.Paging, s.Variants.PageSize = "cursor", 3 })
		want := e.srv.mustSeed(t, e.fx.DomainID, 6)
		r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
		path := cursorNext("nextCursor")(t, e, r)
		if err := e.srv.DeleteLinkOutOfBand(want[2]); err != nil { // the last one sent
			t.Fatal(err)
		}
		r = e.do(t, http.MethodGet, path, e.fx.APIKey, nil)
		if got := ids(itemsIn("data")(t, r)); strings.Join(got, ",") != strings.Join(want[3:], ",") {
			t.Errorf("second page = %v, want %v", got, want[3:])
		}
	})
}

func (s *Server) mustSeed(t *testing.T, domainID string, n int) []string {
	t.Helper()
	links, err := s.SeedLinks(domainID, "seed", n)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.ID
	}
	return out
}

func itemsIn(key string) func(*testing.T, *response) []map[string]any {
	return func(t *testing.T, r *response) []map[string]any {
		t.Helper()
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("%v: %s", err, r.Body)
		}
		var items []map[string]any
		if err := json.Unmarshal(body[key], &items); err != nil || items == nil {
			t.Fatalf("no list under %q: %s", key, r.Body)
		}
		return items
	}
}

func bareItems(t *testing.T, r *response) []map[string]any { return r.array(t) }

func cursorNext(key string) func(*testing.T, *env, *response) string {
	return func(t *testing.T, _ *env, r *response) string {
		t.Helper()
		body := r.object(t)
		v, ok := body[key]
		if !ok {
			t.Fatalf("no %q in %s", key, r.Body)
		}
		if v == nil {
			return ""
		}
		return "/api/links?cursor=" + url.QueryEscape(str(v))
	}
}

func nextURL(t *testing.T, e *env, r *response) string {
	t.Helper()
	body := r.object(t)
	v, ok := body["next"]
	if !ok {
		t.Fatalf("no next in %s", r.Body)
	}
	if v == nil {
		return ""
	}
	if !strings.HasPrefix(str(v), e.ts.URL+"/api/links?") {
		t.Fatalf("next = %v, want an absolute URL of the list", v)
	}
	return str(v)
}

var linkNext = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

func linkHeader(t *testing.T, e *env, r *response) string {
	t.Helper()
	h := r.Header.Get("Link")
	if h == "" {
		return ""
	}
	m := linkNext.FindStringSubmatch(h)
	if len(m) < 2 || !strings.HasPrefix(m[1], e.ts.URL+"/api/links?") {
		t.Fatalf("Link = %q", h)
	}
	return m[1]
}

func TestUTMStyle(t *testing.T) {
	utm := map[string]any{"source": "newsletter", "medium": "email"}
	setUTM := func(t *testing.T, e *env) map[string]any {
		t.Helper()
		id := str(e.create(t, "https://example.com/page?x=1")["id"])
		r := e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/page?x=1", "utm": utm})
		wantStatus(t, r, http.StatusOK)
		return r.object(t)
	}
	t.Run("prefixed", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.UTMStyle = "prefixed" })
		l := setUTM(t, e)
		if _, ok := l["utm"]; ok || l["utm_source"] != "newsletter" || l["utm_medium"] != "email" || l["destination"] != "https://example.com/page?x=1" {
			t.Errorf("link = %v", l)
		}
		if _, ok := l["utm_campaign"]; ok {
			t.Errorf("empty utm_campaign rendered: %v", l)
		}
	})
	t.Run("absent", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.UTMStyle = "absent" })
		l := setUTM(t, e)
		for k := range l {
			if strings.HasPrefix(k, "utm") {
				t.Errorf("UTM field %s rendered: %v", k, l)
			}
		}
		if l["destination"] != "https://example.com/page?x=1" {
			t.Errorf("destination = %v", l["destination"])
		}
		// The parameters are kept, only not shown: the visit carries them.
		r := e.visit(t, "go.example.test", str(l["slug"]), "")
		if loc := r.Header.Get("Location"); !strings.Contains(loc, "utm_source=newsletter") {
			t.Errorf("Location = %q", loc)
		}
	})
	t.Run("merged", func(t *testing.T) {
		e := newEnv(t, func(s *Settings) { s.Variants.UTMStyle = "merged" })
		l := setUTM(t, e)
		if _, ok := l["utm"]; ok {
			t.Errorf("utm rendered: %v", l)
		}
		u, err := url.Parse(str(l["destination"]))
		if err != nil {
			t.Fatal(err)
		}
		if q := u.Query(); u.Path != "/page" || q.Get("x") != "1" || q.Get("utm_source") != "newsletter" || q.Get("utm_medium") != "email" {
			t.Errorf("destination = %v", l["destination"])
		}
		// Without UTM parameters the destination is as given.
		if l := e.create(t, "https://example.com/plain"); l["destination"] != "https://example.com/plain" {
			t.Errorf("destination = %v", l["destination"])
		}
	})
}

func TestTimeFormat(t *testing.T) {
	cases := map[string]string{
		"millis":  "2027-01-31T23:59:59.000Z",
		"seconds": "2027-01-31T23:59:59Z",
		"offset":  "2027-01-31T23:59:59.000+00:00",
	}
	for format, want := range cases {
		t.Run(format, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.TimeFormat = format })
			l := e.create(t, "https://example.com/", "expiresAt", "2027-01-31T23:59:59.000Z")
			if l["expiresAt"] != want {
				t.Errorf("expiresAt = %v, want %s", l["expiresAt"], want)
			}
			for _, k := range []string{"createdAt", "updatedAt"} {
				ts, err := time.Parse(time.RFC3339Nano, str(l[k]))
				if err != nil || !ts.Equal(e.clock.Now()) {
					t.Errorf("%s = %v, want the instant %s", k, l[k], e.clock.Now())
				}
			}
		})
	}
}

func TestNormalizeDestination(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Variants.NormalizeDestination = true })
	cases := map[string]string{
		"HTTPS://Example.COM":                  "https://example.com/",
		"https://EXAMPLE.com/Path?Q=A":         "https://example.com/Path?Q=A",
		"http://example.com:8080":              "http://example.com:8080/",
		"https://Bücher.example:8443/Frühling": "https://xn--bcher-kva.example:8443/Fr%C3%BChling",
		"https://[::1]/x":                      "https://[::1]/x",
		"https://example.com/a%2Fb/Frühling":   "https://example.com/a%2Fb/Fr%C3%BChling",
		"https://example.com/it's(1)?q=ü#f":    "https://example.com/it's(1)?q=ü#f",
		"https://user:pw@Example.com/a":        "https://user:pw@example.com/a",
	}
	for in, want := range cases {
		l := e.create(t, in)
		if l["destination"] != want {
			t.Errorf("create %s: destination = %v, want %s", in, l["destination"], want)
		}
		r := e.do(t, http.MethodPatch, "/api/links/"+str(l["id"]), e.fx.APIKey, map[string]any{"destination": in})
		wantStatus(t, r, http.StatusOK)
		if got := r.object(t)["destination"]; got != want {
			t.Errorf("change %s: destination = %v, want %s", in, got, want)
		}
	}
	// Off (canonical): kept as sent.
	if err := e.srv.UpdateSettings(func(s *Settings) { s.Variants.NormalizeDestination = false }); err != nil {
		t.Fatal(err)
	}
	if l := e.create(t, "HTTPS://Example.COM"); l["destination"] != "HTTPS://Example.COM" {
		t.Errorf("destination = %v", l["destination"])
	}
}

func TestWriteGrantsRead(t *testing.T) {
	e := newEnv(t)
	wantError(t, e.do(t, http.MethodGet, "/api/links", e.fx.WriteKey, nil), http.StatusForbidden, "insufficient_scope", "")
	if err := e.srv.UpdateSettings(func(s *Settings) { s.Variants.WriteGrantsRead = true }); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.WriteKey, nil), http.StatusOK)
	wantStatus(t, e.do(t, http.MethodGet, "/api/analytics/export", e.fx.WriteKey, nil), http.StatusOK)
	// Read still does not grant write.
	wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.ReadKey, e.createBody("https://example.com/")), http.StatusForbidden, "insufficient_scope", "")
}

func TestHTMLErrors(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Variants.HTMLErrors = true })
	for _, c := range []struct {
		name   string
		key    string
		method string
		path   string
		body   any
		status int
	}{
		{"401", "", http.MethodGet, "/api/links", nil, 401},
		{"403", e.fx.ReadKey, http.MethodPost, "/api/links", e.createBody("https://example.com/"), 403},
		{"400", e.fx.APIKey, http.MethodPost, "/api/links", "{", 400},
		{"404", e.fx.APIKey, http.MethodDelete, "/api/links/nope", nil, 404},
		{"422", e.fx.APIKey, http.MethodPost, "/api/links", e.createBody("https://blocked.example/<script>"), 422},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, c.method, c.path, c.key, c.body)
			wantStatus(t, r, c.status)
			if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			body := string(r.Body)
			if !strings.HasPrefix(body, "<!DOCTYPE html>") || !strings.Contains(body, http.StatusText(c.status)) || json.Valid(r.Body) {
				t.Errorf("body = %q", body)
			}
			if strings.Contains(body, "<script>") {
				t.Errorf("message not escaped: %q", body)
			}
			wantRateHeaders(t, r)
		})
	}
	// Successes stay JSON.
	e.create(t, "https://example.com/")
}
