package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// Lookups of one link. The service cannot read one link, only list them
// all: these read the provider's shared snapshot of the listing (see
// internal/snapshot), except listedLink. They change nothing: what a
// lookup means for adoption (a link held by this run) is the caller's to
// say.

var (
	// errLinkGone reports a link that is not in the account's list.
	errLinkGone = errors.New("the link is not in the account's list")
	// errNoSuchLink reports a lookup that matched no link.
	errNoSuchLink = errors.New("no such link")
)

// linkByID finds a link by its ID.
func (d *providerData) linkByID(ctx context.Context, id string) (*client.Link, error) {
	link, ok, err := d.links.Get(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errLinkGone
	}
	return &link, nil
}

// linkBySlug finds the link holding a slug on a domain.
func (d *providerData) linkBySlug(ctx context.Context, domainID, slug string) (*client.Link, error) {
	if domainID == "" || slug == "" {
		return nil, fmt.Errorf("%w: %q is not of the form <domain_id>/<slug>", errNoSuchLink, domainID+"/"+slug)
	}
	link, ok, err := d.links.Find(ctx, func(l client.Link) bool {
		return strings.EqualFold(l.DomainID, domainID) && l.Slug == slug
	})
	switch {
	case err != nil:
		return nil, err
	case ok:
		return &link, nil
	}
	return nil, fmt.Errorf("%w: no link with slug %q on domain %s; list the account's links with data.shortlink_links", errNoSuchLink, slug, domainID)
}

// listedLink finds a link in a fresh listing, bypassing the snapshot.
func (d *providerData) listedLink(ctx context.Context, id string) (*client.Link, error) {
	links, err := d.client.ListLinks(ctx)
	if err != nil {
		return nil, err
	}
	for i := range links {
		if links[i].ID == id {
			return &links[i], nil
		}
	}
	return nil, errLinkGone
}
