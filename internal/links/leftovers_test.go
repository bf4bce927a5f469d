package links

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
)

const leftoverDomain = "9a8b7c6d-1111-2222-3333-444455556666"

// spellings are links whose destinations SameDestination takes for one of
// the inputs below, or nearly: the index must find every one a pass over
// the account finds, and no more.
func spellings(now time.Time) []client.Link {
	at := now.Add(-time.Hour)
	link := func(id, domain, dest string, utm *client.UTM) client.Link {
		return client.Link{ID: id, DomainID: domain, Slug: "s-" + id, Destination: dest, UTM: utm, CreatedAt: at}
	}
	news := &client.UTM{Source: "news", Campaign: "spring"}
	old := link("old", leftoverDomain, "https://example.com/a", nil)
	old.CreatedAt = now.Add(-48 * time.Hour)
	never := link("never", leftoverDomain, "https://example.com/a", nil)
	never.CreatedAt = time.Time{}
	return []client.Link{
		link("exact", leftoverDomain, "https://example.com/a", nil),
		link("host-case", leftoverDomain, "HTTPS://Example.COM/a", nil),
		link("trailing-slash", leftoverDomain, "https://example.com/a/", nil), // another path
		link("domain-case", "9A8B7C6D-1111-2222-3333-444455556666", "https://example.com/a", nil),
		link("merged-utm", leftoverDomain, "https://example.com/a?utm_campaign=spring&utm_source=news", news),
		link("query-order", leftoverDomain, "https://example.com/b?y=2&x=1", nil),
		link("unicode-host", leftoverDomain, "https://xn--bcher-kva.example/c", nil),
		link("no-url", leftoverDomain, "::not a url", nil),
		link("other-domain", "00000000-0000-0000-0000-000000000000", "https://example.com/a", nil),
		link("other-path", leftoverDomain, "https://example.com/ab", nil),
		link("kept-utm", leftoverDomain, "https://example.com/a?utm_source=print", news),
		old, never,
	}
}

var leftoverInputs = []string{
	"https://example.com/a", "https://example.com/a?utm_source=news&utm_campaign=spring",
	"https://example.com/b?x=1&y=2", "https://bücher.example/c", "::not a url", "https://example.com/a?utm_source=print",
}

// scanned is what a pass over every link finds: the rule the index serves.
func scanned(lc *Creator, listed client.Listing, in client.CreateLinkInput, utm *client.UTM) []string {
	since := lc.now().Add(-lc.window - clockSkewAllowance)
	var ids []string
	for l := range listed.All() {
		if !lc.held[l.ID] && !l.CreatedAt.IsZero() && madeBy(&l, in, utm, since) {
			ids = append(ids, l.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

func idsOf(found []client.Link) []string {
	ids := make([]string, 0, len(found))
	for _, l := range found {
		ids = append(ids, l.ID)
	}
	slices.Sort(ids)
	return ids
}

// ProbableLeftovers finds through its index what a pass over the account
// finds, on a listing and on the snapshot's view of one, where a link this
// provider deleted is gone and one it changed is as it changed it.
func TestProbableLeftovers_indexFindsWhatAPassFinds(t *testing.T) {
	now := time.Now()
	set := client.LinkSetOf(spellings(now)...)
	snap := snapshot.New(func(context.Context) (*client.LinkSet, error) { return set, nil }, time.Hour)
	if _, err := snap.Current(context.Background()); err != nil {
		t.Fatal(err)
	}
	snap.Remove("exact")
	changed, _ := set.Get("host-case")
	changed.Destination = "https://example.com/elsewhere"
	snap.Put(changed)
	view, err := snap.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := view.(Layered); !ok {
		t.Fatalf("the snapshot's view %T is not Layered: every search would read the account", view)
	}
	for name, listed := range map[string]client.Listing{"a listing": set, "the snapshot's view": view} {
		lc := NewCreator(nil, nil, 0, 0, DefaultAdoptionWindow)
		for _, dest := range leftoverInputs {
			for _, utm := range []*client.UTM{nil, {Source: "news", Campaign: "spring"}} {
				in := client.CreateLinkInput{Destination: dest, DomainID: leftoverDomain}
				want := scanned(lc, listed, in, utm)
				if got := idsOf(lc.ProbableLeftovers(context.Background(), in, utm, listed)); !slices.Equal(got, want) {
					t.Errorf("%s, %s, utm %v: found %v, a pass finds %v", name, dest, utm, got, want)
				}
			}
		}
	}
	lc := NewCreator(nil, nil, 0, 0, DefaultAdoptionWindow)
	in := client.CreateLinkInput{Destination: "https://example.com/a", DomainID: leftoverDomain}
	if got := idsOf(lc.ProbableLeftovers(context.Background(), in, &client.UTM{Source: "news", Campaign: "spring"}, set)); !slices.Equal(got, []string{"domain-case", "exact", "host-case", "merged-utm"}) {
		t.Errorf("found %v: the spellings of one destination, recent, on its domain, with no UTM parameters or this link's", got)
	}
	// A link with other UTM parameters is another resource's: a second link
	// to the same landing page for another campaign.
	if got := idsOf(lc.ProbableLeftovers(context.Background(), in, &client.UTM{Source: "print"}, set)); !slices.Equal(got, []string{"domain-case", "exact", "host-case"}) {
		t.Errorf("found %v: a link with other UTM parameters was named", got)
	}
}

// The account is read once for each listing, not once for each new link:
// the second and later searches read only the links of their destination.
func TestProbableLeftovers_readsTheAccountOncePerListing(t *testing.T) {
	now := time.Now()
	links := make([]client.Link, 10000)
	for i := range links {
		links[i] = client.Link{ID: fmt.Sprintf("l-%d", i), DomainID: leftoverDomain, Slug: fmt.Sprintf("s-%d", i),
			Destination: fmt.Sprintf("https://example.com/%d", i), CreatedAt: now.Add(-time.Hour)}
	}
	set := client.LinkSetOf(links...)
	lc := NewCreator(nil, nil, 0, 0, DefaultAdoptionWindow)
	search := func(i int) []client.Link {
		in := client.CreateLinkInput{Destination: fmt.Sprintf("https://example.com/%d", i), DomainID: leftoverDomain}
		return lc.ProbableLeftovers(context.Background(), in, nil, set)
	}
	if found := search(7); len(found) != 1 || found[0].ID != "l-7" {
		t.Fatalf("found %v, want l-7", found)
	}
	i := 0
	allocs := testing.AllocsPerRun(20, func() { i++; search(i) })
	if allocs > 200 {
		t.Errorf("a search after the first allocates %.0f times: it reads the %d links again", allocs, len(links))
	}
}
