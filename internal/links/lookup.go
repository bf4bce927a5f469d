package links

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
)

// Lookups of one link. The service cannot read one link, only list them
// all, so these search a listing: ByID and BySlug the provider's shared
// snapshot of it (see internal/snapshot), ByIDListedSince a listing
// started after a mark. They change nothing: what a lookup means for adoption (a link
// held by this run, see Creator.Hold) is the caller's to say.

var (
	// ErrNotListed reports a link that is not in the account's list.
	ErrNotListed = errors.New("the link is not in the account's list")
	// ErrNoSuchLink reports a lookup that matched no link.
	ErrNoSuchLink = errors.New("no such link")
)

// NoSuchLink is a lookup that matched no link, saying which in its own
// words: it matches ErrNoSuchLink without repeating "no such link" before
// them, under a diagnostic that already says so.
func NoSuchLink(format string, args ...any) error {
	return noSuchLink(fmt.Sprintf(format, args...))
}

// NotOnAccount is the ErrNoSuchLink of an ID that no link of the account
// has.
func NotOnAccount(id string) error {
	return NoSuchLink("no link with ID %s is on this account; "+listLinksHint, id)
}

// listLinksHint is where a lookup that missed sends the user: the account's
// links, to find the one meant.
const listLinksHint = "list the account's links with data.shortlink_links"

type noSuchLink string

func (e noSuchLink) Error() string      { return string(e) }
func (noSuchLink) Is(target error) bool { return target == ErrNoSuchLink }

// ByID finds a link by its ID in listing.
func ByID(ctx context.Context, listing *snapshot.Snapshot, id string) (*client.Link, error) {
	link, ok, err := listing.Get(ctx, id)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, ErrNotListed
	}
	return &link, nil
}

// BySlug finds the link in listing that holds a slug on a domain.
func BySlug(ctx context.Context, listing *snapshot.Snapshot, domainID, slug string) (*client.Link, error) {
	if domainID == "" || slug == "" {
		return nil, NoSuchLink("%q is not of the form <domain_id>/<slug>", domainID+"/"+slug)
	}
	link, ok, err := listing.BySlug(ctx, domainID, slug)
	switch {
	case err != nil:
		return nil, err
	case ok:
		return &link, nil
	}
	if other, ok := inOtherCase(ctx, listing, domainID, slug); ok {
		return nil, NoSuchLink("no link with slug %q on domain %s; slugs are case-sensitive, and link %s holds %q", slug, domainID, other.ID, other.Slug)
	}
	if found, err := AnyOnDomain(ctx, listing, domainID); err == nil && !found {
		// The domain ID, not the slug, is the likelier mistake.
		return nil, NoSuchLink("no link with slug %q on domain %s: this account has no link on that domain at all. Check the domain ID (a domain of another account, or another base_url's, has no link here); "+listLinksHint, slug, domainID)
	}
	return nil, NoSuchLink("no link with slug %q on domain %s; "+listLinksHint, slug, domainID)
}

// ByShortURL finds the link in listing whose short URL is shortURL: the
// address a marketer has at hand. Its host and scheme are compared in any
// letter case, its path (the slug) exactly; a query or fragment pasted with
// it (UTM parameters, say) is not part of the short URL.
func ByShortURL(ctx context.Context, listing *snapshot.Snapshot, shortURL string) (*client.Link, error) {
	want, ok := comparableShortURL(shortURL)
	if !ok {
		return nil, NoSuchLink("%q is not an http or https URL with a host", shortURL)
	}
	listed, err := listing.Current(ctx)
	if err != nil {
		return nil, err
	}
	var otherCase *client.Link
	for l := range listed.All() {
		got, ok := comparableShortURL(l.ShortURL)
		switch {
		case ok && got == want:
			return &l, nil
		case ok && otherCase == nil && strings.EqualFold(got, want):
			otherCase = &l
		}
	}
	if otherCase != nil {
		return nil, NoSuchLink("no link of this account has the short URL %s; slugs are case-sensitive, and link %s has %s", shortURL, otherCase.ID, otherCase.ShortURL)
	}
	return nil, NoSuchLink("no link of this account has the short URL %s; "+listLinksHint, shortURL)
}

// comparableShortURL spells a short URL one way: host in lower case, a
// port only if it is not the scheme's, the path decoded and without a
// trailing slash, no query or fragment. The scheme is left out beyond
// that: a short link answers on http and https alike.
func comparableShortURL(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	if u.Host == "" || scheme != "https" && scheme != "http" {
		return "", false
	}
	host := ComparableHost(u.Hostname())
	if port := u.Port(); port != "" && port != client.DefaultPort(scheme) {
		host += ":" + port
	}
	return host + strings.TrimSuffix(u.Path, "/"), true
}

// inOtherCase finds a link of domainID whose slug is slug in other letter
// case: slugs are case-sensitive, and a capital typed by mistake is the
// likeliest miss. A listing that fails only leaves the hint out.
func inOtherCase(ctx context.Context, listing *snapshot.Snapshot, domainID, slug string) (client.Link, bool) {
	listed, err := listing.Current(ctx)
	if err != nil {
		return client.Link{}, false
	}
	for l := range listed.All() {
		if client.SameID(l.DomainID, domainID) && strings.EqualFold(l.Slug, slug) {
			return l, true
		}
	}
	return client.Link{}, false
}

// ByIDListedSince finds a link by its ID in a listing started after mark
// (Snapshot.Since), for a link the snapshot may not know as it is now (one
// just changed, answered without the link).
func ByIDListedSince(ctx context.Context, listings *snapshot.Snapshot, mark uint64, id string) (*client.Link, error) {
	listed, err := listings.Since(ctx, mark)
	if err != nil {
		return nil, err
	}
	if l, ok := listed.Get(id); ok {
		return &l, nil
	}
	return nil, ErrNotListed
}

// A UUID written in capitals names the same link or domain as the
// service's spelling (client.SameID), but whether the service reads it so
// is not shown: a request carries the service's spelling where a listing
// shows it, and otherwise the UUID in lower case, as RFC 9562 has UUIDs
// written (and the emulator does). An ID without capitals, or one that is
// not a UUID (compared exactly), is taken as written, with no listing.

// ServiceLinkID is a link ID as the service spells it, or, when the listing
// does not have it, id in lower case if it is a UUID (the service then
// answers for itself).
func ServiceLinkID(ctx context.Context, listing *snapshot.Snapshot, id string) string {
	return asListed(ctx, listing, id, func(l client.Listing) (string, bool) {
		link, ok := l.Get(id)
		return link.ID, ok
	})
}

// ServiceDomainID is a domain ID as the service spells it on the
// account's links, or, when none of them is on that domain, domainID in
// lower case if it is a UUID.
func ServiceDomainID(ctx context.Context, listing *snapshot.Snapshot, domainID string) string {
	return asListed(ctx, listing, domainID, func(l client.Listing) (string, bool) {
		link, ok := onDomain(l, domainID)
		return link.DomainID, ok
	})
}

// AnyOnDomain reports whether the account's current listing holds a link
// on domainID, or held one as the service answered it, before this
// provider's own deletes. A link missing from a listing that has none on
// its domain may be on another account (a key or base_url of another
// account lists that one's links), not deleted, and a delete answered 404
// is "already gone" only on an account that has the domain; a destroy that
// deleted the domain's other links has emptied it itself. A listing that
// fails cannot say.
func AnyOnDomain(ctx context.Context, listing *snapshot.Snapshot, domainID string) (bool, error) {
	listed, err := listing.Current(ctx)
	if err != nil {
		return false, err
	}
	if _, ok := onDomain(listed, domainID); ok {
		return true, nil
	}
	if l, ok := listed.(Layered); ok && l.Under() != nil {
		_, ok := onDomain(l.Under(), domainID)
		return ok, nil
	}
	return false, nil
}

// onDomain is a link of l on domainID, if any.
func onDomain(l client.Listing, domainID string) (client.Link, bool) {
	for link := range l.All() {
		if client.SameID(link.DomainID, domainID) {
			return link, true
		}
	}
	return client.Link{}, false
}

func asListed(ctx context.Context, listing *snapshot.Snapshot, id string, find func(client.Listing) (string, bool)) string {
	if client.ComparableID(id) == id {
		return id
	}
	listed, err := listing.Current(ctx)
	if err != nil {
		return client.ComparableID(id)
	}
	if spelled, ok := find(listed); ok {
		return spelled
	}
	return client.ComparableID(id)
}
