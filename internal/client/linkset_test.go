package client

import (
	"fmt"
	"hash/maphash"
	"runtime"
	"testing"
	"time"
)

// setLink is a link with every field set, as a listing would bring it.
func setLink(i int) Link {
	expires := time.Date(2027, 3, 31, 23, 59, 59, 500, time.UTC)
	return Link{
		ID: fmt.Sprintf("id-%d", i), Destination: fmt.Sprintf("https://example.com/p/%d?a=b", i),
		DomainID: "9A8B7C6D-1111-2222-3333-444455556666", Slug: fmt.Sprintf("s-%d", i),
		ShortURL: fmt.Sprintf("https://go.example.test/s-%d", i), QRCodeURL: fmt.Sprintf("https://go.example.test/qr/s-%d.png", i),
		ExpiresAt: &expires, UTM: &UTM{Source: "news", Campaign: fmt.Sprintf("c%d", i%3)}, UTMKnown: true,
		CreatedAt: time.Date(2026, 11, 24, 1, 7, 0, 123456789, time.UTC), UpdatedAt: time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC),
	}
}

func TestLinkSetKeepsEveryField(t *testing.T) {
	full := setLink(1)
	bare := Link{ID: "bare"} // nothing else: nil UTM, zero times, no URLs
	emptyUTM := Link{ID: "empty-utm", Slug: "x", UTM: &UTM{}, UTMKnown: true}
	odd := Link{ID: "odd", Slug: "abc", ShortURL: "https://other.example/abc/abc?x=abc", QRCodeURL: "https://qr.example/no-slug-here"}
	zoned := Link{ID: "zoned", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("", 3600)).UTC()}
	in := []Link{full, bare, emptyUTM, odd, zoned}
	s := LinkSetOf(in...)
	if s.Len() != len(in) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(in))
	}
	for i, got := range linksOf(s) {
		if !sameLink(&got, &in[i]) {
			t.Errorf("link %d came back as\n%+v\nwant\n%+v", i, got, in[i])
		}
		if byID, ok := s.Get(in[i].ID); !ok || !sameLink(&byID, &in[i]) {
			t.Errorf("Get(%q) = %+v, %t", in[i].ID, byID, ok)
		}
	}
	if _, ok := s.Get("missing"); ok {
		t.Error("Get found an ID never added")
	}
}

// A link listed twice (offset paging while links are created) keeps its
// first place and its last version; its old slug no longer finds it.
func TestLinkSetListedTwice(t *testing.T) {
	a, b := setLink(1), setLink(2)
	changed := a
	changed.Destination, changed.Slug = "https://example.com/new", "renamed"
	s := LinkSetOf(a, b, changed)
	got := linksOf(s)
	if len(got) != 2 || got[0].ID != a.ID || got[0].Destination != "https://example.com/new" || got[1].ID != b.ID {
		t.Fatalf("links = %+v", got)
	}
	if l, ok := s.BySlug(a.DomainID, "renamed"); !ok || l.ID != a.ID {
		t.Errorf("BySlug(renamed) = %v, %t", l.ID, ok)
	}
	if l, ok := s.BySlug(a.DomainID, a.Slug); ok {
		t.Errorf("the old slug still finds %s", l.ID)
	}
}

func TestLinkSetBySlug(t *testing.T) {
	first, second := setLink(1), setLink(2)
	second.Slug = first.Slug // the service's order decides between holders
	other := setLink(3)
	other.DomainID = "00000000-0000-0000-0000-000000000000"
	other.Slug = first.Slug
	s := LinkSetOf(first, second, other)
	for _, c := range []struct {
		domain, slug, want string
	}{
		{first.DomainID, first.Slug, first.ID},
		{"9a8b7c6d-1111-2222-3333-444455556666", first.Slug, first.ID}, // domain IDs in any case
		{other.DomainID, first.Slug, other.ID},
		{first.DomainID, "S-1", ""}, // slugs are case-sensitive
		{first.DomainID, "nowhere", ""},
	} {
		l, ok := s.BySlug(c.domain, c.slug)
		if ok != (c.want != "") || l.ID != c.want {
			t.Errorf("BySlug(%s, %s) = %q, %t; want %q", c.domain, c.slug, l.ID, ok, c.want)
		}
	}
}

// A slug no link holds, the answer for every new link a plan checks, is
// known from the index alone: the lookup reads no link, so it costs the
// same on a million links as on ten (it read them all, half a second a
// new link on a million).
func TestLinkSetBySlugOfAFreeSlugReadsNoLink(t *testing.T) {
	links := make([]Link, 10000)
	for i := range links {
		links[i] = setLink(i)
	}
	s := LinkSetOf(links...)
	var found bool
	allocs := testing.AllocsPerRun(10, func() { _, found = s.BySlug(links[0].DomainID, "a-new-slug") })
	if found || allocs > 2 {
		t.Errorf("BySlug of a free slug: found %t, %.0f allocations; want none found, without reading the %d links", found, allocs, len(links))
	}
}

// A UUID is found in any case and comes back as the service spelled it;
// an ID of another form only as it is.
func TestLinkSetGetComparesUUIDsInAnyCase(t *testing.T) {
	uuid, other := setLink(1), setLink(2)
	uuid.ID, other.ID = "9a8b7c6d-1111-2222-3333-44445555aaaa", "lnk_AbC"
	s := LinkSetOf(uuid, other)
	if got, ok := s.Get("9A8B7C6D-1111-2222-3333-44445555AAAA"); !ok || got.ID != uuid.ID {
		t.Errorf("Get in capitals = %q, %t; want %q", got.ID, ok, uuid.ID)
	}
	if _, ok := s.Get("lnk_abc"); ok {
		t.Error("Get found an ID that is not a UUID in another case")
	}
	again := uuid
	again.ID, again.Destination = "9A8B7C6D-1111-2222-3333-44445555AAAA", "https://example.com/again"
	s.Add(&again)
	if s.Len() != 2 {
		t.Errorf("the same UUID in capitals added a link: Len = %d", s.Len())
	}
}

// Two IDs of the same hash are both found: the second through collided.
func TestLinkSetIDHashCollision(t *testing.T) {
	s := NewLinkSet()
	a, b := setLink(1), setLink(2)
	s.Add(&a)
	s.byID[maphash.String(s.seed, b.ID)] = 0 // as if b's hash were a's
	s.Add(&b)
	for _, want := range []Link{a, b} {
		if got, ok := s.Get(want.ID); !ok || got.ID != want.ID {
			t.Errorf("Get(%s) = %s, %t", want.ID, got.ID, ok)
		}
	}
	b.Destination = "https://example.com/again"
	s.Add(&b)
	if s.Len() != 2 {
		t.Errorf("a new version of the collided link added a link: Len = %d", s.Len())
	}
}

// Past the table's bound, strings are stored in each record and still
// come back.
func TestLinkSetSharedTableFull(t *testing.T) {
	var in []Link
	for i := range maxSharedStrings + 10 {
		l := Link{ID: fmt.Sprint(i), DomainID: fmt.Sprintf("domain-%d", i), Slug: "s"}
		in = append(in, l)
	}
	s := LinkSetOf(in...)
	if len(s.shared.values) != maxSharedStrings {
		t.Errorf("the shared table holds %d strings, want its bound %d", len(s.shared.values), maxSharedStrings)
	}
	for _, i := range []int{0, maxSharedStrings - 1, maxSharedStrings, maxSharedStrings + 9} {
		if l, _ := s.Get(fmt.Sprint(i)); l.DomainID != in[i].DomainID {
			t.Errorf("link %d has domain %q, want %q", i, l.DomainID, in[i].DomainID)
		}
	}
}

// A listing of a large account is held in a small multiple of its links'
// own bytes: the whole set, indexes included, per link.
func TestLinkSetIsCompact(t *testing.T) {
	const n = 200_000
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	s := NewLinkSet()
	for i := range n {
		l := setLink(i)
		l.ID = fmt.Sprintf("%08x-1111-4222-8333-%012x", i, i) // a UUID, as the service gives
		s.Add(&l)
	}
	perLink := float64(heap()-before) / n
	runtime.KeepAlive(s)
	t.Logf("%.0f bytes a link", perLink)
	// A link's variable text (ID, destination, slug) is about 70 bytes
	// here; its JSON in a listing about 400.
	if perLink > 200 {
		t.Errorf("the set holds %.0f bytes a link, want at most 200", perLink)
	}
}

// BenchmarkLinkSetAdd builds a set of 100,000 links with UUID IDs, as a
// listing of a large account does: the cost of comparing IDs in any case
// shows here (go test -run '^$' -bench LinkSetAdd ./internal/client/).
func BenchmarkLinkSetAdd(b *testing.B) {
	links := make([]Link, 100000)
	for i := range links {
		links[i] = Link{ID: fmt.Sprintf("%08x-1111-4222-8333-%012x", i, i), DomainID: "9a8b7c6d-1111-2222-3333-444455556666",
			Slug: fmt.Sprintf("s-%d", i), Destination: "https://example.com/x"}
	}
	for b.Loop() {
		s := NewLinkSet()
		for i := range links {
			s.Add(&links[i])
		}
	}
}
