package emulator

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

const exportHeader = "clicked_at,link_id,slug,short_url,destination,referrer,user_agent"

func TestClickRedirects(t *testing.T) {
	e := newEnv(t)
	link := e.create(t, "https://example.com/landing?lang=en", "slug", "spring")
	id := str(link["id"])

	t.Run("path form", func(t *testing.T) {
		r := e.visit(t, "go.example.test", "spring", "")
		wantStatus(t, r, http.StatusFound)
		if got := r.Header.Get("Location"); got != "https://example.com/landing?lang=en" {
			t.Errorf("Location = %q", got)
		}
	})
	t.Run("path form with the host in capitals", func(t *testing.T) {
		wantStatus(t, e.visit(t, "GO.Example.Test", "spring", ""), http.StatusFound)
	})
	t.Run("Host header form", func(t *testing.T) {
		for _, host := range []string{"go.example.test", "go.example.test:8443"} {
			req, err := http.NewRequest(http.MethodGet, e.ts.URL+"/spring", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = host
			r, err := e.send(req)
			if err != nil {
				t.Fatal(err)
			}
			wantStatus(t, r, http.StatusFound)
			if got := r.Header.Get("Location"); got != "https://example.com/landing?lang=en" {
				t.Errorf("Location = %q", got)
			}
		}
	})
	if n := len(e.srv.Clicks(e.fx.AccountID)); n != 4 {
		t.Fatalf("%d clicks recorded, want 4", n)
	}

	t.Run("UTM merged into the query", func(t *testing.T) {
		utm := map[string]any{"source": "newsletter", "medium": "email", "campaign": "spring sale"}
		wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/landing?lang=en", "utm": utm}), http.StatusOK)
		r := e.visit(t, "go.example.test", "spring", "")
		wantStatus(t, r, http.StatusFound)
		loc, err := url.Parse(r.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		q := loc.Query()
		if loc.Host != "example.com" || loc.Path != "/landing" || q.Get("lang") != "en" || q.Get("utm_source") != "newsletter" ||
			q.Get("utm_medium") != "email" || q.Get("utm_campaign") != "spring sale" || q.Has("utm_term") || q.Has("utm_content") {
			t.Errorf("Location = %s", loc)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		wantStatus(t, e.visit(t, "go.example.test", "nope", ""), http.StatusNotFound)
		wantStatus(t, e.visit(t, "unknown.example.test", "spring", ""), http.StatusNotFound)
		root := e.do(t, http.MethodGet, "/", "", nil)
		wantStatus(t, root, http.StatusNotFound)
		if !strings.Contains(string(root.Body), "/api/links") {
			t.Errorf("the root's 404 does not say where the API is: %q", root.Body)
		}
		wantStatus(t, e.do(t, http.MethodGet, "/r/go.example.test/", "", nil), http.StatusNotFound)
		wantStatus(t, e.do(t, http.MethodPost, "/r/go.example.test/spring", "", nil), http.StatusMethodNotAllowed)
	})
	if n := len(e.srv.Clicks(e.fx.AccountID)); n != 5 {
		t.Errorf("%d clicks recorded, want 5 (failed visits record nothing)", n)
	}

	t.Run("expired", func(t *testing.T) {
		exp := e.clock.Now().Add(time.Hour).UTC().Format(specTime)
		e.create(t, "https://example.com/flash", "slug", "flash", "expiresAt", exp)
		wantStatus(t, e.visit(t, "go.example.test", "flash", ""), http.StatusFound)
		e.clock.Advance(time.Hour - time.Millisecond)
		wantStatus(t, e.visit(t, "go.example.test", "flash", ""), http.StatusFound)
		e.clock.Advance(time.Millisecond)
		wantStatus(t, e.visit(t, "go.example.test", "flash", ""), http.StatusGone)
		e.clock.Advance(24 * time.Hour)
		wantStatus(t, e.visit(t, "go.example.test", "flash", ""), http.StatusGone)
		// The link is still listed; only visits end.
		if got := len(e.list(t)); got != 2 {
			t.Errorf("list has %d links, want 2", got)
		}
	})
	if n := len(e.srv.Clicks(e.fx.AccountID)); n != 7 {
		t.Errorf("%d clicks recorded, want 7 (expired visits record nothing)", n)
	}
}

// export fetches the CSV export and parses it.
func (e *env) export(t *testing.T, query string) (*response, [][]string) {
	t.Helper()
	r := e.do(t, http.MethodGet, "/api/analytics/export"+query, e.fx.ReadKey, nil)
	wantStatus(t, r, http.StatusOK)
	if ct := r.Header.Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	wantRateHeaders(t, r)
	rd := csv.NewReader(strings.NewReader(string(r.Body)))
	rd.FieldsPerRecord = len(ExportColumns)
	rows, err := rd.ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, r.Body)
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != exportHeader {
		t.Fatalf("header row = %v, want %s", rows, exportHeader)
	}
	if !strings.HasPrefix(string(r.Body), exportHeader+"\r\n") {
		t.Errorf("the header row does not end with CRLF: %q", r.Body)
	}
	return r, rows[1:]
}

func TestClickHistorySurvivesChange(t *testing.T) {
	e := newEnv(t)
	link := e.create(t, "https://example.com/old", "slug", "spring")
	id := str(link["id"])
	other := e.create(t, "https://example.com/other", "slug", "other")

	wantStatus(t, e.visit(t, "go.example.test", "spring", "https://mail.example.net/"), http.StatusFound)
	e.clock.Advance(time.Second)
	wantStatus(t, e.visit(t, "go.example.test", "other", ""), http.StatusFound)
	e.clock.Advance(time.Second)
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/new"}), http.StatusOK)
	r := e.visit(t, "go.example.test", "spring", "https://social.example.com/")
	wantStatus(t, r, http.StatusFound)
	if got := r.Header.Get("Location"); got != "https://example.com/new" {
		t.Errorf("after the change Location = %q", got)
	}

	_, rows := e.export(t, "?linkId="+id)
	want := [][]string{
		{"2026-03-15T10:00:00.000Z", id, "spring", "https://go.example.test/spring", "https://example.com/old", "https://mail.example.net/", "test-visitor/1.0"},
		{"2026-03-15T10:00:02.000Z", id, "spring", "https://go.example.test/spring", "https://example.com/new", "https://social.example.com/", "test-visitor/1.0"},
	}
	wantRows(t, rows, want)

	_, all := e.export(t, "")
	if len(all) != 3 || all[1][1] != str(other["id"]) || all[0][4] != "https://example.com/old" || all[2][4] != "https://example.com/new" {
		t.Errorf("account-wide export, oldest first = %v", all)
	}

	// Clicks of a deleted link stay in the account-wide export only.
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+id, e.fx.APIKey, nil), http.StatusNoContent)
	if _, all := e.export(t, ""); len(all) != 3 {
		t.Errorf("after delete the export has %d rows, want 3", len(all))
	}
	wantError(t, e.do(t, http.MethodGet, "/api/analytics/export?linkId="+id, e.fx.ReadKey, nil), http.StatusNotFound, "not_found", "")
}

func TestExport(t *testing.T) {
	e := newEnv(t)
	t.Run("empty", func(t *testing.T) {
		r, rows := e.export(t, "")
		if len(rows) != 0 || string(r.Body) != exportHeader+"\r\n" {
			t.Errorf("empty export = %q", r.Body)
		}
	})

	a := str(e.create(t, "https://example.com/a", "slug", "a")["id"])
	b := str(e.create(t, "https://example.com/b", "slug", "b")["id"])
	if err := e.srv.AddClicks(a, 3, "https://ref.example/"); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.AddClicks(b, 2, ""); err != nil {
		t.Fatal(err)
	}
	t.Run("one row per click", func(t *testing.T) {
		if _, rows := e.export(t, ""); len(rows) != 5 {
			t.Errorf("%d rows, want 5", len(rows))
		}
	})
	t.Run("linkId filter", func(t *testing.T) {
		for link, n := range map[string]int{a: 3, b: 2} {
			_, rows := e.export(t, "?linkId="+link)
			if len(rows) != n {
				t.Errorf("%d rows for %s, want %d", len(rows), link, n)
			}
			for _, row := range rows {
				if row[1] != link {
					t.Errorf("row of another link: %v", row)
				}
			}
		}
	})
	t.Run("a link without clicks", func(t *testing.T) {
		c := str(e.create(t, "https://example.com/c")["id"])
		if _, rows := e.export(t, "?linkId="+c); len(rows) != 0 {
			t.Errorf("rows = %v", rows)
		}
	})
	t.Run("unknown linkId", func(t *testing.T) {
		wantError(t, e.do(t, http.MethodGet, "/api/analytics/export?linkId="+uuid.NewString(), e.fx.ReadKey, nil), http.StatusNotFound, "not_found", "")
	})
	t.Run("malformed linkId", func(t *testing.T) {
		wantError(t, e.do(t, http.MethodGet, "/api/analytics/export?linkId=not-a-uuid", e.fx.ReadKey, nil), http.StatusBadRequest, "invalid_request", "linkId")
	})
	t.Run("another account's clicks", func(t *testing.T) {
		other := e.seedFixture(t, "other", "other.example.test")
		links := e.seedLinks(t, other.DomainID, "o", 1)
		if err := e.srv.AddClicks(links[0].ID, 4, ""); err != nil {
			t.Fatal(err)
		}
		if _, rows := e.export(t, ""); len(rows) != 5 {
			t.Errorf("%d rows, want only the account's 5", len(rows))
		}
	})
}

func TestExportQuoting(t *testing.T) {
	e := newEnv(t)
	id := str(e.create(t, "https://example.com/q?a=1,b=2", "slug", "q")["id"])

	// Through real visits: a Referer header may hold commas and quotes.
	headerReferrers := []string{
		"https://ref.example/?a=1,b=2",
		`https://ref.example/say "hi"`,
		`"quoted", with comma`,
	}
	for _, ref := range headerReferrers {
		wantStatus(t, e.visit(t, "go.example.test", "q", ref), http.StatusFound)
	}
	// Stored directly: line breaks cannot travel in a header.
	storedReferrers := []string{"line one\nline two", "crlf one\r\ncrlf two", "tail,\n\"x\"\n"}
	for _, ref := range storedReferrers {
		if err := e.srv.AddClicks(id, 1, ref); err != nil {
			t.Fatal(err)
		}
	}

	r, rows := e.export(t, "?linkId="+id)
	// encoding/csv reads a CRLF inside a quoted field as LF.
	want := append(append([]string{}, headerReferrers...), "line one\nline two", "crlf one\ncrlf two", "tail,\n\"x\"\n")
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d:\n%s", len(rows), len(want), r.Body)
	}
	for i, row := range rows {
		if row[5] != want[i] {
			t.Errorf("row %d referrer = %q, want %q", i, row[5], want[i])
		}
		if row[4] != "https://example.com/q?a=1,b=2" {
			t.Errorf("row %d destination = %q", i, row[4])
		}
	}
	// RFC 4180 on the wire: CRLF line ends, quotes doubled, line breaks
	// inside quoted fields.
	body := string(r.Body)
	for _, frag := range []string{
		`"https://ref.example/say ""hi"""`,
		`"""quoted"", with comma"`,
		"\"line one\r\nline two\"",
		"\"crlf one\r\ncrlf two\"",
		`"https://example.com/q?a=1,b=2"`,
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("export lacks %q:\n%q", frag, body)
		}
	}
	if !strings.HasSuffix(body, "\r\n") || strings.Count(body, "\n") != strings.Count(body, "\r\n") {
		t.Errorf("bare LF in the export: %q", body)
	}
}

func wantRows(t *testing.T, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d =\n %v\nwant\n %v", i, got[i], want[i])
		}
	}
}

func TestAddClickAt(t *testing.T) {
	e := newEnv(t)
	link := str(e.create(t, "https://example.com/a", "slug", "at")["id"])
	at := time.Date(2027, 3, 1, 12, 30, 0, 250e6, time.FixedZone("CET", 3600))
	if err := e.srv.AddClickAt(link, at, "https://ref.example/a,\"b\""); err != nil {
		t.Fatal(err)
	}
	if err := e.srv.AddClickAt("no-such-link", at, ""); err == nil {
		t.Error("a click of an unknown link was recorded")
	}
	_, rows := e.export(t, "")
	wantRows(t, rows, [][]string{{"2027-03-01T11:30:00.250Z", link, "at", "https://go.example.test/at", "https://example.com/a", "https://ref.example/a,\"b\"", ""}})
}

// HEAD is a read: on the API it needs links:read and counts against the
// read limit, and on a short link it is answered as a GET without counting
// a click (a link checker or a preview, not a visitor).
func TestHeadIsARead(t *testing.T) {
	e := newEnv(t)
	e.seedLinks(t, e.fx.DomainID, "checked", 1)
	for key, want := range map[string]int{e.fx.ReadKey: http.StatusOK, e.fx.WriteKey: http.StatusForbidden} {
		if r := e.do(t, http.MethodHead, "/api/links", key, nil); r.Status != want {
			t.Errorf("HEAD /api/links with a key of scope %s: %d, want %d", map[bool]string{true: "links:read", false: "links:write"}[key == e.fx.ReadKey], r.Status, want)
		}
	}
	req, err := http.NewRequest(http.MethodHead, e.ts.URL+"/r/"+e.fx.DomainHost+"/checked-0", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.send(req)
	if err != nil || r.Status != http.StatusFound {
		t.Fatalf("HEAD of the short link: %v, %v; want 302", r, err)
	}
	if n := len(e.srv.Clicks(e.fx.AccountID)); n != 0 {
		t.Errorf("a HEAD recorded %d clicks, want none", n)
	}
	wantStatus(t, e.visit(t, e.fx.DomainHost, "checked-0", ""), http.StatusFound)
	if n := len(e.srv.Clicks(e.fx.AccountID)); n != 1 {
		t.Errorf("a GET recorded %d clicks, want 1", n)
	}
}
