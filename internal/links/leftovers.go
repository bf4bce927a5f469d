package links

import (
	"hash/maphash"
	"net/url"
	"slices"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// Layered is a listing laid over a LinkSet (the snapshot's view): its links
// are the set's, less those this provider deleted, with this provider's
// own writes on top. Those writes are held by resources, so they are never
// leftovers, and a search for leftovers can use an index of the set.
type Layered interface {
	client.Listing
	Under() *client.LinkSet
}

// leftoverIndex holds, for one LinkSet, the links an interrupted create
// without a slug may have left: those created within the adoption window,
// by domain and destination. Every new link without a slug looks for its
// leftovers as it is created; a pass over the whole account for each took
// seconds a link on a million links, and one pass a listing does not. It
// keeps a hash and an ID a link, so that an account whose links are all
// recent costs tens of megabytes, not a copy of the account; a hash that
// two keys share only adds a candidate, which madeBy then refuses.
type leftoverIndex struct {
	of    *client.LinkSet
	since time.Time // the earliest creation time indexed
	seed  maphash.Seed
	ids   map[uint64][]string
	// utms are the distinct UTM parameters of the indexed links, none
	// first: a destination compares with a link's after dropping the UTM
	// parameters that link holds (SameDestination), so a lookup keys the
	// destination once for each.
	utms []client.UTM
}

func newLeftoverIndex(set *client.LinkSet, since time.Time) *leftoverIndex {
	idx := &leftoverIndex{of: set, since: since, seed: maphash.MakeSeed(), ids: map[uint64][]string{}, utms: []client.UTM{{}}}
	seen := map[client.UTM]bool{{}: true}
	for l := range set.All() {
		if l.CreatedAt.IsZero() || l.CreatedAt.Before(since) {
			continue // not told apart from another configuration's, or too old
		}
		utm := utmOf(l.UTM)
		if !seen[utm] {
			seen[utm] = true
			idx.utms = append(idx.utms, utm)
		}
		h := idx.key(l.DomainID, l.Destination, utm)
		idx.ids[h] = append(idx.ids[h], l.ID)
	}
	return idx
}

// key hashes a link's domain, its destination as canonicalURL spells it
// with the link's UTM parameters dropped, and those parameters.
func (idx *leftoverIndex) key(domainID, destination string, utm client.UTM) uint64 {
	var h maphash.Hash
	h.SetSeed(idx.seed)
	for _, part := range []string{client.ComparableID(domainID), canonicalDestination(destination, utm), utm.Source, utm.Medium, utm.Campaign, utm.Term, utm.Content} {
		_, _ = h.WriteString(part)
		_ = h.WriteByte(0)
	}
	return h.Sum64()
}

// candidates are the IDs of the indexed links that may be of in's domain
// and destination.
func (idx *leftoverIndex) candidates(in client.CreateLinkInput) []string {
	var out []string
	for _, utm := range idx.utms {
		out = append(out, idx.ids[idx.key(in.DomainID, in.Destination, utm)]...)
	}
	return out
}

// canonicalDestination is the key SameDestination compares: the URL as
// canonicalURL spells it without utm's parameters, or the text itself when
// it is no URL.
func canonicalDestination(dest string, utm client.UTM) string {
	u, err := url.Parse(dest)
	if err != nil {
		return "\x00" + dest
	}
	var drop *client.UTM
	if utm != (client.UTM{}) {
		drop = &utm
	}
	return canonicalURL(dest, u, drop)
}

func utmOf(u *client.UTM) client.UTM {
	if u == nil {
		return client.UTM{}
	}
	return *u
}

// leftoverCandidatesLocked are the links of listed that may be leftovers
// of in: from the index of the set under listed (built once for each set,
// then kept), as listed has them now; every link of a listing of another
// kind. Called with lc.mu held.
func (lc *Creator) leftoverCandidatesLocked(listed client.Listing, in client.CreateLinkInput, since time.Time) []client.Link {
	var set *client.LinkSet
	switch l := listed.(type) {
	case *client.LinkSet:
		set = l
	case Layered:
		set = l.Under()
	default:
		return slices.Collect(listed.All())
	}
	if lc.leftovers == nil || lc.leftovers.of != set || since.Before(lc.leftovers.since) {
		lc.leftovers = newLeftoverIndex(set, since)
	}
	var out []client.Link
	for _, id := range lc.leftovers.candidates(in) {
		if l, ok := listed.Get(id); ok { // as listed has it: not deleted by this provider since
			out = append(out, l)
		}
	}
	return out
}
