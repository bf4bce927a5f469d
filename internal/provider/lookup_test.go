package provider

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

// lookupData is provider data over a fixed listing, with no creator: a
// lookup that tried to mark a link as held would panic.
func lookupData(links ...client.Link) *providerData {
	list := func(context.Context) ([]client.Link, error) { return links, nil }
	return &providerData{links: snapshot.New(list, time.Minute)}
}

func TestLinkByID(t *testing.T) {
	d := lookupData(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "spring"})
	link, err := d.linkByID(context.Background(), lookupLinkID)
	if err != nil || link.Slug != "spring" {
		t.Fatalf("linkByID = %v, %v; want the link", link, err)
	}
	if _, err := d.linkByID(context.Background(), "6a1b2c3d-0000-4000-8000-000000000000"); !errors.Is(err, errLinkGone) {
		t.Fatalf("linkByID of a missing link: %v, want errLinkGone", err)
	}
}

func TestLinkBySlug(t *testing.T) {
	d := lookupData(client.Link{ID: lookupLinkID, DomainID: lookupDomain, Slug: "Spring"})
	ctx := context.Background()
	// The domain ID is a UUID (any case); the slug is case-sensitive.
	link, err := d.linkBySlug(ctx, strings.ToUpper(lookupDomain), "Spring")
	if err != nil || link.ID != lookupLinkID {
		t.Fatalf("linkBySlug = %v, %v; want the link", link, err)
	}
	for _, c := range []struct{ domain, slug, want string }{
		{lookupDomain, "spring", `no link with slug "spring"`},
		{lookupDomain, "", "is not of the form <domain_id>/<slug>"},
		{"", "Spring", "is not of the form <domain_id>/<slug>"},
	} {
		_, err := d.linkBySlug(ctx, c.domain, c.slug)
		if !errors.Is(err, errNoSuchLink) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("linkBySlug(%q, %q) = %v, want errNoSuchLink saying %q", c.domain, c.slug, err, c.want)
		}
	}
}
