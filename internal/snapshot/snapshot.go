// Package snapshot keeps one shared copy of the account's links for a
// provider instance. The service has no get-by-id: without it every Read
// lists every link, so refreshing N links costs N list requests of N links
// each. With it, the first Read lists (following every page), concurrent
// Reads wait for that same request, later Reads are served from the copy
// while it is fresh, and the provider's own writes update the copy, so a Read
// after a write always sees the write.
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
	lifetime time.Duration // 0: every Get lists (the snapshot is off)
	now      func() time.Time

	mu        sync.Mutex
	links     map[string]client.Link
	order     []string // IDs in the service's order
	fetchedAt time.Time
	inflight  *listing
	// journal holds the writes made while a listing is in flight: the
	// listing may predate them, so they are replayed onto it.
	journal []write
}

// write is one local change: a link put, or removed when removed is true.
type write struct {
	link    client.Link
	removed bool
}

// listing is one list request that concurrent callers share.
type listing struct {
	done  chan struct{}
	links []client.Link
	err   error
}

// New returns a snapshot over list. lifetime 0 turns sharing off: every
// call lists.
func New(list ListFunc, lifetime time.Duration) *Snapshot {
	return &Snapshot{list: list, lifetime: lifetime, now: time.Now}
}

// Links returns every link, oldest first, from a fresh listing.
func (s *Snapshot) Links(ctx context.Context) ([]client.Link, error) {
	if s.lifetime <= 0 {
		return s.list(ctx)
	}
	if err := s.ensureFresh(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]client.Link, 0, len(s.order))
	for _, id := range s.order {
		if l, ok := s.links[id]; ok {
			out = append(out, l)
		}
	}
	return out, nil
}

// Get returns one link; ok is false when the account has no such link.
func (s *Snapshot) Get(ctx context.Context, id string) (client.Link, bool, error) {
	if s.lifetime <= 0 {
		links, err := s.list(ctx)
		if err != nil {
			return client.Link{}, false, err
		}
		for _, l := range links {
			if l.ID == id {
				return l, true, nil
			}
		}
		return client.Link{}, false, nil
	}
	if err := s.ensureFresh(ctx); err != nil {
		return client.Link{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[id]
	return l, ok, nil
}

// Put records a link this provider created or changed.
func (s *Snapshot) Put(l client.Link) { s.record(write{link: l}) }

// Remove records a link this provider deleted.
func (s *Snapshot) Remove(id string) { s.record(write{link: client.Link{ID: id}, removed: true}) }

func (s *Snapshot) record(w write) {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// ensureFresh lists unless a fresh listing exists, sharing one request
// among concurrent callers.
func (s *Snapshot) ensureFresh(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.links != nil && s.now().Sub(s.fetchedAt) < s.lifetime {
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
	call.links, call.err = s.list(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	journal := s.journal
	s.inflight, s.journal = nil, nil
	if call.err == nil {
		s.install(call.links, started)
		for _, w := range journal {
			s.applyLocked(w)
		}
	}
	close(call.done)
}

func (s *Snapshot) install(links []client.Link, fetchedAt time.Time) {
	s.links = make(map[string]client.Link, len(links))
	s.order = make([]string, 0, len(links))
	for _, l := range links {
		if _, dup := s.links[l.ID]; !dup {
			s.order = append(s.order, l.ID)
		}
		s.links[l.ID] = l
	}
	s.fetchedAt = fetchedAt
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
