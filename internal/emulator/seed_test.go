package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// storeJSON is the whole store, to show that a refused call changed nothing.
func storeJSON(t *testing.T, s *Server) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := json.Marshal(s.st)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A fixture is what a provider is pointed at: the account must have the API
// and the default quota, and each key exactly its scopes, or tests of scope
// errors would pass for the wrong reason.
func TestSeedFixture(t *testing.T) {
	e := newEnv(t)
	fx := e.seedFixture(t, "acme", "Go.Acme.Test")
	e.srv.mu.Lock()
	a, d := *e.srv.st.Accounts[fx.AccountID], *e.srv.st.Domains[fx.DomainID]
	keys := map[string]APIKey{}
	for _, k := range []string{fx.APIKey, fx.ReadKey, fx.WriteKey} {
		if stored := e.srv.st.Keys[k]; stored != nil {
			keys[k] = *stored
		}
	}
	e.srv.mu.Unlock()

	if a.Name != "acme" || !a.APIEnabled || a.MonthlyQuota != DefaultMonthlyQuota {
		t.Errorf("account = %+v, want acme with the API and the default quota", a)
	}
	if d.AccountID != fx.AccountID || d.Host != "go.acme.test" || fx.DomainHost != "go.acme.test" {
		t.Errorf("domain = %+v, fixture host %q, want go.acme.test of the account", d, fx.DomainHost)
	}
	for _, c := range []struct {
		name, key string
		scopes    []string
	}{
		{"APIKey", fx.APIKey, []string{ScopeRead, ScopeWrite}},
		{"ReadKey", fx.ReadKey, []string{ScopeRead}},
		{"WriteKey", fx.WriteKey, []string{ScopeWrite}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, ok := keys[c.key]
			if !ok || k.AccountID != fx.AccountID || k.Revoked || !slices.Equal(k.Scopes, c.scopes) {
				t.Errorf("key %q = %+v (stored %v), want scopes %v of the account", c.key, k, ok, c.scopes)
			}
		})
	}

	t.Run("a host taken in another case", func(t *testing.T) {
		before := storeJSON(t, e.srv)
		f, err := e.srv.SeedFixture("dup", "GO.EXAMPLE.TEST")
		if err == nil || f != (Fixture{}) {
			t.Errorf("SeedFixture = %+v, %v; want no fixture and an error", f, err)
		}
		// Nothing is made: no account without a domain or keys is left
		// behind by a fixture posted twice.
		if after := storeJSON(t, e.srv); after != before {
			t.Errorf("a refused fixture changed the store:\n%s\nwas\n%s", after, before)
		}
	})
	// A restart finds its account by name: a second account of that name
	// would have it pick either, another key and domain each time.
	t.Run("a name taken", func(t *testing.T) {
		before := storeJSON(t, e.srv)
		if f, err := e.srv.SeedFixture("acme", "team.acme.test"); err == nil || f != (Fixture{}) {
			t.Errorf("SeedFixture = %+v, %v; want no fixture and an error", f, err)
		}
		if after := storeJSON(t, e.srv); after != before {
			t.Errorf("a refused fixture changed the store:\n%s\nwas\n%s", after, before)
		}
	})
}

// ReuseFixture is how the command finds its fixture again after a
// restart: by the account's name, among others, with a new key for each
// kind revoked meanwhile, and the others as they were.
func TestReuseFixture(t *testing.T) {
	cases := []struct {
		name    string
		lookup  string
		revoke  func(f Fixture) string // a key to revoke
		renewed func(f *Fixture) *string
		ok      bool
	}{
		{"the named account among several", "other", nil, nil, true},
		{"no account of that name", "nobody", nil, nil, false},
		{"a revoked read key is replaced", "other", func(f Fixture) string { return f.ReadKey }, func(f *Fixture) *string { return &f.ReadKey }, true},
		{"a revoked key of both scopes is replaced", "other", func(f Fixture) string { return f.APIKey }, func(f *Fixture) *string { return &f.APIKey }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			want := e.seedFixture(t, "other", "other.example.test")
			if c.revoke != nil {
				if err := e.srv.RevokeKey(c.revoke(want)); err != nil {
					t.Fatal(err)
				}
			}
			got, ok := e.srv.ReuseFixture(c.lookup)
			if !c.ok {
				if ok {
					t.Fatalf("ReuseFixture(%q) = %+v, want none", c.lookup, got)
				}
				return
			}
			if c.renewed != nil {
				old, renewed := *c.renewed(&want), *c.renewed(&got)
				if renewed == "" || renewed == old {
					t.Fatalf("revoked key %q given again as %q, want a new one", old, renewed)
				}
				wantStatus(t, e.do(t, http.MethodGet, "/api/links", renewed, nil), http.StatusOK)
				*c.renewed(&want) = renewed
			}
			if !ok || got != want {
				t.Errorf("ReuseFixture(%q) = %+v, %v; want %+v", c.lookup, got, ok, want)
			}
		})
	}
}

// SeedLinks promises slugs prefix-<i> and destinations
// https://example.com/<prefix>/<i> in that order, made now, with IDs like
// the API's. One more batch than seedLocked makes at once checks that the
// numbering goes on across batches.
func TestSeedLinks(t *testing.T) {
	e := newEnv(t)
	e.clock.Advance(90 * time.Minute)
	now := e.clock.Now()
	const n = seedBatch + 4
	links := e.seedLinks(t, e.fx.DomainID, "s", n)
	if len(links) != n {
		t.Fatalf("SeedLinks returned %d links, want %d", len(links), n)
	}
	seen := map[string]bool{}
	for i, l := range links {
		if l.Slug != fmt.Sprintf("s-%d", i) || l.Destination != fmt.Sprintf("https://example.com/s/%d", i) ||
			l.DomainID != e.fx.DomainID || l.AccountID != e.fx.AccountID || !l.CreatedAt.Equal(now) || !l.UpdatedAt.Equal(now) {
			t.Fatalf("link %d = %+v", i, l)
		}
		// Spelled as uuid.NewString spells the IDs of links made through the API.
		u, err := uuid.Parse(l.ID)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != l.ID || seen[l.ID] {
			t.Fatalf("link %d has ID %q, want a new version 4 UUID (%v)", i, l.ID, err)
		}
		seen[l.ID] = true
	}
}

// Seeding is no API request and is not subject to the quota: a quota of one
// still allows one create through the API after seeding.
func TestSeedLinksBypassesTheAPI(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 1); err != nil {
		t.Fatal(err)
	}
	e.seedLinks(t, e.fx.DomainID, "s", 3)
	if n := e.srv.TotalRequests(); n != 0 {
		t.Errorf("seeding counted %d API requests", n)
	}
	e.create(t, "https://example.com/within-quota")
}

// FillLinks counts every link of the domain's account towards total, and
// takes the lowest free numbers for its slugs.
func TestFillLinks(t *testing.T) {
	cases := []struct {
		name      string
		before    func(t *testing.T, e *env, otherDomain string) // links the account holds already
		total     int
		wantAdded int
		wantSlugs []string // the account's slugs afterwards, oldest first
	}{
		{"an empty account", nil, 3, 3, []string{"f-0", "f-1", "f-2"}},
		{"the lowest free numbers", func(t *testing.T, e *env, _ string) {
			e.create(t, "https://example.com/", "slug", "f-1")
		}, 4, 3, []string{"f-1", "f-0", "f-2", "f-3"}},
		{"links on another domain of the account count", func(t *testing.T, e *env, other string) {
			e.seedLinks(t, other, "g", 2)
		}, 3, 1, []string{"g-0", "g-1", "f-0"}},
		{"an account holding more keeps them all", func(t *testing.T, e *env, _ string) {
			e.seedLinks(t, e.fx.DomainID, "g", 4)
		}, 2, 0, []string{"g-0", "g-1", "g-2", "g-3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			other, err := e.srv.AddDomain(e.fx.AccountID, "other.example.test")
			if err != nil {
				t.Fatal(err)
			}
			if c.before != nil {
				c.before(t, e, other)
			}
			added, err := e.srv.FillLinks(e.fx.DomainID, "f", c.total)
			if err != nil || added != c.wantAdded {
				t.Errorf("FillLinks to %d added %d (%v), want %d", c.total, added, err, c.wantAdded)
			}
			var slugs []string
			for _, l := range e.srv.Links(e.fx.AccountID) {
				slugs = append(slugs, l.Slug)
				if strings.HasPrefix(l.Slug, "f-") && l.DomainID != e.fx.DomainID {
					t.Errorf("%s is on domain %s, want the one filled", l.Slug, l.DomainID)
				}
			}
			if !slices.Equal(slugs, c.wantSlugs) {
				t.Errorf("slugs = %v, want %v", slugs, c.wantSlugs)
			}
		})
	}
}

// The command fills its account on every start from its data file: the
// second start must find the links of the first and add none.
func TestFillLinksAcrossRestarts(t *testing.T) {
	opts := Options{Settings: testSettings(), DataFile: filepath.Join(t.TempDir(), "store.json")}
	for start, want := range []int{20, 0} {
		e := newEnvWith(t, opts)
		added, err := e.srv.FillLinks(e.fx.DomainID, "seeded", 20)
		if err != nil || added != want {
			t.Errorf("start %d: FillLinks added %d (%v), want %d", start+1, added, err, want)
		}
		if n := e.srv.LinkCount(e.fx.AccountID); n != 20 {
			t.Errorf("start %d: the account holds %d links, want 20", start+1, n)
		}
	}
}

// AllLinks orders by creation over every account, not account by account.
func TestAllLinksOldestFirst(t *testing.T) {
	e := newEnv(t)
	other := e.seedFixture(t, "other", "other.example.test")
	var want []string
	for _, l := range slices.Concat(e.seedLinks(t, e.fx.DomainID, "a", 3), e.seedLinks(t, other.DomainID, "b", 3)) {
		want = append(want, l.ID)
	}
	want = append(want, str(e.create(t, "https://example.com/c")["id"]))
	var got []string
	for _, l := range e.srv.AllLinks() {
		got = append(got, l.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("AllLinks = %v, want %v", got, want)
	}
}

// The links the server hands out are copies to the last pointer: editing a
// link's UTM or expiry there changes nothing stored.
func TestLinksShareNothingWithTheStore(t *testing.T) {
	e := newEnv(t)
	exp := e.clock.Now().Add(time.Hour).UTC().Format(specTime)
	id := str(e.create(t, "https://example.com/spring", "expiresAt", exp)["id"])
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/spring", "utm": map[string]any{"source": "news"}}), http.StatusOK)
	for name, handOut := range map[string]func() []Link{
		"Links":    func() []Link { return e.srv.Links(e.fx.AccountID) },
		"AllLinks": e.srv.AllLinks,
	} {
		l := handOut()[0]
		l.UTM.Source = "edited"
		*l.ExpiresAt = l.ExpiresAt.Add(-time.Hour)
		if again := handOut()[0]; again.UTM.Source != "news" || again.ExpiresAt.Format(specTime) != exp {
			t.Errorf("after editing what %s handed out, the store holds utm source %q, expiresAt %s", name, again.UTM.Source, again.ExpiresAt)
		}
	}
}

// A change made in the dashboard: the link shows the new destination and
// update time, the filter does not see it, and it is no API request, so it
// is not counted and leaves the key's allowance alone.
func TestChangeLinkOutOfBand(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits.Write = 2 })
	id := str(e.create(t, "https://example.com/ours", "slug", "oob")["id"]) // one write of two
	e.srv.mu.Lock()
	stored := e.srv.st.Links[id]
	e.srv.mu.Unlock()
	requests := e.srv.TotalRequests()
	e.clock.Advance(time.Second) // a later update time, inside the key's window

	if err := e.srv.ChangeLinkOutOfBand(id, "https://blocked.example/theirs"); err != nil {
		t.Fatal(err)
	}
	got := e.srv.Links(e.fx.AccountID)
	if len(got) != 1 || got[0].ID != id || got[0].Slug != "oob" || got[0].Destination != "https://blocked.example/theirs" ||
		!got[0].UpdatedAt.Equal(e.clock.Now()) || !got[0].CreatedAt.Equal(stored.CreatedAt) {
		t.Errorf("links after the change = %+v", got)
	}
	// A listing may be rendering the old link: it is replaced, never changed.
	if stored.Destination != "https://example.com/ours" {
		t.Errorf("the stored link was changed in place: %+v", stored)
	}
	if n := e.srv.TotalRequests(); n != requests {
		t.Errorf("the change counted %d API requests", n-requests)
	}
	r := e.do(t, http.MethodPatch, "/api/links/"+id, e.fx.APIKey, map[string]any{"destination": "https://example.com/back"})
	wantStatus(t, r, http.StatusOK)
	if remaining := r.headerInt(t, "X-RateLimit-Remaining"); remaining != 0 {
		t.Errorf("remaining after the second write = %d, want 0", remaining)
	}
}

// The seeding helpers that name something unknown fail and store nothing,
// so that a typo in a test fails it instead of seeding elsewhere.
func TestSeedingRefusals(t *testing.T) {
	e := newEnv(t)
	e.seedLinks(t, e.fx.DomainID, "kept", 1)
	unknown := uuid.NewString()
	cases := []struct {
		name string
		call func() error
	}{
		{"AddKey for an unknown account", func() error { _, err := e.srv.AddKey(unknown, ScopeRead); return err }},
		{"AddDomain for an unknown account", func() error { _, err := e.srv.AddDomain(unknown, "new.example.test"); return err }},
		{"SetKeyScopes of an unknown key", func() error { return e.srv.SetKeyScopes("sl_test_unknown", ScopeRead) }},
		{"SeedLinks of a negative count", func() error { _, err := e.srv.SeedLinks(e.fx.DomainID, "neg", -1); return err }},
		{"FillLinks on an unknown domain", func() error { _, err := e.srv.FillLinks(unknown, "f", 5); return err }},
		{"ChangeLinkOutOfBand of an unknown link", func() error { return e.srv.ChangeLinkOutOfBand(unknown, "https://example.com/") }},
		{"DeleteLinkOutOfBand of an unknown link", func() error { return e.srv.DeleteLinkOutOfBand(unknown) }},
		{"AddClicks of an unknown link", func() error { return e.srv.AddClicks(unknown, 3, "") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := storeJSON(t, e.srv)
			if err := c.call(); err == nil {
				t.Error("no error")
			}
			if storeJSON(t, e.srv) != before {
				t.Error("the store changed")
			}
		})
	}
}
