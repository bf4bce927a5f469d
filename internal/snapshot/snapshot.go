// Package snapshot keeps one shared copy of the account's links for a
// provider instance. The service has no get-by-id: without it every Read
// lists every link, so refreshing N links costs N list requests of N links
// each. With it, the first Read lists (following every page), concurrent
// Reads wait for that same request, later Reads are served from the copy
// while it is fresh, and the provider's own writes update the copy, so a Read
// after a write always sees the write.
//
// A listing can miss a link that exists: the service pages by offset, so when
// another client deletes links while we follow the pages, the later pages
// shift and one link falls between two of them. Terraform takes a link that
// a Read does not find as deleted and plans to create it again, so a link
// missing from one listing is confirmed missing by a later listing, started
// after it ended and holding every link it held (missSettled), before it is
// reported missing. Misses share those listings: concurrent misses cost the
// same listings, not more per link. A link this provider deleted itself
// needs no confirmation. Links, for the same reason, returns the union of
// the listings it takes.
//
// An account can hold a million links: a listing is kept as the client
// reads it (a compact client.LinkSet), and this provider's writes are laid
// over it (view), never copied into it.
package snapshot

import (
	"context"
	"errors"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// DefaultLifetime is how long a listing serves Reads. One Terraform command
// (plan, apply) normally finishes well within it; a longer one lists again.
const DefaultLifetime = 5 * time.Minute

// ListFunc lists every link of the account.
type ListFunc func(ctx context.Context) (*client.LinkSet, error)

// Snapshot is safe for concurrent use.
type Snapshot struct {
	list     ListFunc
	lifetime time.Duration // 0: every call lists (the snapshot is off)
	now      func() time.Time

	mu sync.Mutex
	// cur is the current listing with this provider's writes since it
	// started; nil before the first listing. It is never changed: a write
	// replaces it with a new view.
	cur       *view
	fetchedAt time.Time
	// generation counts the listings installed. Listings run one at a time,
	// so any listing installed after the one that missed a link started
	// after that one ended: it is the second look that confirms the miss.
	generation uint64
	// started counts the listings started; curSeq is the number of the
	// one cur lays its writes over (Mark, Since).
	started, curSeq uint64
	inflight        *listing
	// journal holds the writes made while a listing is in flight: the
	// listing may predate them, so they are laid over it.
	journal []write
	// removed holds the IDs this provider deleted (and has not put since),
	// each with the generation installed when it did: their absence is
	// known, not a possible paging gap, and a delete made after a listing
	// ended shifted none of its pages (missSettled).
	removed map[string]uint64
	// whole is the union Links made last, of cur (wholeOf) and the
	// listings before it: it serves later calls while cur is that same view
	// (no write or listing since) and fresh, so that several callers of one
	// command (list blocks, data sources) cost its listings, not more each.
	whole   client.Listing
	wholeOf *view
	// wholeErr is what Links answered with whole: ErrListingsShifted when
	// no listing of it settled, so that calls it serves warn as it did.
	wholeErr error
}

// write is one local change: a link put, or removed when removed is true.
type write struct {
	link    client.Link
	removed bool
}

// listing is one list request that concurrent callers share.
type listing struct {
	done chan struct{}
	seq  uint64 // its number among the listings started
	err  error
	// callers counts the callers that joined it, the one that runs it
	// included (one that gave up is not taken off): tests that hold a
	// listing release it once all have joined.
	callers int
}

// New returns a snapshot over list. lifetime 0 turns sharing off: every
// call lists, and writes are not recorded.
func New(list ListFunc, lifetime time.Duration) *Snapshot {
	return &Snapshot{list: list, lifetime: lifetime, now: time.Now, removed: map[string]uint64{}}
}

// Links returns every link: the union of a fresh listing and the ones
// started after it, until one holds every link of the one before
// (missSettled: that one skipped none), at most MaxLooks. Settled, it is
// the union of the last two, the links only the one before holds first
// (links they lack were deleted); unsettled, the union of them all, with
// ErrListingsShifted. Links this provider removed meanwhile are left out.
// The last listing, shared with concurrent calls, becomes the current one.
// A listing the service gave in one answer skipped nothing, and is
// returned alone. A union made since the last write or listing is
// returned again while fresh.
func (s *Snapshot) Links(ctx context.Context) (client.Listing, error) {
	if s.lifetime <= 0 {
		return s.linksUnshared(ctx)
	}
	s.mu.Lock()
	if s.wholeOf != nil && s.wholeOf == s.cur && s.now().Sub(s.fetchedAt) < s.lifetime {
		whole, err := s.whole, s.wholeErr
		s.mu.Unlock()
		return whole, err
	}
	s.mu.Unlock()
	if err := s.ensureFresh(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	last, after := s.cur, s.generation
	s.mu.Unlock()
	if last.base.OneAnswer() {
		return last, nil // no page boundary for a link to fall between
	}
	var earlier []client.Listing
	var unsettled error
	for looks := 2; ; looks++ {
		prev, prevGen := last, after
		if err := s.await(ctx, after); err != nil {
			return nil, err
		}
		s.mu.Lock()
		last, after = s.cur, s.generation
		ours := s.removedSince(prevGen)
		s.mu.Unlock()
		if missSettled(prev.base, last.base, ours) {
			earlier = []client.Listing{prev}
			break
		}
		if earlier = append(earlier, prev); looks == MaxLooks {
			unsettled = ErrListingsShifted
			break
		}
	}
	s.mu.Lock()
	removed := s.removedSince(0)
	s.mu.Unlock()
	// A link only an earlier listing has and that we deleted is gone, not
	// skipped by the last.
	whole := union(last, earlier, removed)
	s.mu.Lock()
	if s.cur == last {
		s.whole, s.wholeOf, s.wholeErr = whole, last, unsettled
	}
	s.mu.Unlock()
	return whole, unsettled
}

// linksUnshared is Links with the snapshot off: no writes are recorded, so
// none is this provider's.
func (s *Snapshot) linksUnshared(ctx context.Context) (client.Listing, error) {
	last, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	if last.OneAnswer() {
		return last, nil
	}
	var earlier []client.Listing
	for looks := 2; ; looks++ {
		prev := last
		if last, err = s.list(ctx); err != nil {
			return nil, err
		}
		if missSettled(prev, last, nil) {
			return union(last, []client.Listing{prev}, nil), nil
		}
		if earlier = append(earlier, prev); looks == MaxLooks {
			return union(last, earlier, nil), ErrListingsShifted
		}
	}
}

// Get returns one link; ok is false when the account has no such link. A
// link the current listing lacks is looked for again in the next listing
// (see the package comment), unless this provider removed it.
func (s *Snapshot) Get(ctx context.Context, id string) (client.Link, bool, error) {
	return s.find(ctx, func(l client.Listing) (client.Link, bool) { return l.Get(id) }, id)
}

// BySlug returns the link that holds slug on a domain; a miss is
// confirmed by the next listing, as Get's is.
func (s *Snapshot) BySlug(ctx context.Context, domainID, slug string) (client.Link, bool, error) {
	return s.find(ctx, func(l client.Listing) (client.Link, bool) { return l.BySlug(domainID, slug) }, "")
}

// Current returns the links of a fresh listing, with no confirming listing:
// for questions about links that are there (is there a link like this
// one?), where a link a listing skipped costs no more than a warning.
func (s *Snapshot) Current(ctx context.Context) (client.Listing, error) {
	if s.lifetime <= 0 {
		return s.list(ctx)
	}
	l, _, err := s.fresh(ctx)
	return l, err
}

// fresh returns the current listing, fresh (ensureFresh), and the
// generation it is.
func (s *Snapshot) fresh(ctx context.Context) (client.Listing, uint64, error) {
	if err := s.ensureFresh(ctx); err != nil {
		return nil, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.generation, nil
}

// ErrListingsShifted is the answer of find and Links when links were
// deleted while each listing was taken: a listing may then have skipped a
// link, and the service cannot be asked for one link. Links returns what
// its listings found with it.
var ErrListingsShifted = errors.New(ListingsShifted + ", so a link missing from them all may still be there; run again once those deletions are over")

// ListingsShifted says why no listing settled, for every message that
// reports it.
const ListingsShifted = "links were being deleted while each listing of the account was taken, which shifts the service's pages past links"

// MaxLooks bounds the listings a miss may take: two when no link is deleted
// while they are taken, one more for each that saw deletions under way.
const MaxLooks = 4

// find looks for a link with lookup. id, when set, is the one ID lookup
// finds: its absence needs no confirmation if this provider removed it.
// A miss is a link's absence only once a later listing holds every link of
// the listing that missed it (missSettled); else it is looked for again.
func (s *Snapshot) find(ctx context.Context, lookup func(client.Listing) (client.Link, bool), id string) (client.Link, bool, error) {
	if s.lifetime <= 0 {
		return s.findUnshared(ctx, lookup)
	}
	if err := s.ensureFresh(ctx); err != nil {
		return client.Link{}, false, err
	}
	var missedBy *client.LinkSet
	var missedGen uint64
	for looks := 1; ; looks++ {
		s.mu.Lock()
		l, ok := lookup(s.cur)
		_, ourDelete := s.removed[id]
		sure, listed, gen := ok || (id != "" && ourDelete), s.cur.base, s.generation
		ours := s.removedSince(missedGen)
		s.mu.Unlock()
		switch {
		case sure || missedBy != nil && missSettled(missedBy, listed, ours):
			return l, ok, nil
		case looks == MaxLooks:
			return client.Link{}, false, ErrListingsShifted
		}
		missedBy, missedGen = listed, gen
		if err := s.await(ctx, gen); err != nil {
			return client.Link{}, false, err
		}
	}
}

// findUnshared looks for a link in a listing, and in the next ones as find
// does.
func (s *Snapshot) findUnshared(ctx context.Context, lookup func(client.Listing) (client.Link, bool)) (client.Link, bool, error) {
	var missedBy *client.LinkSet
	for range MaxLooks {
		listed, err := s.list(ctx)
		if err != nil {
			return client.Link{}, false, err
		}
		if l, ok := lookup(listed); ok || missedBy != nil && missSettled(missedBy, listed, nil) {
			return l, ok, nil
		}
		missedBy = listed
	}
	return client.Link{}, false, ErrListingsShifted
}

// missSettled is whether a link that missedBy lacked is absent, now that a
// listing started after it ended lacks it too. With offset paging a link
// falls between two pages when links before it are deleted while the
// listing is taken, and those links were in it (they stood before the
// link on the pages already read): a later listing that holds every link
// of missedBy, but those this provider deleted after missedBy ended
// (ours), shows that none was, so missedBy skipped nothing. A listing the
// service gave in one answer has no pages to skip a link between.
func missSettled(missedBy, later *client.LinkSet, ours map[string]bool) bool {
	if missedBy.OneAnswer() {
		return true
	}
	for l := range missedBy.All() {
		if _, ok := later.Get(l.ID); !ok && !ours[l.ID] {
			return false
		}
	}
	return true
}

// removedSince is the IDs this provider deleted once generation gen was
// installed (all of them for 0). Called with s.mu held.
func (s *Snapshot) removedSince(gen uint64) map[string]bool {
	out := map[string]bool{}
	for id, at := range s.removed {
		if at >= gen {
			out[id] = true
		}
	}
	return out
}

// Mark is a point among the snapshot's listings: Since waits for one
// started after it. A caller marks when an answer has told it that the
// service changed (a 409, a change answered without the link).
func (s *Snapshot) Mark() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Since returns a listing started after mark, as the service gave it,
// without this provider's writes laid over it: the current one if it was,
// else the next, which concurrent callers share. So many answers that each
// need the service's latest links (409s after a killed run, on every link
// it left) cost one or two listings of the account, not one each.
func (s *Snapshot) Since(ctx context.Context, mark uint64) (client.Listing, error) {
	listed, err := s.since(ctx, mark)
	if err != nil {
		return nil, err
	}
	return listed, nil
}

// FindSince looks for a link with lookup in a listing started after mark,
// as Since gives it, for a search whose miss decides a write: a create sent
// again when the link its lost answer may have made is not found. A miss
// is confirmed as Get confirms one, by the listings started after it,
// until one holds every link of the one that missed (missSettled), at most
// MaxLooks; unconfirmed, it is ErrListingsShifted. A link found in any of
// them is returned.
func (s *Snapshot) FindSince(ctx context.Context, mark uint64, lookup func(client.Listing) (client.Link, bool)) (client.Link, bool, error) {
	var missedBy *client.LinkSet
	var missedGen uint64
	for looks := 1; ; looks++ {
		listed, err := s.since(ctx, mark)
		if err != nil {
			return client.Link{}, false, err
		}
		if l, ok := lookup(listed); ok {
			return l, true, nil
		}
		s.mu.Lock()
		ours, gen, next := s.removedSince(missedGen), s.generation, s.started
		s.mu.Unlock()
		switch {
		case listed.OneAnswer() || missedBy != nil && missSettled(missedBy, listed, ours):
			return client.Link{}, false, nil
		case looks == MaxLooks:
			return client.Link{}, false, ErrListingsShifted
		}
		missedBy, missedGen, mark = listed, gen, next // the next listing starts after this one ended
	}
}

// since is Since's listing, as the client read it.
func (s *Snapshot) since(ctx context.Context, mark uint64) (*client.LinkSet, error) {
	if s.lifetime <= 0 {
		return s.list(ctx)
	}
	for {
		s.mu.Lock()
		if s.cur != nil && s.curSeq > mark {
			base := s.cur.base
			s.mu.Unlock()
			return base, nil
		}
		after := s.generation
		s.mu.Unlock()
		if err := s.await(ctx, after); err != nil {
			return nil, err
		}
	}
}

// Put records a link this provider created or changed.
func (s *Snapshot) Put(l client.Link) { s.record(write{link: l}) }

// Remove records a link this provider deleted.
func (s *Snapshot) Remove(id string) { s.record(write{link: client.Link{ID: id}, removed: true}) }

func (s *Snapshot) record(w write) {
	if s.lifetime <= 0 {
		return // the snapshot is off: the service's list is the truth
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.removed {
		s.removed[w.link.ID] = s.generation
	} else {
		delete(s.removed, w.link.ID)
	}
	if s.inflight != nil {
		s.journal = append(s.journal, w)
	}
	if s.cur != nil { // else the first listing will include it
		s.cur = s.cur.with(w)
	}
}

// ensureFresh lists unless a fresh listing exists, sharing one request
// among concurrent callers.
func (s *Snapshot) ensureFresh(ctx context.Context) error {
	s.mu.Lock()
	fresh := s.cur != nil && s.now().Sub(s.fetchedAt) < s.lifetime
	after := s.generation
	s.mu.Unlock()
	if fresh {
		return nil
	}
	return s.await(ctx, after)
}

// await returns once a listing newer than generation after is installed. It
// waits for the listing in flight, which is always newer, or starts one, so
// that concurrent callers share one request.
func (s *Snapshot) await(ctx context.Context, after uint64) error {
	for {
		s.mu.Lock()
		if s.generation > after {
			s.mu.Unlock()
			return nil
		}
		call := s.inflight
		if call == nil {
			s.started++
			call = &listing{done: make(chan struct{}), seq: s.started, callers: 1}
			s.inflight = call
			s.mu.Unlock()
			s.run(ctx, call)
			return call.err
		}
		call.callers++
		s.mu.Unlock()
		select {
		case <-call.done:
			if call.err != nil && ctx.Err() == nil && isContextErr(call.err) {
				continue // the leader's context ended, not ours: list again
			}
			// The listing we waited for serves us as it serves its leader,
			// even if it took longer than the lifetime.
			return call.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run does one listing and installs it, with the writes made meanwhile
// laid over it. Its age counts from when it ended: a listing can take
// longer than the lifetime (ten thousand pages under a read limit of 600 a
// minute take 17 minutes), and one aged from its start would be stale as it
// arrived, so every refresh after the first round would list again.
func (s *Snapshot) run(ctx context.Context, call *listing) {
	links, err := s.list(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	journal := s.journal
	s.inflight, s.journal, call.err = nil, nil, err
	if err == nil {
		v := &view{base: links}
		for _, w := range journal {
			v = v.with(w)
		}
		s.cur, s.curSeq = v, call.seq
		s.fetchedAt = s.now()
		s.generation++
	}
	close(call.done)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// view is a listing with this provider's writes since it started laid
// over it: links put (changed in their place, or added at the end in the
// order they were put) and links removed. It is never changed (with
// returns a new one), so that a caller can read it while writes go on; a
// write costs a copy of the writes, not of the listing.
type view struct {
	base    *client.LinkSet
	puts    map[string]client.Link
	added   []string // IDs put that base lacks
	removed map[string]bool
}

var _ client.Listing = (*view)(nil)

// Under is the listing the view lays this provider's writes over
// (links.Layered).
func (v *view) Under() *client.LinkSet { return v.base }

func (v *view) with(w write) *view {
	next := &view{base: v.base, puts: maps.Clone(v.puts), added: slices.Clone(v.added), removed: maps.Clone(v.removed)}
	id := w.link.ID
	_, listed := v.base.Get(id)
	if w.removed {
		delete(next.puts, id)
		next.added = slices.DeleteFunc(next.added, func(a string) bool { return a == id })
		if listed {
			next.removed = setOf(next.removed, id)
		}
		return next
	}
	if next.puts == nil {
		next.puts = map[string]client.Link{}
	}
	next.puts[id] = w.link
	// A link the listing lacks, or that was removed from it and is put
	// again, comes last, as the service lists a link it has just made.
	if (!listed || next.removed[id]) && !slices.Contains(next.added, id) {
		next.added = append(next.added, id)
	}
	return next
}

func setOf(m map[string]bool, id string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[id] = true
	return m
}

// Len is the number of links.
func (v *view) Len() int {
	n := v.base.Len() + len(v.added)
	for id := range v.removed {
		if _, listed := v.base.Get(id); listed {
			n--
		}
	}
	return n
}

// All yields the listing's links, as this provider last wrote them, then
// the links it added.
func (v *view) All() iter.Seq[client.Link] {
	return func(yield func(client.Link) bool) {
		for l := range v.base.All() {
			if v.removed[l.ID] {
				continue
			}
			if put, ok := v.puts[l.ID]; ok {
				l = put
			}
			if !yield(l) {
				return
			}
		}
		for _, id := range v.added {
			if !yield(v.puts[id]) {
				return
			}
		}
	}
}

// Get returns the link with this ID (a UUID in any case, as the listing
// finds it).
func (v *view) Get(id string) (client.Link, bool) {
	if l, ok := v.puts[id]; ok {
		return l, true
	}
	if v.removed[id] {
		return client.Link{}, false
	}
	l, ok := v.base.Get(id)
	if ok && l.ID != id {
		return v.Get(l.ID) // asked in another case: the writes are kept under the service's spelling
	}
	return l, ok
}

// BySlug returns the link that holds slug on a domain: the listing's,
// unless this provider removed or changed it, or one it put. (The service
// gives a slug to one link of a domain, so which of two comes first does
// not arise.)
func (v *view) BySlug(domainID, slug string) (client.Link, bool) {
	if l, ok := v.base.BySlug(domainID, slug); ok && !v.removed[l.ID] {
		if _, changed := v.puts[l.ID]; !changed {
			return l, true
		}
	}
	for _, l := range v.puts {
		if client.HoldsSlug(&l, domainID, slug) {
			return l, true
		}
	}
	return client.Link{}, false
}

// union returns each link of the listings once, in the earlier ones' order
// then last's, as the latest listing that has it has it; links of the
// earlier ones that this provider removed are left out.
func union(last client.Listing, earlier []client.Listing, removed map[string]bool) *client.LinkSet {
	out := client.NewLinkSet()
	for _, listing := range earlier {
		for l := range listing.All() {
			if !removed[l.ID] {
				out.Add(&l)
			}
		}
	}
	for l := range last.All() {
		out.Add(&l)
	}
	return out
}
