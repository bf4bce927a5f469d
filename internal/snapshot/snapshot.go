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
// missing from one listing is confirmed missing by a second listing, started
// after the first ended, before it is reported missing. Misses share that
// listing: concurrent misses cost one more listing, not one per link. A link
// this provider deleted itself needs no confirmation. Links, for the same
// reason, returns the union of two listings.
package snapshot

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// DefaultLifetime is how long a listing serves Reads. One Terraform command
// (plan, apply) normally finishes well within it; a longer one lists again.
const DefaultLifetime = 5 * time.Minute

// ListFunc lists every link of the account.
type ListFunc func(ctx context.Context) ([]client.Link, error)

// Snapshot is safe for concurrent use.
type Snapshot struct {
	list     ListFunc
	lifetime time.Duration // 0: every call lists (the snapshot is off)
	now      func() time.Time

	mu        sync.Mutex
	links     map[string]client.Link
	order     []string // IDs in the service's order
	fetchedAt time.Time
	// generation counts the listings installed. Listings run one at a time,
	// so any listing installed after the one that missed a link started
	// after that one ended: it is the second look that confirms the miss.
	generation uint64
	inflight   *listing
	// journal holds the writes made while a listing is in flight: the
	// listing may predate them, so they are replayed onto it.
	journal []write
	// removed holds the IDs this provider deleted (and has not put since):
	// their absence is known, not a possible paging gap.
	removed map[string]bool
}

// write is one local change: a link put, or removed when removed is true.
type write struct {
	link    client.Link
	removed bool
}

// listing is one list request that concurrent callers share.
type listing struct {
	done chan struct{}
	err  error
}

// New returns a snapshot over list. lifetime 0 turns sharing off: every
// call lists, and writes are not recorded.
func New(list ListFunc, lifetime time.Duration) *Snapshot {
	return &Snapshot{list: list, lifetime: lifetime, now: time.Now, removed: map[string]bool{}}
}

// Links returns every link in the service's order: the union of a fresh
// listing and a second one started after it, so that a link one of them
// skipped is still returned (links only the second lists come last). Links
// this provider removed meanwhile are left out. The second listing, shared
// with concurrent calls, becomes the current one.
func (s *Snapshot) Links(ctx context.Context) ([]client.Link, error) {
	if s.lifetime <= 0 {
		return s.linksUnshared(ctx)
	}
	if err := s.ensureFresh(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	first, after := s.currentLocked(), s.generation
	s.mu.Unlock()
	if err := s.await(ctx, after); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A link only the first listing has and that we deleted is gone, not
	// skipped by the second one.
	first = slices.DeleteFunc(first, func(l client.Link) bool { return s.removed[l.ID] })
	return union(first, s.currentLocked()), nil
}

func (s *Snapshot) linksUnshared(ctx context.Context) ([]client.Link, error) {
	first, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	second, err := s.list(ctx)
	if err != nil {
		return nil, err
	}
	return union(first, second), nil
}

// Get returns one link; ok is false when the account has no such link. A
// link the current listing lacks is looked for again in the next listing
// (see the package comment), unless this provider removed it.
func (s *Snapshot) Get(ctx context.Context, id string) (client.Link, bool, error) {
	return s.find(ctx, func(l client.Link) bool { return l.ID == id }, id)
}

// Find returns the first link, in the service's order, that match accepts
// (a lookup by slug, say); a miss is confirmed by the next listing, as
// Get's is.
func (s *Snapshot) Find(ctx context.Context, match func(client.Link) bool) (client.Link, bool, error) {
	return s.find(ctx, match, "")
}

// Current returns the links of a fresh listing, with no confirming listing:
// for questions about links that are there (is there a link like this
// one?), where a link a listing skipped costs no more than a warning.
func (s *Snapshot) Current(ctx context.Context) ([]client.Link, error) {
	if s.lifetime <= 0 {
		return s.list(ctx)
	}
	if err := s.ensureFresh(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.currentLocked(), nil
}

// find looks for a link match accepts. id, when set, is the one ID match
// accepts: it is looked up directly, and its absence needs no confirmation
// if this provider removed it.
func (s *Snapshot) find(ctx context.Context, match func(client.Link) bool, id string) (client.Link, bool, error) {
	if s.lifetime <= 0 {
		return s.findUnshared(ctx, match)
	}
	if err := s.ensureFresh(ctx); err != nil {
		return client.Link{}, false, err
	}
	s.mu.Lock()
	l, ok := s.findLocked(match, id)
	sure, after := ok || (id != "" && s.removed[id]), s.generation
	s.mu.Unlock()
	if sure {
		return l, ok, nil
	}
	if err := s.await(ctx, after); err != nil {
		return client.Link{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok = s.findLocked(match, id)
	return l, ok, nil
}

func (s *Snapshot) findLocked(match func(client.Link) bool, id string) (client.Link, bool) {
	if id != "" {
		l, ok := s.links[id]
		return l, ok
	}
	for _, id := range s.order {
		if l, ok := s.links[id]; ok && match(l) {
			return l, true
		}
	}
	return client.Link{}, false
}

// findUnshared looks for a link in a listing, and in a second one if the
// first lacks it.
func (s *Snapshot) findUnshared(ctx context.Context, match func(client.Link) bool) (client.Link, bool, error) {
	for range 2 {
		links, err := s.list(ctx)
		if err != nil {
			return client.Link{}, false, err
		}
		if i := slices.IndexFunc(links, match); i >= 0 {
			return links[i], true, nil
		}
	}
	return client.Link{}, false, nil
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
		s.removed[w.link.ID] = true
	} else {
		delete(s.removed, w.link.ID)
	}
	if s.inflight != nil {
		s.journal = append(s.journal, w)
	}
	s.applyLocked(w)
}

func (s *Snapshot) applyLocked(w write) {
	if s.links == nil {
		return // nothing listed yet: the first listing will include it
	}
	if w.removed {
		if _, ok := s.links[w.link.ID]; ok {
			delete(s.links, w.link.ID)
			// Drop it from order too, or a link put again with the same ID
			// would be listed twice.
			s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == w.link.ID })
		}
		return
	}
	if _, ok := s.links[w.link.ID]; !ok {
		s.order = append(s.order, w.link.ID)
	}
	s.links[w.link.ID] = w.link
}

// currentLocked returns a copy of the current listing, in order.
func (s *Snapshot) currentLocked() []client.Link {
	out := make([]client.Link, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, s.links[id])
	}
	return out
}

// ensureFresh lists unless a fresh listing exists, sharing one request
// among concurrent callers.
func (s *Snapshot) ensureFresh(ctx context.Context) error {
	s.mu.Lock()
	fresh := s.links != nil && s.now().Sub(s.fetchedAt) < s.lifetime
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
			call = &listing{done: make(chan struct{})}
			s.inflight = call
			s.mu.Unlock()
			s.run(ctx, call)
			return call.err
		}
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
// replayed on top. Its age counts from when it started.
func (s *Snapshot) run(ctx context.Context, call *listing) {
	started := s.now()
	links, err := s.list(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	journal := s.journal
	s.inflight, s.journal, call.err = nil, nil, err
	if err == nil {
		s.links, s.order = index(links)
		s.fetchedAt = started
		s.generation++
		for _, w := range journal {
			s.applyLocked(w)
		}
	}
	close(call.done)
}

// index keys links by ID. A link listed twice (offset paging under
// concurrent creates) keeps its first place and its last version.
func index(links []client.Link) (map[string]client.Link, []string) {
	byID := make(map[string]client.Link, len(links))
	order := make([]string, 0, len(links))
	for _, l := range links {
		if _, dup := byID[l.ID]; !dup {
			order = append(order, l.ID)
		}
		byID[l.ID] = l
	}
	return byID, order
}

// union returns each link of either listing once, in first's order then
// second's, as second has it when both do.
func union(first, second []client.Link) []client.Link {
	byID, order := index(slices.Concat(first, second))
	out := make([]client.Link, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return out
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
