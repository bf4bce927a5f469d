package emulator

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	generatedSlug = regexp.MustCompile(`^[A-Za-z0-9]{7}$`)
	uuidLike      = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantKeys(t *testing.T, obj map[string]any, want ...string) {
	t.Helper()
	want = append([]string(nil), want...)
	sort.Strings(want)
	if got := keysOf(obj); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("fields = %v, want %v", got, want)
	}
}

var canonicalFields = []string{"id", "destination", "domainId", "slug", "shortUrl", "qrCodeUrl", "expiresAt", "utm", "createdAt", "updatedAt"}

func TestCreateCanonical(t *testing.T) {
	e := newEnv(t)
	t.Run("every field", func(t *testing.T) {
		r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/spring?ref=1",
			"slug", "spring-sale_2026", "expiresAt", "2027-01-31T23:59:59.000Z"))
		wantStatus(t, r, http.StatusCreated)
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		wantRateHeaders(t, r)
		l := r.object(t)
		wantKeys(t, l, canonicalFields...)
		want := map[string]any{
			"destination": "https://example.com/spring?ref=1",
			"domainId":    e.fx.DomainID,
			"slug":        "spring-sale_2026",
			"shortUrl":    "https://go.example.test/spring-sale_2026",
			"qrCodeUrl":   "https://go.example.test/qr/spring-sale_2026.png",
			"expiresAt":   "2027-01-31T23:59:59.000Z",
			"utm":         nil,
			"createdAt":   "2026-03-15T10:00:00.000Z",
			"updatedAt":   "2026-03-15T10:00:00.000Z",
		}
		for k, v := range want {
			if l[k] != v {
				t.Errorf("%s = %#v, want %#v", k, l[k], v)
			}
		}
		if !uuidLike.MatchString(str(l["id"])) {
			t.Errorf("id = %v, want a UUID", l["id"])
		}
	})
	t.Run("generated slug", func(t *testing.T) {
		seen := map[string]bool{}
		for range 20 {
			l := e.create(t, "https://example.com/")
			slug := str(l["slug"])
			if !generatedSlug.MatchString(slug) {
				t.Fatalf("generated slug %q is not 7 characters of [A-Za-z0-9]", slug)
			}
			if seen[slug] {
				t.Fatalf("slug %q generated twice", slug)
			}
			seen[slug] = true
			if l["shortUrl"] != "https://go.example.test/"+slug || l["expiresAt"] != nil || l["utm"] != nil {
				t.Errorf("link = %v", l)
			}
		}
	})
	t.Run("expiresAt with milliseconds", func(t *testing.T) {
		l := e.create(t, "https://example.com/", "expiresAt", "2027-01-31T23:59:59.500Z")
		if l["expiresAt"] != "2027-01-31T23:59:59.500Z" {
			t.Errorf("expiresAt = %v", l["expiresAt"])
		}
	})
	t.Run("slug of 64 characters", func(t *testing.T) {
		slug := strings.Repeat("a-Z_9", 12) + "abcd"
		if l := e.create(t, "https://example.com/", "slug", slug); l["slug"] != slug {
			t.Errorf("slug = %v", l["slug"])
		}
	})
	t.Run("capital scheme", func(t *testing.T) {
		e.create(t, "HTTPS://example.com/upper")
	})
}

// A write's body is JSON, sent as the spec says, with Content-Type:
// application/json (parameters such as a charset allowed); one sent
// otherwise is refused, naming the header, and changes nothing.
func TestWriteBodyNeedsItsContentType(t *testing.T) {
	e := newEnv(t)
	link := e.create(t, "https://example.com/start")
	for _, write := range []struct{ method, path string }{{http.MethodPost, "/api/links"}, {http.MethodPatch, "/api/links/" + str(link["id"])}} {
		for given, ok := range map[string]bool{"": false, "text/plain": false, "application/x-www-form-urlencoded": false, "application/json; charset=utf-8": true} {
			req, err := e.request(write.method, write.path, e.fx.APIKey, e.createBody("https://example.com/changed"))
			if err != nil {
				t.Fatal(err)
			}
			if write.method == http.MethodPatch {
				if req, err = e.request(write.method, write.path, e.fx.APIKey, map[string]any{"destination": "https://example.com/changed"}); err != nil {
					t.Fatal(err)
				}
			}
			req.Header.Set("Content-Type", given)
			r, err := e.send(req)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				wantStatus(t, r, map[string]int{http.MethodPost: http.StatusCreated, http.MethodPatch: http.StatusOK}[write.method])
				continue
			}
			wantError(t, r, http.StatusBadRequest, "invalid_request", "Content-Type")
		}
	}
	if links := e.list(t); len(links) != 2 {
		t.Errorf("the account holds %d links, want the first and the one sent as JSON", len(links))
	}
}

// A destination's bound counts characters, as its message says and as the
// provider checks it at plan time: 2,048 of them in more bytes are taken.
func TestCreateDestinationOf2048CharactersInMoreBytes(t *testing.T) {
	e := newEnv(t)
	long := "https://example.com/" + strings.Repeat("é", 2048-20)
	if got := str(e.create(t, long)["destination"]); got != long {
		t.Errorf("destination = %d characters, want the %d sent", len([]rune(got)), len([]rune(long)))
	}
}

func TestListOldestFirst(t *testing.T) {
	e := newEnv(t)
	if got := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil); got.Status != http.StatusOK || strings.TrimSpace(string(got.Body)) != "[]" {
		t.Fatalf("empty list = %s, want 200 []", got)
	}
	var want []string
	for _, slug := range []string{"c", "a", "b", "e", "d"} {
		want = append(want, str(e.create(t, "https://example.com/"+slug, "slug", slug)["id"]))
		e.clock.Advance(time.Second)
	}
	// Another account's links are never listed.
	other := e.seedFixture(t, "other", "other.example.test")
	e.seedLinks(t, other.DomainID, "o", 3)
	r := e.do(t, http.MethodGet, "/api/links", e.fx.ReadKey, nil)
	wantStatus(t, r, http.StatusOK)
	wantRateHeaders(t, r)
	links := r.array(t)
	if got := ids(links); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("list order = %v, want %v", got, want)
	}
	for _, l := range links {
		wantKeys(t, l, canonicalFields...)
	}
}

func TestChangeDestination(t *testing.T) {
	e := newEnv(t)
	orig := e.create(t, "https://example.com/old", "slug", "retarget")
	id := str(orig["id"])
	patch := func(t *testing.T, body any) map[string]any {
		t.Helper()
		e.clock.Advance(time.Minute)
		r := e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, body)
		wantStatus(t, r, http.StatusOK)
		wantRateHeaders(t, r)
		l := r.object(t)
		wantKeys(t, l, canonicalFields...)
		for _, k := range []string{"id", "slug", "shortUrl", "qrCodeUrl", "domainId", "createdAt", "expiresAt"} {
			if l[k] != orig[k] {
				t.Errorf("%s changed: %v → %v", k, orig[k], l[k])
			}
		}
		if want := e.clock.Now().Format("2006-01-02T15:04:05.000Z"); l["updatedAt"] != want {
			t.Errorf("updatedAt = %v, want %s", l["updatedAt"], want)
		}
		return l
	}
	utm := map[string]any{"source": "newsletter", "medium": "email", "campaign": "spring"}

	l := patch(t, map[string]any{"destination": "https://example.com/new"})
	if l["destination"] != "https://example.com/new" || l["utm"] != nil {
		t.Errorf("after change: %v", l)
	}
	l = patch(t, map[string]any{"destination": "https://example.com/new", "utm": utm})
	if got, _ := l["utm"].(map[string]any); len(got) != 3 || got["source"] != "newsletter" || got["medium"] != "email" || got["campaign"] != "spring" {
		t.Errorf("utm = %v, want %v", l["utm"], utm)
	}
	l = patch(t, map[string]any{"destination": "https://example.com/newer"})
	if got, _ := l["utm"].(map[string]any); got["source"] != "newsletter" || l["destination"] != "https://example.com/newer" {
		t.Errorf("an omitted utm did not keep the parameters: %v", l)
	}
	l = patch(t, map[string]any{"destination": "https://example.com/newer", "utm": nil})
	if l["utm"] != nil {
		t.Errorf("utm null did not clear: %v", l["utm"])
	}
	patch(t, map[string]any{"destination": "https://example.com/newer", "utm": utm})
	l = patch(t, map[string]any{"destination": "https://example.com/newer", "utm": map[string]any{}})
	if l["utm"] != nil {
		t.Errorf("utm {} did not clear: %v", l["utm"])
	}
	// The list shows the same.
	if got := e.list(t); len(got) != 1 || got[0]["destination"] != "https://example.com/newer" || got[0]["utm"] != nil {
		t.Errorf("list after changes = %v", got)
	}
}

func TestDelete(t *testing.T) {
	e := newEnv(t)
	id := str(e.create(t, "https://example.com/")["id"])
	r := e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusNoContent)
	wantRateHeaders(t, r)
	if len(r.Body) != 0 {
		t.Errorf("204 with a body: %q", r.Body)
	}
	if got := e.list(t); len(got) != 0 {
		t.Errorf("list after delete = %v", got)
	}
	wantError(t, e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil), http.StatusNotFound, "not_found", "")
	wantError(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/"}), http.StatusNotFound, "not_found", "")
}

func TestUnknownEndpoint(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path string }{
		{http.MethodPut, "/api/links"},
		{http.MethodGet, "/api/links/abc"},
		{http.MethodPatch, "/api/links/"},
		{http.MethodDelete, "/api/links/a/b"},
		{http.MethodPost, "/api/analytics/export"},
		{http.MethodGet, "/api/domains"},
	} {
		wantError(t, e.do(t, c.method, c.path, e.fx.APIKey, nil), http.StatusNotFound, "not_found", "")
	}
}

func TestFilterDelay(t *testing.T) {
	const delay = 100 * time.Millisecond
	e := newEnv(t, func(s *Settings) { s.Filter.Delay = Duration(delay) })
	start := time.Now()
	l := e.create(t, "https://example.com/slow")
	if took := time.Since(start); took < delay {
		t.Errorf("create took %s, want at least %s", took, delay)
	}
	start = time.Now()
	r := e.do(t, http.MethodPatch, "/api/links/"+str(l["id"]), e.fx.APIKey, map[string]any{"destination": "https://example.com/slower"})
	wantStatus(t, r, http.StatusOK)
	if took := time.Since(start); took < delay {
		t.Errorf("change took %s, want at least %s", took, delay)
	}
	// Reads do not wait for the filter.
	start = time.Now()
	e.list(t)
	if took := time.Since(start); took >= delay {
		t.Errorf("list took %s", took)
	}

	// A write the service received is carried out even if its client gives
	// up during the filter, as a real server does; the switch
	// AbortOnDisconnect abandons it instead. The client gives up once the
	// request has reached the service, and the filter is long enough for
	// the disconnect to reach it first on a loaded machine.
	const filter = time.Second
	for _, abort := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancelled during the delay, abortOnDisconnect=%v", abort), func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Filter.Delay, s.Filter.AbortOnDisconnect = Duration(filter), abort })
			l := e.create(t, "https://example.com/kept")
			before := e.srv.Count(http.MethodPost, "/api/links") + e.srv.Count(http.MethodPatch, "/api/links/{id}")
			arrived := make(chan struct{}, 1)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				e.srv.ServeHTTP(w, r)
			}))
			defer ts.Close()
			for _, c := range []struct {
				method, path string
				body         any
			}{
				{http.MethodPost, "/api/links", e.createBody("https://example.com/abandoned")},
				{http.MethodPatch, "/api/links/" + str(l["id"]), map[string]any{"destination": "https://example.com/abandoned"}},
			} {
				req, err := e.request(c.method, ts.URL+c.path, e.fx.APIKey, c.body)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				answered := make(chan error, 1)
				go func() {
					_, err := e.send(req.WithContext(ctx))
					answered <- err
				}()
				select {
				case <-arrived:
				case <-time.After(10 * time.Second):
					t.Fatalf("%s never reached the service", c.method)
				}
				cancel()
				if err := <-answered; err == nil {
					t.Fatalf("%s answered before the filter delay", c.method)
				}
			}
			// Wait until the server has finished both requests.
			deadline := time.Now().Add(10 * time.Second)
			for e.srv.Count(http.MethodPost, "/api/links")+e.srv.Count(http.MethodPatch, "/api/links/{id}") < before+2 {
				if time.Now().After(deadline) {
					t.Fatal("the server did not finish the cancelled requests")
				}
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(filter) // a request still under way would commit now
			links := e.srv.Links(e.fx.AccountID)
			carriedOut := len(links) == 2 && links[0].Destination == "https://example.com/abandoned" && links[1].Destination == "https://example.com/abandoned"
			untouched := len(links) == 1 && links[0].Destination == "https://example.com/kept"
			if (!abort && !carriedOut) || (abort && !untouched) {
				t.Errorf("abortOnDisconnect=%v: the store holds %+v", abort, links)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*phishing*", "https://x.test/a/phishing/b", true},
		{"*phishing*", "https://x.test/fishing", false},
		{"https://*.example/free-*", "https://shop.example/free-money/now", true},
		{"https://*.example/free-*", "http://shop.example/free-money", false},
		{"a*a", "a", false}, // prefix and suffix may not overlap
		{"ab*ba", "aba", false},
		{"ab*ba", "abba", true},
		{"*.zip", "https://x.test/f.zip", true},
		{"*.zip", "https://x.test/f.zip?x=1", false},
	}
	for _, c := range cases {
		if got := globMatch(c.pattern, c.s); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.s, got, c.want)
		}
	}
}
