package links

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
)

const (
	lookupDomain = "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"
	lookupLinkID = "7d0c5a52-3c1e-4f7b-a1d2-5e6f7a8b9c0d"
)

// fixedListing lists links, always the same ones.
func fixedListing(links ...client.Link) snapshot.ListFunc {
	return func(context.Context) (*client.LinkSet, error) { return client.LinkSetOf(links...), nil }
}

func TestByID(t *testing.T) {
	listing := snapshot.New(fixedListing(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "spring"}), time.Minute)
	link, err := ByID(context.Background(), listing, lookupLinkID)
	if err != nil || link.Slug != "spring" {
		t.Fatalf("ByID = %v, %v; want the link", link, err)
	}
	if _, err := ByID(context.Background(), listing, "6a1b2c3d-0000-4000-8000-000000000000"); !errors.Is(err, ErrNotListed) {
		t.Fatalf("ByID of a missing link: %v, want ErrNotListed", err)
	}
}

func TestBySlug(t *testing.T) {
	listing := snapshot.New(fixedListing(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "Spring"}), time.Minute)
	ctx := context.Background()
	// The domain ID is a UUID (any case); the slug is case-sensitive.
	link, err := BySlug(ctx, listing, strings.ToUpper(lookupDomain), "Spring")
	if err != nil || link.ID != lookupLinkID {
		t.Fatalf("BySlug = %v, %v; want the link", link, err)
	}
	for _, c := range []struct{ domain, slug, want string }{
		{lookupDomain, "spring", `no link with slug "spring" on domain ` + lookupDomain + `; slugs are case-sensitive, and link ` + lookupLinkID + ` holds "Spring"`},
		{lookupDomain, "summer", `no link with slug "summer" on domain ` + lookupDomain + `; list the account's links`},
		{"9d0e8f6a-1b2c-4d3e-8f4a-5b6c7d8e9f00", "Spring", `no link with slug "Spring" on domain 9d0e8f6a-1b2c-4d3e-8f4a-5b6c7d8e9f00: this account has no link on that domain at all. Check the domain ID`},
		{lookupDomain, "", "is not of the form <domain_id>/<slug>"},
		{"", "Spring", "is not of the form <domain_id>/<slug>"},
	} {
		_, err := BySlug(ctx, listing, c.domain, c.slug)
		if !errors.Is(err, ErrNoSuchLink) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("BySlug(%q, %q) = %v, want ErrNoSuchLink saying %q", c.domain, c.slug, err, c.want)
		}
	}
}

func TestByIDListedSince(t *testing.T) {
	listings := snapshot.New(fixedListing(client.Link{ID: "other"}, client.Link{ID: lookupLinkID, Slug: "spring"}), time.Minute)
	link, err := ByIDListedSince(context.Background(), listings, listings.Mark(), lookupLinkID)
	if err != nil || link.Slug != "spring" {
		t.Fatalf("ByIDListedSince = %v, %v; want the link", link, err)
	}
	if _, err := ByIDListedSince(context.Background(), listings, listings.Mark(), "missing"); !errors.Is(err, ErrNotListed) {
		t.Fatalf("ByIDListedSince of a missing link: %v, want ErrNotListed", err)
	}
	failed := errors.New("listing failed")
	broken := snapshot.New(func(context.Context) (*client.LinkSet, error) { return nil, failed }, time.Minute)
	if _, err := ByIDListedSince(context.Background(), broken, broken.Mark(), lookupLinkID); !errors.Is(err, failed) {
		t.Fatalf("ByIDInFreshListing with a failed listing: %v, want its error", err)
	}
}

// A domain is on the listing when any link is, its ID in any letter case;
// a listing that fails cannot say, and says so.
func TestAnyOnDomain(t *testing.T) {
	ctx := context.Background()
	listing := snapshot.New(fixedListing(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "spring"}), time.Minute)
	if on, err := AnyOnDomain(ctx, listing, strings.ToUpper(lookupDomain)); !on || err != nil {
		t.Errorf("a domain with a link, written in capitals: %v, %v", on, err)
	}
	if on, err := AnyOnDomain(ctx, listing, "6a1b2c3d-0000-4000-8000-000000000000"); on || err != nil {
		t.Errorf("a domain without links: %v, %v", on, err)
	}
	failing := snapshot.New(func(context.Context) (*client.LinkSet, error) { return nil, errors.New("refused") }, time.Minute)
	if _, err := AnyOnDomain(ctx, failing, lookupDomain); err == nil {
		t.Error("a listing that fails: no error")
	}
}

// A short URL finds its link however its host and scheme are written, and
// with a query, fragment or trailing slash pasted along; the slug is
// case-sensitive.
func TestByShortURL(t *testing.T) {
	ctx := context.Background()
	listing := snapshot.New(fixedListing(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "Spring", ShortURL: "https://go.example.test/Spring"}), time.Minute)
	for _, tc := range []struct {
		given string
		found bool
	}{
		{"https://go.example.test/Spring", true},
		{"HTTP://GO.Example.test/Spring/?utm_source=x#top", true},
		{" https://go.example.test/Spring\n", true}, // pasted with the white space around it
		{"https://go.example.test/%53pring", true},  // the slug percent-encoded
		{"https://go.example.test:443/Spring", true},
		{"https://go.example.test:8443/Spring", false},
		{"https://go.example.test/spring", false},
		{"https://other.example.test/Spring", false},
		{"ftp://go.example.test/Spring", false},
	} {
		given, found := tc.given, tc.found
		link, err := ByShortURL(ctx, listing, given)
		if given == "https://go.example.test/spring" && (err == nil || !strings.Contains(err.Error(), "slugs are case-sensitive, and link "+lookupLinkID+" has https://go.example.test/Spring")) {
			t.Errorf("a slug in another case: %v, want the link that holds it named", err)
		}
		if found != (err == nil && link.ID == lookupLinkID) || !found && !errors.Is(err, ErrNoSuchLink) {
			t.Errorf("ByShortURL(%q) = %v, %v; want found %v", given, link, err, found)
		}
	}
}
