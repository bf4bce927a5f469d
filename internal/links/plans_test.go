package links

import (
	"strings"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// Domain IDs of the ledger's tests: UUIDs, which name one domain in any
// case (client.SameID).
const (
	d1 = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
	d2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

// Two plans of one walk that declare the same domain and slug collide, the
// second learning what the first declared; the case of a UUID domain ID
// does not matter, the case of the slug does, and so does the case of a
// domain ID that is not a UUID (the service's own, compared exactly).
// Links without a slug never collide.
func TestPlans_findTheSecondOfTwoSlugs(t *testing.T) {
	p := NewPlans()
	first := client.CreateLinkInput{DomainID: strings.ToUpper(d1), Slug: "spring", Destination: "https://example.com/a"}
	if _, collides, _ := p.Declare(first); collides {
		t.Fatal("the first declaration collides")
	}
	earlier, collides, _ := p.Declare(client.CreateLinkInput{DomainID: d1, Slug: "spring", Destination: "https://example.com/b"})
	if !collides || earlier.Destination != first.Destination {
		t.Fatalf("second declaration: collides %v with %+v, want the first", collides, earlier)
	}
	for _, in := range []client.CreateLinkInput{
		{DomainID: d2, Slug: "spring"},
		{DomainID: d1, Slug: "Spring"},
		{DomainID: d1}, {DomainID: d1},
		{DomainID: "dom_A", Slug: "spring"}, {DomainID: "dom_a", Slug: "spring"},
	} {
		if _, collides, _ := p.Declare(in); collides {
			t.Errorf("%+v collides", in)
		}
	}
}

// A replacement is planned twice by Terraform (as a change, then as a
// create): announced by the first, the second counts once and knows the
// slug is its own old link's; a later create of the same slug collides.
func TestPlans_replacementCountsOnce(t *testing.T) {
	p := NewPlans()
	in := client.CreateLinkInput{DomainID: d1, Slug: "spring"}
	p.Replacing(client.CreateLinkInput{DomainID: strings.ToUpper(d1), Slug: "spring", Destination: "https://example.com/old"}, in)
	p.Replacing(client.CreateLinkInput{DomainID: d1, Slug: "autumn"}, in) // another slug: nothing held
	if _, collides, own := p.Declare(in); collides || !own {
		t.Fatalf("the replacement's create: collides %v, own slug %v; want false, true", collides, own)
	}
	if _, collides, own := p.Declare(in); !collides || own {
		t.Fatalf("another create of the slug: collides %v, own slug %v; want true, false", collides, own)
	}
}

// The plans of two marked objects that name one link are told apart,
// whichever is planned first; one object planned twice, an object without
// a mark (not refreshed: -refresh=false) and another link are not.
func TestPlans_tellTwoObjectsNamingOneLink(t *testing.T) {
	for name, tc := range map[string]struct {
		first, second string
		secondLink    string
		twice         bool
	}{
		"two objects":                    {`"a"`, `"b"`, "l1", true},
		"one object planned twice":       {`"a"`, `"a"`, "l1", false},
		"an object without a mark first": {"", `"a"`, "l1", false},
		"an object without a mark next":  {`"a"`, "", "l1", false},
		"two objects, two links":         {`"a"`, `"b"`, "l2", false},
	} {
		t.Run(name, func(t *testing.T) {
			p := NewPlans()
			if p.Planned("l1", tc.first) {
				t.Fatal("the first plan was said to be a second object's")
			}
			if got := p.Planned(tc.secondLink, tc.second); got != tc.twice {
				t.Fatalf("twice = %t, want %t", got, tc.twice)
			}
		})
	}
}
