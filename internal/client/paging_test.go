package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// pager is a test server answering the pages of a list; render returns
// page p (from 0) of n, and the page is chosen by the ?cursor=cP or ?page=P
// of the request.
type pager struct {
	mu      sync.Mutex
	queries []string
	n       int
	base    string
	render  func(pg *pager, p int) (body string, header map[string]string)
}

func (pg *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	pg.mu.Lock()
	pg.queries = append(pg.queries, r.URL.RawQuery)
	pg.mu.Unlock()
	p := 0
	if v := cmpOr(r.URL.Query().Get("cursor"), r.URL.Query().Get("page")); v != "" {
		p, _ = strconv.Atoi(strings.TrimPrefix(v, "c"))
	}
	body, header := pg.render(pg, p)
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, body)
}

func (pg *pager) seen() []string {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	return append([]string(nil), pg.queries...)
}

func item(p int) string { return fmt.Sprintf(`{"id":"l-%d"}`, p) }

func (pg *pager) last(p int) bool { return p >= pg.n-1 }

// cursorPage renders {"<env>":[item],"<key>":"c<p+1>"|null}.
func cursorPage(env, key string) func(*pager, int) (string, map[string]string) {
	return func(pg *pager, p int) (string, map[string]string) {
		next := fmt.Sprintf(`"c%d"`, p+1)
		if pg.last(p) {
			next = "null"
		}
		return fmt.Sprintf(`{%q:[%s],%q:%s}`, env, item(p), key, next), nil
	}
}

// urlPage renders {"data":[item],"<key>":<url of page p+1>}; absent at the end.
func urlPage(key string, url func(pg *pager, next int) string) func(*pager, int) (string, map[string]string) {
	return func(pg *pager, p int) (string, map[string]string) {
		if pg.last(p) {
			return fmt.Sprintf(`{"data":[%s]}`, item(p)), nil
		}
		return fmt.Sprintf(`{"data":[%s],%q:%q}`, item(p), key, url(pg, p+1)), nil
	}
}

// headerPage renders a bare array with a Link header.
func headerPage(link func(pg *pager, next int) string) func(*pager, int) (string, map[string]string) {
	return func(pg *pager, p int) (string, map[string]string) {
		if pg.last(p) {
			return "[" + item(p) + "]", map[string]string{"Link": fmt.Sprintf(`<%s/api/links?page=0>; rel="first"`, pg.base)}
		}
		return "[" + item(p) + "]", map[string]string{"Link": link(pg, p+1)}
	}
}

func servePager(t testing.TB, n int, render func(*pager, int) (string, map[string]string)) *pager {
	t.Helper()
	pg := &pager{n: n, render: render}
	srv := newRawServer(t, pg.ServeHTTP)
	pg.base = srv.URL
	return pg
}

func pagerClient(t testing.TB, pg *pager, mods ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: pg.base, APIKey: testKey, RetryWaitMin: 1, RetryWaitMax: 1}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListPagingModes(t *testing.T) {
	cursors := []string{"", "cursor=c1", "cursor=c2"}
	pages := []string{"", "page=1", "page=2"}
	abs := func(pg *pager, next int) string { return fmt.Sprintf("%s/api/links?page=%d", pg.base, next) }
	rel := func(_ *pager, next int) string { return fmt.Sprintf("/api/links?page=%d", next) }
	tests := []struct {
		name   string
		render func(*pager, int) (string, map[string]string)
		want   []string // queries the server saw
	}{
		{"no paging", func(*pager, int) (string, map[string]string) {
			return `[` + item(0) + `,` + item(1) + `,` + item(2) + `]`, nil
		}, []string{""}},
		{"nextCursor in data envelope", cursorPage("data", "nextCursor"), cursors},
		{"next_cursor in links envelope", cursorPage("links", "next_cursor"), cursors},
		{"cursor in items envelope", cursorPage("items", "cursor"), cursors},
		{"cursor in meta", func(pg *pager, p int) (string, map[string]string) {
			if pg.last(p) {
				return `{"data":[` + item(p) + `],"meta":{"nextCursor":null}}`, nil
			}
			return fmt.Sprintf(`{"data":[%s],"meta":{"nextCursor":"c%d"}}`, item(p), p+1), nil
		}, cursors},
		{"numeric cursor", func(pg *pager, p int) (string, map[string]string) {
			if pg.last(p) {
				return `{"data":[` + item(p) + `]}`, nil
			}
			return fmt.Sprintf(`{"data":[%s],"nextCursor":%d}`, item(p), p+1), nil
		}, []string{"", "cursor=1", "cursor=2"}},
		{"has_more false ends despite a cursor", func(pg *pager, p int) (string, map[string]string) {
			return fmt.Sprintf(`{"data":[%s],"has_more":%v,"next_cursor":"c%d"}`, item(p), !pg.last(p), p+1), nil
		}, cursors},
		{"next as an opaque token is a cursor", urlPage("next", func(_ *pager, next int) string { return fmt.Sprintf("c%d", next) }), cursors},
		{"next absolute URL", urlPage("next", abs), pages},
		{"next relative URL", urlPage("next", rel), pages},
		{"next query-only URL", urlPage("next", func(_ *pager, next int) string { return fmt.Sprintf("?page=%d", next) }), pages},
		{"next_url", urlPage("next_url", abs), pages},
		{"nextUrl", urlPage("nextUrl", rel), pages},
		{"Link header absolute", headerPage(func(pg *pager, next int) string {
			return fmt.Sprintf(`<%s/api/links?page=0>; rel="first", <%s>; rel="next"`, pg.base, abs(pg, next))
		}), pages},
		{"Link header relative, unquoted rel with several types", headerPage(func(pg *pager, next int) string {
			return fmt.Sprintf(`<%s>; title="x,y"; rel=next`, rel(pg, next))
		}), pages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := servePager(t, 3, tt.render)
			links, err := pagerClient(t, pg).ListLinks(context.Background())
			if err != nil {
				t.Fatalf("ListLinks: %v", err)
			}
			wantIDs := []string{"l-0", "l-1", "l-2"}
			if got := ids(links); !reflect.DeepEqual(got, wantIDs) {
				t.Fatalf("ids %v, want %v", got, wantIDs)
			}
			if got := pg.seen(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("queries %q, want %q", got, tt.want)
			}
		})
	}
}

func TestListPagingLoops(t *testing.T) {
	tests := []struct {
		name         string
		render       func(*pager, int) (string, map[string]string)
		wantRequests int
		wantInErr    string
	}{
		{"cursor repeats", func(*pager, int) (string, map[string]string) {
			return `{"data":[],"nextCursor":"same"}`, nil
		}, 2, "already fetched"},
		{"next URL points at itself", func(*pager, int) (string, map[string]string) {
			return `{"data":[],"next":"/api/links"}`, nil
		}, 1, "already fetched"},
		{"Link header cycles between two pages", func(pg *pager, p int) (string, map[string]string) {
			return "[]", map[string]string{"Link": fmt.Sprintf(`</api/links?page=%d>; rel="next"`, 1-p)}
		}, 3, "already fetched"},
		{"new cursors, the same links", func(_ *pager, p int) (string, map[string]string) {
			return fmt.Sprintf(`{"data":[%s],"nextCursor":"c%d"}`, item(0), p+1), nil
		}, 1 + maxIdlePages, fmt.Sprintf("pages 2 to %d brought no link not listed before", 1+maxIdlePages)},
		{"new cursors, empty pages", func(_ *pager, p int) (string, map[string]string) {
			return fmt.Sprintf(`{"data":[],"nextCursor":"c%d"}`, p+1), nil
		}, maxIdlePages, fmt.Sprintf("pages 1 to %d brought no link", maxIdlePages)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := servePager(t, 1, tt.render)
			_, err := pagerClient(t, pg).ListLinks(context.Background())
			if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), tt.wantInErr) {
				t.Fatalf("error = %v, want ErrUnexpectedResponse mentioning %q", err, tt.wantInErr)
			}
			if n := len(pg.seen()); n != tt.wantRequests {
				t.Fatalf("%d requests, want %d", n, tt.wantRequests)
			}
		})
	}
}

// A large account is many pages: the listing follows them all while they
// bring links, with a few pages in a row of repeats (links added ahead of
// the next page) or empty between them.
func TestListFollowsEveryPageThatBringsLinks(t *testing.T) {
	const pages = 2500
	pg := servePager(t, 1, func(_ *pager, p int) (string, map[string]string) {
		body := item(p)
		switch {
		case p == pages-1:
			return fmt.Sprintf(`{"data":[%s]}`, body), nil
		case p%100 > 0 && p%100 < maxIdlePages:
			body = "" // empty pages, fewer in a row than the loop guard allows
		}
		return fmt.Sprintf(`{"data":[%s],"nextCursor":"c%d"}`, body, p+1), nil
	})
	links, err := pagerClient(t, pg).ListLinks(context.Background())
	if err != nil {
		t.Fatalf("ListLinks: %v", err)
	}
	if want := pages - 25*(maxIdlePages-1); links.Len() != want || len(pg.seen()) != pages {
		t.Fatalf("%d links in %d requests, want %d in %d", links.Len(), len(pg.seen()), want, pages)
	}
}

func TestListRefusesNextPageOnAnotherOrigin(t *testing.T) {
	other, otherSrv := serve(t, step{body: "[]"})
	for name, header := range map[string]bool{"body": false, "Link header": true} {
		t.Run(name, func(t *testing.T) {
			pg := servePager(t, 1, func(*pager, int) (string, map[string]string) {
				if header {
					return "[]", map[string]string{"Link": "<" + otherSrv.URL + `/api/links?page=1>; rel="next"`}
				}
				return fmt.Sprintf(`{"data":[],"next":%q}`, otherSrv.URL+"/api/links?page=1"), nil
			})
			_, err := pagerClient(t, pg).ListLinks(context.Background())
			if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "API key") {
				t.Fatalf("error = %v", err)
			}
			if other.count() != 0 {
				t.Fatal("the API key was sent to another origin")
			}
		})
	}
}

// A next page on the base URL's origin is followed however the service
// spells it: the host in capitals, the scheme's default port written out.
// Another port or scheme is another origin.
func TestListFollowsItsOwnOriginInAnySpelling(t *testing.T) {
	c, err := New(Config{BaseURL: "https://api.example.com", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := url.Parse("https://api.example.com/api/links")
	for ref, same := range map[string]bool{
		"https://API.Example.com/api/links?page=2":     true,
		"https://api.example.com:443/api/links?page=2": true,
		"/api/links?page=2":                            true,
		"https://api.example.com:8443/api/links":       false,
		"http://api.example.com/api/links?page=2":      false,
		"http://api.example.com:443/api/links?page=2":  false,
	} {
		if _, err := c.followable(cur, ref); (err == nil) != same {
			t.Errorf("followable(%q): %v; want followed: %v", ref, err, same)
		}
	}
}

func TestListDropsDuplicatesAcrossPages(t *testing.T) {
	pg := servePager(t, 2, func(pg *pager, p int) (string, map[string]string) {
		if p == 0 {
			return `{"data":[{"id":"a"},{"id":"b"}],"nextCursor":"c1"}`, nil
		}
		return `{"data":[{"id":"b"},{"id":"c"}]}`, nil
	})
	links, err := pagerClient(t, pg).ListLinks(context.Background())
	if err != nil || !reflect.DeepEqual(ids(links), []string{"a", "b", "c"}) {
		t.Fatalf("ids %v, err %v", ids(links), err)
	}
}

func TestLinkHeaderNext(t *testing.T) {
	tests := []struct {
		values []string
		want   string
	}{
		{nil, ""},
		{[]string{`<https://h/a?page=2>; rel="next"`}, "https://h/a?page=2"},
		{[]string{`<https://h/a?page=1>; rel="prev", <https://h/a?page=3>; rel="next"`}, "https://h/a?page=3"},
		{[]string{`<https://h/a?p=1>; rel="prev"`, `<https://h/a?p=3>; rel="next"`}, "https://h/a?p=3"},
		{[]string{`</a?p=2>; rel="next last"`}, "/a?p=2"},
		{[]string{`</a?p=2>;rel=NEXT`}, "/a?p=2"},
		{[]string{`</a?p=2>; rel="nextpage"`}, ""},
		{[]string{`</a?p=2>; title="rel=next"`}, ""},
		{[]string{`garbage`, `<unterminated; rel="next"`}, ""},
		// Stray brackets before the link are skipped.
		{[]string{`a>b, </api/links?page=2>; rel="next"`}, "/api/links?page=2"},
		{[]string{`>; rel="prev", </api/links?page=2>; rel=next`}, "/api/links?page=2"},
	}
	for _, tt := range tests {
		if got := linkHeaderNext(tt.values); got != tt.want {
			t.Errorf("linkHeaderNext(%q) = %q, want %q", tt.values, got, tt.want)
		}
	}
}

// BenchmarkListLinksPaged lists 100,000 links in 1,000 pages of 100 over
// loopback, as a large account paged by the service is listed: what a
// page costs the client beyond its links (go test -run '^$' -bench
// ListLinksPaged ./internal/client/).
func BenchmarkListLinksPaged(b *testing.B) {
	const pages, perPage = 1000, 100
	bodies := make([]string, pages)
	for p := range bodies {
		var body strings.Builder
		body.WriteString(`{"data":[`)
		for i := range perPage {
			n := p*perPage + i
			if i > 0 {
				body.WriteString(",")
			}
			fmt.Fprintf(&body, `{"id":"%08x-1111-4222-8333-%012x","destination":"https://example.com/campaigns/%d","domainId":"9a8b7c6d-1111-2222-3333-444455556666",`+
				`"slug":"s-%d","shortUrl":"https://go.example.test/s-%d","createdAt":"2026-11-24T01:07:00.000Z"}`, n, n, n, n, n)
		}
		next := fmt.Sprintf(`"c%d"`, p+1)
		if p == pages-1 {
			next = "null"
		}
		fmt.Fprintf(&body, `],"nextCursor":%s}`, next)
		bodies[p] = body.String()
	}
	pg := servePager(b, pages, func(_ *pager, p int) (string, map[string]string) { return bodies[p], nil })
	c := pagerClient(b, pg)
	for b.Loop() {
		links, err := c.ListLinks(context.Background())
		if err != nil || links.Len() != pages*perPage {
			b.Fatalf("%v links, error %v", links.Len(), err)
		}
	}
}
