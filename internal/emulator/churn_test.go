package emulator

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// pageThrough lists the fixture's links page by page, following
// nextCursor, and returns the slugs seen, in order.
func (e *env) pageThrough(t *testing.T) []string {
	t.Helper()
	var slugs []string
	path := "/api/links"
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("the listing did not end")
		}
		r := e.do(t, http.MethodGet, path, e.fx.APIKey, nil)
		wantStatus(t, r, http.StatusOK)
		body := r.object(t)
		for _, item := range body["data"].([]any) {
			slugs = append(slugs, str(item.(map[string]any)["slug"]))
		}
		next, _ := body["nextCursor"].(string)
		if next == "" {
			return slugs
		}
		path = "/api/links?cursor=" + url.QueryEscape(next)
	}
}

func offsetPaging(size int) func(*Settings) {
	return func(s *Settings) { s.Variants.Paging, s.Variants.PageSize = "offset", size }
}

func TestOffsetPaging_coversEverythingWhenNothingChanges(t *testing.T) {
	e := newEnv(t, offsetPaging(10))
	seeded := e.seedLinks(t, e.fx.DomainID, "p", 25)
	if got := e.pageThrough(t); len(got) != len(seeded) || got[0] != "p-0" || got[24] != "p-24" {
		t.Fatalf("pages held %v, want p-0 … p-24 once each", got)
	}
	r := e.do(t, http.MethodGet, "/api/links?cursor=ten", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusBadRequest)
}

// The largest page size a setting allows is one page, from any cursor:
// offset plus size does not overflow into a slice out of range (a panic
// that held the server's lock for good).
func TestPaging_hugePageSize(t *testing.T) {
	for _, mode := range []string{"offset", "cursor"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.Paging, s.Variants.PageSize = mode, math.MaxInt })
			e.seedLinks(t, e.fx.DomainID, "p", 3)
			if got := e.pageThrough(t); len(got) != 3 {
				t.Fatalf("pages held %v, want the 3 links", got)
			}
			if mode == "offset" {
				r := e.do(t, http.MethodGet, "/api/links?cursor=1", e.fx.APIKey, nil)
				wantStatus(t, r, http.StatusOK)
			}
			wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK) // the server still answers
		})
	}
}

func TestOffsetPaging_aDeleteBeforeTheCursorSkipsALink(t *testing.T) {
	e := newEnv(t, offsetPaging(10))
	seeded := e.seedLinks(t, e.fx.DomainID, "p", 25)
	first := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil).object(t)
	if first["nextCursor"] != "10" {
		t.Fatalf("nextCursor = %v, want the offset 10", first["nextCursor"])
	}
	if err := e.srv.DeleteLinkOutOfBand(seeded[2].ID); err != nil {
		t.Fatal(err)
	}
	second := e.do(t, http.MethodGet, "/api/links?cursor=10", e.fx.APIKey, nil).object(t)
	if got := str(second["data"].([]any)[0].(map[string]any)["slug"]); got != "p-11" {
		t.Fatalf("the second page starts at %s, want p-11: p-10 shifted to the first page's last place and was skipped", got)
	}
}

func TestChurn_anotherClientShiftsPagesWithoutTouchingOurLinks(t *testing.T) {
	e := newEnv(t, offsetPaging(10), func(s *Settings) { s.Churn = Churn{Delete: 1, Create: 1} })
	if err := e.srv.AddOtherClientLinks(e.fx.AccountID, 20); err != nil {
		t.Fatal(err)
	}
	ours := e.seedLinks(t, e.fx.DomainID, "ours", 50)
	seen := e.pageThrough(t)
	seenOurs := 0
	for _, l := range ours {
		if slices.Contains(seen, l.Slug) {
			seenOurs++
		}
	}
	if seenOurs >= len(ours) {
		t.Fatalf("the listing saw all %d of our links; the churn should have shifted some past a page boundary", seenOurs)
	}
	stored := e.srv.Links(e.fx.AccountID)
	var others, kept int
	for _, l := range stored {
		switch {
		case isOtherClients(l):
			others++
		case slices.ContainsFunc(ours, func(o Link) bool { return o.ID == l.ID }):
			kept++
		}
	}
	if kept != len(ours) {
		t.Fatalf("%d of our %d links are left: the churn must delete only the other client's", kept, len(ours))
	}
	// Each page after the first deleted one of the other client's links
	// and created one at the end, so their number is unchanged.
	if others != 20 {
		t.Fatalf("the other client holds %d links, want 20 (one deleted and one created per page)", others)
	}
	if last := stored[len(stored)-1]; !isOtherClients(last) {
		t.Fatalf("the newest link is %s, want one of the other client's", last.Destination)
	}
}

func TestChurn_offWithoutACursor(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Churn = Churn{Delete: 5, Create: 5} })
	if err := e.srv.AddOtherClientLinks(e.fx.AccountID, 3); err != nil {
		t.Fatal(err)
	}
	e.list(t) // one request, no cursor: nobody else acts
	if n := len(e.srv.Links(e.fx.AccountID)); n != 3 {
		t.Fatalf("%d links, want the 3 seeded", n)
	}
}

// Churn acts before a page after the first of a paged listing only: not
// for a cursor a listing without pages ignores, nor for one it refuses.
func TestChurn_offWithoutAPageToAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		paging, cursor string
		status         int
	}{
		"no paging":        {"none", "zzz", http.StatusOK},
		"malformed cursor": {"cursor", "!!bad", http.StatusBadRequest},
		"malformed offset": {"offset", "ten", http.StatusBadRequest},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(s *Settings) { s.Variants.Paging, s.Churn = tc.paging, Churn{Delete: 1, Create: 1} })
			if err := e.srv.AddOtherClientLinks(e.fx.AccountID, 3); err != nil {
				t.Fatal(err)
			}
			before := e.srv.Links(e.fx.AccountID)
			wantStatus(t, e.do(t, http.MethodGet, "/api/links?cursor="+tc.cursor, e.fx.APIKey, nil), tc.status)
			if after := e.srv.Links(e.fx.AccountID); !slices.EqualFunc(after, before, func(a, b Link) bool { return a.ID == b.ID }) {
				t.Fatalf("the account changed: %d links, were %d", len(after), len(before))
			}
		})
	}
}

// A link whose destination moves to or from the other client's host moves
// in or out of what churn may delete.
func TestChurn_changedDestinationsAreReindexed(t *testing.T) {
	e := newEnv(t)
	ours := e.seedLinks(t, e.fx.DomainID, "ours", 2)
	if err := e.srv.ChangeLinkOutOfBand(ours[0].ID, "https://"+OtherClientHost+"/now-theirs"); err != nil {
		t.Fatal(err)
	}
	e.srv.mu.Lock()
	others := slices.Clone(e.srv.st.othersOf(e.fx.AccountID))
	e.srv.mu.Unlock()
	if len(others) != 1 || others[0].ID != ours[0].ID {
		t.Fatalf("the other client's links are %v, want the changed one only", others)
	}
	if err := e.srv.ChangeLinkOutOfBand(ours[0].ID, "https://example.com/ours-again"); err != nil {
		t.Fatal(err)
	}
	e.srv.mu.Lock()
	defer e.srv.mu.Unlock()
	if n := len(e.srv.st.othersOf(e.fx.AccountID)); n != 0 {
		t.Fatalf("%d links of the other client, want none", n)
	}
}
