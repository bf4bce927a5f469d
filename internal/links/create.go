package links

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
)

// clockSkewAllowance is how far the service's clock may be from ours
// where nothing narrower is known: it widens each "created since" that
// compares our clock with a createdAt, the start of a failed create's
// attempt (until serviceClock has placed the service's clock) and the
// edge of adoption_window (leftoverSince).
const clockSkewAllowance = 2 * time.Minute

// DefaultAdoptionWindow is how recent a link must be for a create to take
// it over as a leftover of an interrupted run (provider setting
// adoption_window). A pipeline that was cancelled or lost is normally run
// again within hours; a link older than a day that holds our slug is far
// more likely another configuration's, so it is left alone.
const DefaultAdoptionWindow = 24 * time.Hour

// Origin says where the link a create returns came from.
type Origin int

const (
	// Made means the create's own POST made the link.
	Made Origin = iota
	// Retaken means an earlier attempt of this create failed ambiguously but had
	// made the link, found in the account's list.
	Retaken
	// Leftover means a run that was interrupted or killed made the link and
	// never recorded it; this create met its slug (409) and took it over.
	Leftover
)

// Creator creates links so that none is ever created twice. A POST that
// failed ambiguously (a time-out, a connection closed after the body was
// sent, a 5xx) may have created the link, so it is never re-sent blindly:
// first the account's links are searched for the one that attempt may have
// made, which is adopted if found. A 409 on a slug is the same question
// asked across processes: the link may be the leftover of a run that was
// killed after its POST.
//
// One Creator serves a whole provider process, so that the links held are
// shared by all its resources. It is safe for concurrent use.
type Creator struct {
	client *client.Client
	// listings shares the listings that settle 409s (Snapshot.Since).
	listings   *snapshot.Snapshot
	maxRetries int
	retryWait  time.Duration
	// window is how recent a leftover must be to be adopted; 0 adopts none.
	window time.Duration
	now    func() time.Time

	mu sync.Mutex
	// held are the IDs this provider process created, adopted or read: they
	// belong to resources already, so they are never adopted again.
	held map[string]bool
	// planned are the links a plan of this process found a create would
	// take over, with that create: a resource of the same plan that turns
	// out to manage one (Hold) must say so, since the apply, another
	// process, cannot know it.
	planned map[string]client.CreateLinkInput
	// objects are the links refreshes of this process read, with the
	// object of the state each was read for (see Hold).
	objects namers
	// takenOver are the links a create of this process adopted (found
	// after a lost answer, or took over on its slug): another object of
	// the same apply that still names one (the old object of a replacement
	// created before it is destroyed, a resource renamed without a moved
	// block) must not delete it.
	takenOver map[string]bool
	// twins are, by the link a create adopted, the links other attempts
	// of that create made as well (see lookForTwins), for its warning.
	twins map[string][]client.Link
	// lost are, by the link each took over, the creates without a slug
	// whose answer was lost and whose search found that link: if an
	// object of the apply turns out to hold it, the search took it by
	// mistake (MadeInstead).
	lost map[string]lostCreate
	// deleting are the links a delete of this process has sent: a 409
	// they still answer is no leftover to take over. deletes are those
	// deletes by the identity (domain and slug) of their link, each closed
	// when its DELETE has returned: a create of that slug that meets a 409
	// waits for it and sends its POST again.
	deleting map[string]bool
	deletes  map[string]chan struct{}
	// deletedOn are the domains of the links this process deleted, by link.
	deletedOn map[string]string
	// inflight counts the creates under way per identity, so a search waits
	// until every create that could have made the same link has answered.
	inflight map[string]int
	settled  *sync.Cond
	// leftovers indexes the latest listing for ProbableLeftovers.
	leftovers *leftoverIndex
	// clock places the service's clock against ours.
	clock serviceClock
}

// NewCreator returns a Creator that sends a create again at most
// maxRetries times after an ambiguous failure that left no link, waiting
// retryWait before the first resend and twice as long before each next,
// and takes over leftovers created within window (0: none).
func NewCreator(c *client.Client, listings *snapshot.Snapshot, maxRetries int, retryWait, window time.Duration) *Creator {
	lc := &Creator{client: c, listings: listings, maxRetries: maxRetries, retryWait: retryWait, window: window, now: time.Now,
		held: map[string]bool{}, planned: map[string]client.CreateLinkInput{}, objects: namers{}, takenOver: map[string]bool{}, twins: map[string][]client.Link{}, lost: map[string]lostCreate{}, deleting: map[string]bool{}, deletedOn: map[string]string{}, deletes: map[string]chan struct{}{}, inflight: map[string]int{}}
	lc.settled = sync.NewCond(&lc.mu)
	return lc
}

// AdoptionWindow is how recent a leftover must be to be taken over.
func (lc *Creator) AdoptionWindow() time.Duration { return lc.window }

// Hold records a link that a refresh read for a resource of this process,
// so that no create takes it over. object tells the state's objects apart
// ("": not known, as for one imported or made by an older version of the
// provider, until a refresh marks it). twice: it was read for another
// object too, so two objects of the state name it, and destroying either
// deletes it. Only two marked objects are told apart: a CLI may import a
// link twice in a run, and OpenTofu reads the object that a removed block
// (or destroy = false) drops from the state beside the one an import
// block brings in, so a read without a mark may be the same link moving
// (Plans.Planned tells an import into a second resource in its own run).
func (lc *Creator) Hold(id, object string) (twice bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.held[id] = true
	return lc.objects.add(id, object)
}

// WantedBy is the create of this plan found to take link id over as a
// leftover (ok): a resource that keeps the link must fail the plan, or
// the apply, another process, takes it, and two resources manage it.
func (lc *Creator) WantedBy(id string) (wanted client.CreateLinkInput, ok bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	wanted, ok = lc.planned[id]
	return wanted, ok
}

// BeginDelete says whether a delete of link id, which holds slug on
// domainID, may go: not when a create of this process took it over
// (handedOn), which now names it. Otherwise the link is deleting from now
// on, no create takes it over, and end must be called once the DELETE has
// returned.
func (lc *Creator) BeginDelete(id, domainID, slug string) (handedOn bool, end func()) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.takenOver[id] {
		return true, func() {}
	}
	lc.deleting[id] = true
	if slug == "" {
		return false, func() {}
	}
	done := make(chan struct{})
	lc.deletes[identity(client.CreateLinkInput{DomainID: domainID, Slug: slug})] = done
	return false, sync.OnceFunc(func() { close(done) })
}

// Deleted records that the service carried out this process's delete of
// link id, on domainID.
func (lc *Creator) Deleted(id, domainID string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.deletedOn[id] = domainID
}

// DeletesOn are the links on domainID this process deleted, sorted: the
// old links of replacements made without create_before_destroy, among
// others. The account holds the domain, whatever a later listing shows.
func (lc *Creator) DeletesOn(domainID string) []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var ids []string
	for id, domain := range lc.deletedOn {
		if client.SameID(domain, domainID) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// awaitDelete waits for a delete of this process of a link with key's
// slug, if one was sent; ok says one was (and has returned).
func (lc *Creator) awaitDelete(ctx context.Context, key string) (ok bool) {
	lc.mu.Lock()
	done, ok := lc.deletes[key]
	lc.mu.Unlock()
	if !ok {
		return false
	}
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// identity is what two creates must share to be able to make the same link.
func identity(in client.CreateLinkInput) string {
	if in.Slug != "" {
		return client.ComparableID(in.DomainID) + "/" + in.Slug
	}
	return client.ComparableID(in.DomainID) + " " + in.Destination
}

// Create makes the link, or adopts one an ambiguous attempt or an
// interrupted run made; from says which. utm is what the resource's next
// step sets (nil: none), which a leftover may already have. A 409 it could
// not resolve is a *SlugTakenError.
func (lc *Creator) Create(ctx context.Context, in client.CreateLinkInput, utm *client.UTM) (link *client.Link, from Origin, err error) {
	key := identity(in)
	ctx, lastSent := client.TrackSent(ctx)
	resent := false // after this process's delete of the slug's holder
	// missed is when the first attempt that failed ambiguously and whose
	// search found no link began: zero while there is none.
	var missed time.Time
	for attempt := 1; ; attempt++ {
		started := lc.now()
		lc.begin(key)
		link, err := lc.client.CreateLink(ctx, in)
		answered := time.Now()
		if sent := lastSent(); sent.After(started) {
			started = sent // the attempt began when it left, not when it began to wait for the rate limit
		}
		lc.end(key, link, started)
		switch {
		case err == nil && !missed.IsZero() && in.Slug == "":
			return lc.settleResent(ctx, key, in, utm, missed, link)
		case err == nil:
			return link, Made, nil
		case in.Slug != "" && errors.Is(err, client.ErrConflict) && !resent && lc.awaitDelete(ctx, key):
			// The holder is a link this apply deletes (a resource renamed
			// without a moved block): its slug is free once that is done.
			resent, attempt = true, attempt-1
			continue
		case in.Slug != "" && errors.Is(err, client.ErrConflict):
			link, from, err := lc.takeOverSlug(ctx, key, in, utm, attempt, err)
			var taken *SlugTakenError
			if errors.As(err, &taken) && !resent && lc.awaitDelete(ctx, key) {
				// The delete of the holder was sent while the 409 was
				// being settled: Terraform runs a rename's deletes and
				// creates in any order.
				resent, attempt = true, attempt-1
				continue
			}
			return link, from, err
		case !errors.Is(err, client.ErrAmbiguous) || ctx.Err() != nil:
			return nil, Made, err
		}
		tflog.Warn(ctx, "create failed ambiguously; looking for a link the attempt may have made", map[string]any{"attempt": attempt, "error": err.Error()})
		found, searchErr := lc.adopt(ctx, key, in, utm, started)
		switch {
		case searchErr != nil:
			return nil, Made, fmt.Errorf("%w; then listing the links to check whether it was created failed: %w", err, searchErr)
		case found != nil:
			tflog.Info(ctx, "adopted the link an ambiguous create made", map[string]any{"id": found.ID})
			first := cmp.Or(missed, started)
			if missed.IsZero() && in.Slug == "" && lc.mayPrecede(found, started) {
				found = lc.preferNewer(ctx, lostCreate{key: key, in: in, utm: utm, since: first}, found)
			}
			lc.searched(found, lostCreate{key: key, in: in, utm: utm, since: first})
			if !missed.IsZero() && in.Slug == "" {
				lc.lookForTwins(ctx, key, in, utm, missed, started, attempt-1, found)
			}
			return found, Retaken, nil
		case attempt > lc.maxRetries:
			return nil, Made, fmt.Errorf("%w (no link was found on the account after it; gave up after %d attempts)", err, attempt)
		}
		if missed.IsZero() {
			missed = started
		}
		wait := max(lc.retryWait<<min(attempt-1, 5), time.Until(answered.Add(askedToWait(err))))
		if deadline, ok := ctx.Deadline(); ok && time.Now().Add(wait).After(deadline) {
			return nil, Made, fmt.Errorf("%w (no link was found on the account after it; the service asked to wait %s before the create is sent again, past the create's timeout)", err, askedToWait(err))
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, Made, err
		}
	}
}

// settleResent looks once more, after the create sent again has made
// the link, for one an earlier attempt (the first begun at since) made
// all the same. A gateway may answer 5xx at once while the service goes on
// to make the link, for longer than any write of the run had taken when
// the search before the resend waited: the resend's own answer has taken
// that long since. Without a slug no 409 stops the second link, so one
// found is adopted and the link just made, which nothing else knows yet,
// is deleted. When that delete fails, the link made is kept and the one
// found left for the next plan to name as a probable leftover.
func (lc *Creator) settleResent(ctx context.Context, key string, in client.CreateLinkInput, utm *client.UTM, since time.Time, made *client.Link) (*client.Link, Origin, error) {
	found, err := lc.adopt(ctx, key, in, utm, since)
	if err != nil || found == nil {
		if err != nil {
			tflog.Warn(ctx, "could not look again for a link an earlier attempt of the create made", map[string]any{"error": err.Error()})
		}
		return made, Made, nil
	}
	if err := lc.client.DeleteLink(ctx, made.ID); err != nil && !client.IsNotFound(err) {
		tflog.Warn(ctx, "an earlier attempt of the create made a link after all; could not delete the one made since", map[string]any{"found": found.ID, "made": made.ID, "error": err.Error()})
		lc.mu.Lock()
		delete(lc.held, found.ID)
		delete(lc.takenOver, found.ID)
		lc.mu.Unlock()
		return made, Made, nil
	}
	lc.listings.Remove(made.ID)
	tflog.Info(ctx, "an earlier attempt of the create made a link after all; deleted the one made since", map[string]any{"found": found.ID, "deleted": made.ID})
	lc.searched(found, lostCreate{key: key, in: in, utm: utm, since: since})
	return found, Retaken, nil
}

// lookForTwins looks, once the link found after attempts that all failed
// ambiguously (the first begun at first, the last at last) is adopted, for
// the links the others may have made: without a slug nothing stops a
// second, and the service may make it after the search that found the
// first. It waits, from the last attempt, as long as the service took at
// most to make the one found (the time from the first attempt until it
// was found), then searches as the first search did, at most others
// times. A link found is claimed, and Twins names it for the warning: it
// is left on the account, since nothing but this search tells it from
// another configuration's identical link made at that moment.
func (lc *Creator) lookForTwins(ctx context.Context, key string, in client.CreateLinkInput, utm *client.UTM, first, last time.Time, others int, found *client.Link) {
	took := lc.now().Sub(first)
	if err := sleep(ctx, last.Add(took).Sub(lc.now())); err != nil {
		return
	}
	for range others {
		twin, err := lc.adopt(ctx, key, in, utm, first)
		if err != nil || twin == nil {
			return
		}
		tflog.Warn(ctx, "another attempt of the create made a link too", map[string]any{"adopted": found.ID, "twin": twin.ID})
		lc.mu.Lock()
		lc.twins[found.ID] = append(lc.twins[found.ID], *twin)
		lc.mu.Unlock()
	}
}

// Twins are the links other attempts of the create that adopted link id
// made as well, left on the account (see lookForTwins).
func (lc *Creator) Twins(id string) []client.Link {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.twins[id]
}

// lostCreate is a create whose answer was lost, what its search looked
// for: since is when its first attempt began, taken when the link its
// search took was created (the service's clock).
type lostCreate struct {
	key   string
	in    client.CreateLinkInput
	utm   *client.UTM
	since time.Time
	taken time.Time
}

// searched records that the search of create c took link taken over. Only
// a create without a slug can take a link that is not its own: with one,
// the link holding the slug is the one the create would make.
func (lc *Creator) searched(taken *client.Link, c lostCreate) {
	if c.in.Slug != "" {
		return
	}
	c.taken = taken.CreatedAt
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.lost[taken.ID] = c
}

// looksForAMistakenLink is how many times lookForNewer looks for the link
// a create made after its search took another.
const looksForAMistakenLink = 3

// MadeInstead is for an object of this apply that names link id and is
// destroyed while BeginDelete says a create took id over (handedOn). If
// that create had no slug and took id over after its answer was lost,
// mistaken is true: id was this object's link, not the one the create
// made, which the service had not made yet when the search listed the
// links (the old link of a -replace or taint with create_before_destroy,
// or of a resource renamed without a moved block). It then looks again
// for the link the create made and claims it: made, nil when none showed
// in time. That link is on the account in no state. It is newer than id,
// the newest when the search listed: an older one is another object's,
// which this process never read (an identical instance of the same count
// or for_each), not one to name for deleting.
func (lc *Creator) MadeInstead(ctx context.Context, id string) (made *client.Link, mistaken bool) {
	lc.mu.Lock()
	lost, mistaken := lc.lost[id]
	delete(lc.lost, id)
	lc.mu.Unlock()
	if !mistaken {
		return nil, false
	}
	return lc.lookForMade(ctx, id, lost), true
}

// MadeBeside is for an object of this apply that names a link to
// destination on domainID and is destroyed, not handed on. If a create
// without a slug of an identical link took another link, taken, after its
// answer was lost, that may have been the newest of several identical
// objects' links, none this object's (the -replace of one instance of a
// count or for_each): taken is then named by two objects, and the link
// the create made was not there yet. It looks, as MadeInstead does, for
// a link newer than taken that the create made, and claims it: made, nil
// when none showed, as when taken was the create's own.
func (lc *Creator) MadeBeside(ctx context.Context, domainID, destination string) (made *client.Link, taken string) {
	key := identity(client.CreateLinkInput{DomainID: domainID, Destination: destination})
	lc.mu.Lock()
	var lost lostCreate
	for id, c := range lc.lost {
		if c.key == key {
			taken, lost = id, c
			delete(lc.lost, id)
			break
		}
	}
	lc.mu.Unlock()
	if taken == "" {
		return nil, ""
	}
	return lc.lookForMade(ctx, taken, lost), taken
}

// lookForMade looks for the link create c made, newer than taken, the
// link its search took: at once, since that search listed before the
// destroy that calls this began, then after the create's first wait
// before a resend and twice that.
func (lc *Creator) lookForMade(ctx context.Context, taken string, c lostCreate) *client.Link {
	found, err := lc.lookForNewer(ctx, c, c.taken, lc.retryWait)
	if err != nil {
		tflog.Warn(ctx, "could not look for the link a create made after it took another object's", map[string]any{"taken": taken, "error": err.Error()})
	}
	return found
}

// lookForNewer looks looksForAMistakenLink times for a link create c could
// have made, created after after (the service's clock), waiting wait
// after the first look and twice as long after each next. It returns the
// first found, claimed; none when ctx ends a wait.
func (lc *Creator) lookForNewer(ctx context.Context, c lostCreate, after time.Time, wait time.Duration) (*client.Link, error) {
	for look := range looksForAMistakenLink {
		found, err := lc.adoptCreatedAfter(ctx, c.key, c.in, c.utm, c.since, after)
		if err != nil || found != nil || look == looksForAMistakenLink-1 || sleep(ctx, wait<<look) != nil {
			return found, err
		}
	}
	return nil, nil
}

// mayPrecede says link l, found for an attempt begun at started, may have
// been made before it, by the service's clock as far as this run knows it.
func (lc *Creator) mayPrecede(l *client.Link, started time.Time) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.clock.mayPrecede(l.CreatedAt, started)
}

// preferNewer looks again, as MadeInstead does, for a link newer than
// found that create c could have made, and takes it, letting found go.
// Without a slug, found may be an identical link an object of the state
// holds that this process never read (an instance added beside identical
// ones by count or for_each): the service made the create's link only
// after the search listed, and no destroy would tell it (MadeInstead).
//
// It looks after the create's first wait before a resend (the search has
// just listed), then after twice and four times that.
func (lc *Creator) preferNewer(ctx context.Context, c lostCreate, found *client.Link) *client.Link {
	if sleep(ctx, lc.retryWait) != nil {
		return found
	}
	newer, err := lc.lookForNewer(ctx, c, found.CreatedAt, 2*lc.retryWait)
	if err != nil || newer == nil {
		return found
	}
	tflog.Info(ctx, "a newer link the create could have made showed after the search", map[string]any{"found": found.ID, "newer": newer.ID})
	lc.release(found.ID)
	return newer
}

// release lets link id, which a search claimed, go to whoever holds it.
func (lc *Creator) release(id string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	delete(lc.held, id)
	delete(lc.takenOver, id)
}

// askedToWait is what the answer in err asked to wait before the request is
// sent again (a 503's Retry-After), 0 if nothing.
func askedToWait(err error) time.Duration {
	var answer *client.APIError
	if errors.As(err, &answer) {
		return answer.RetryAfter
	}
	return 0
}

// takeOverSlug answers a 409 on in's slug. The link holding the slug is
// adopted when it is exactly what in asks for, no resource of this run
// holds it and it is recent: an earlier attempt of this create made it
// (attempt > 1), or a run that was interrupted after its POST. Otherwise
// the 409 stands, as a *SlugTakenError naming the link and the import ID.
func (lc *Creator) takeOverSlug(ctx context.Context, key string, in client.CreateLinkInput, utm *client.UTM, attempt int, conflict error) (*client.Link, Origin, error) {
	mark := lc.listings.Mark() // the 409 is answered: its holder is in any listing started after
	lc.waitSettled(ctx, key)
	// A holder missing from a listing may have been skipped by it: looked for until sure (FindSince).
	holding, found, err := lc.listings.FindSince(ctx, mark, func(listed client.Listing) (client.Link, bool) {
		return listed.BySlug(in.DomainID, in.Slug)
	})
	switch {
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, client.ErrNotSent)) && attempt > 1:
		// Stopped before the 409 was settled: what matters is the earlier
		// attempt, whose link may be the holder, not a slug taken.
		return nil, Made, fmt.Errorf("%w: an earlier attempt's answer was lost, and the run was stopped before the link holding the slug could be read: %w", client.ErrAmbiguous, err)
	case err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, client.ErrNotSent)):
		return nil, Made, fmt.Errorf("the slug was taken (409), and the run was stopped before the link holding it could be read: %w", err)
	case err != nil:
		return nil, Made, fmt.Errorf("%w; then listing the links to find the link that holds the slug failed: %w", conflict, err)
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var holder *client.Link
	var problem string
	if found {
		holder, problem = &holding, lc.leftoverProblemLocked(&holding, in, utm)
	}
	if holder == nil || problem != "" {
		alike := holder != nil && problem != BeingDeleted && problem != ManagedHere && declaredAlike(holder, in, utm)
		return nil, Made, &SlugTakenError{DomainID: in.DomainID, Slug: in.Slug, Holder: holder, Reason: problem, Alike: alike, cause: conflict}
	}
	lc.held[holder.ID] = true
	lc.takenOver[holder.ID] = true
	if attempt > 1 {
		return holder, Retaken, nil
	}
	return holder, Leftover, nil
}

// SlugHolder finds the link among listed that holds in's slug, and says
// why a create of in, whose resource sets utm, could not take it over (""
// when it could). A plan asks it what an apply would do; a holder the
// apply would take over is noted, for a resource of the same plan found
// to manage it later (Hold).
func (lc *Creator) SlugHolder(listed client.Listing, in client.CreateLinkInput, utm *client.UTM) (*client.Link, string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	holder, problem := lc.slugHolderLocked(listed, in, utm)
	if holder != nil && problem == "" {
		lc.planned[holder.ID] = in
	}
	return holder, problem
}

func (lc *Creator) slugHolderLocked(listed client.Listing, in client.CreateLinkInput, utm *client.UTM) (*client.Link, string) {
	if l, ok := listed.BySlug(in.DomainID, in.Slug); ok {
		return &l, lc.leftoverProblemLocked(&l, in, utm)
	}
	return nil, ""
}

// leftoverProblemLocked says why l cannot be taken over by a create of in
// whose resource sets utm, or "" when it can.
func (lc *Creator) leftoverProblemLocked(l *client.Link, in client.CreateLinkInput, utm *client.UTM) string {
	switch {
	case lc.deleting[l.ID]:
		return BeingDeleted
	case lc.held[l.ID]:
		return ManagedHere
	case !SameDestination(in.Destination, l.Destination, l.UTM):
		return fmt.Sprintf("its destination %q differs from this resource's", l.Destination)
	case !sameExpiry(l.ExpiresAt, in.ExpiresAt):
		return "its expiry differs from this resource's"
	case l.CreatedAt.IsZero():
		return "the service did not say when it was created, so it cannot be told apart from another configuration's link"
	case lc.window <= 0:
		return "adoption_window is 0, so links left by interrupted runs are never taken over"
	case l.CreatedAt.Before(lc.leftoverSince()):
		return fmt.Sprintf("it was created at %s, longer ago than adoption_window (%s), so it is more likely another configuration's than the leftover of an interrupted run", l.CreatedAt.Format(time.RFC3339), FormatDuration(lc.window))
	case !leftoverUTM(l.UTM, utm): // last: a plan that does not know utm yet asks for the others
		return OtherUTM
	}
	return ""
}

// ProbableLeftovers returns the links among listed that could be the
// leftover of an interrupted run's create of in, whose UTM parameters are
// utm (nil: none), when in has no slug, so no 409 can reveal them: same
// domain, destination and expiry, created within the adoption window, UTM
// parameters this create could have left (leftoverUTM) and held by no
// resource of this run. They are to be named in a warning rather than
// adopted: without a slug nothing tells them apart from another
// configuration's identical link.
func (lc *Creator) ProbableLeftovers(ctx context.Context, in client.CreateLinkInput, utm *client.UTM, listed client.Listing) []client.Link {
	if lc.window <= 0 {
		return nil // adoption_window 0: no link is recent enough
	}
	lc.waitSettled(ctx, identity(in))
	since := lc.leftoverSince()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var found []client.Link
	for _, l := range lc.leftoverCandidatesLocked(listed, in, since) {
		if !lc.held[l.ID] && !l.CreatedAt.IsZero() && madeBy(&l, in, utm, since) {
			found = append(found, l)
		}
	}
	return found
}

// leftoverSince is the earliest createdAt of a link that a create may
// take over, or a plan name, as the leftover of an interrupted run: the
// adoption window back from now, on the service's clock.
func (lc *Creator) leftoverSince() time.Time {
	return lc.now().Add(-lc.window - clockSkewAllowance)
}

// ManagedHere is why a link held by a resource of this run is not taken
// over: the slug is declared twice, or held by a link being replaced.
const ManagedHere = "another resource of this configuration already manages it"

// BeingDeleted is why a link this run is deleting is not taken over: a
// resource renamed without a moved block, whose delete did not free the
// slug by the time the create was sent again.
const BeingDeleted = "this apply sent its delete (a resource renamed without a moved block?), and the slug was still taken after it"

// OtherUTM is the reason a slug's holder is not taken over when its UTM
// parameters are neither none nor the resource's own: no create of the
// resource could have left them.
const OtherUTM = "its UTM parameters differ from this resource's"

// SlugTakenError is a 409 on a slug that the create could not resolve.
type SlugTakenError struct {
	DomainID, Slug string
	// Holder is the link that holds the slug; nil if the list lacked it.
	Holder *client.Link
	// Reason says why Holder was not taken over.
	Reason string
	// Alike says Holder is what the create declares (destination, expiry,
	// UTM parameters a create of it could have left): only its age, a
	// missing createdAt or adoption_window kept it from being taken over.
	Alike bool
	cause error
}

func (e *SlugTakenError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("the slug %q is taken on domain %s, but no link with it is in the account's list", e.Slug, e.DomainID)
	}
	return fmt.Sprintf("the slug %q on domain %s is held by link %s (%s): %s", e.Slug, e.DomainID, e.Holder.ID, e.Holder.ShortURL, e.Reason)
}

func (e *SlugTakenError) Unwrap() error { return e.cause }

// ManagedHere reports whether the holder belongs to a resource of this run.
func (e *SlugTakenError) ManagedHere() bool { return e.Holder != nil && e.Reason == ManagedHere }

// ImportID is the ID that imports the link holding the slug.
func (e *SlugTakenError) ImportID() string { return SlugImportID(e.DomainID, e.Slug) }

// SlugImportID is the import ID that names the link holding slug on
// domainID: <domain_id>/<slug>.
func SlugImportID(domainID, slug string) string { return domainID + "/" + slug }

func (lc *Creator) begin(key string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.inflight[key]++
}

func (lc *Creator) end(key string, created *client.Link, started time.Time) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if created != nil {
		lc.held[created.ID] = true
		lc.clock.observe(started, lc.now(), created.CreatedAt)
	}
	lc.inflight[key]--
	if lc.inflight[key] == 0 {
		delete(lc.inflight, key)
		lc.settled.Broadcast()
	}
}

// adopt lists the links (in a listing started after the wait, which
// concurrent searches share: the link may be brand new) and claims the
// newest that the failed attempt, begun at started, could have made for a
// resource that sets utm (madeBy), if any.
func (lc *Creator) adopt(ctx context.Context, key string, in client.CreateLinkInput, utm *client.UTM, started time.Time) (*client.Link, error) {
	return lc.adoptCreatedAfter(ctx, key, in, utm, started, time.Time{})
}

// adoptCreatedAfter is adopt among the links created after after (on the
// service's clock; zero: any).
func (lc *Creator) adoptCreatedAfter(ctx context.Context, key string, in client.CreateLinkInput, utm *client.UTM, started, after time.Time) (*client.Link, error) {
	// The service may still be making the link when a gateway in front of
	// it gives up and answers 5xx: from that answer, give it as long as a
	// create has taken to be answered, and the wait before a retry besides.
	if err := sleep(ctx, lc.client.SlowestWriteAnswer()+lc.retryWait); err != nil {
		return nil, err
	}
	lc.waitSettled(ctx, key)
	// A miss sends the create again, so it must be sure: a listing whose
	// pages another client's deletes shifted can skip the link (FindSince).
	link, found, err := lc.listings.FindSince(ctx, lc.listings.Mark(), func(listed client.Listing) (client.Link, bool) {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		since := lc.clock.since(started)
		// The newest: an older one may be a link an object of this apply
		// already holds, which this process never read (the old link of a
		// -replace with create_before_destroy). One this process deletes is
		// an object's for sure (a resource renamed without a moved block).
		var newest *client.Link
		for l := range listed.All() {
			if !lc.held[l.ID] && !lc.deleting[l.ID] && madeBy(&l, in, utm, since) && (after.IsZero() || l.CreatedAt.After(after)) && (newest == nil || l.CreatedAt.After(newest.CreatedAt)) {
				newest = &l
			}
		}
		if newest == nil {
			return client.Link{}, false
		}
		lc.held[newest.ID], lc.takenOver[newest.ID] = true, true // claimed at once: another search must not take it
		return *newest, true
	})
	if !found {
		return nil, err
	}
	return &link, nil
}

// waitSettled waits until no other create of the same identity is under
// way, so that a link another resource is about to learn it created is
// never mistaken for ours.
func (lc *Creator) waitSettled(ctx context.Context, key string) {
	stop := context.AfterFunc(ctx, func() {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		lc.settled.Broadcast()
	})
	defer stop()
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for lc.inflight[key] > 0 && ctx.Err() == nil {
		lc.settled.Wait()
	}
}

// madeBy reports whether l could be the link a create of in, for a
// resource that sets utm, made: the same domain (and slug, if one was asked
// for), destination and expiry, UTM parameters it could have left
// (leftoverUTM), created since the attempt began (since, on the service's
// clock). A slug alone is not enough: another configuration's link may
// hold it, and a 409 to the create sent again then says so.
func madeBy(l *client.Link, in client.CreateLinkInput, utm *client.UTM, since time.Time) bool {
	if in.Slug != "" && !client.HoldsSlug(l, in.DomainID, in.Slug) {
		return false
	}
	if !client.SameID(l.DomainID, in.DomainID) || !declaredAlike(l, in, utm) {
		return false
	}
	return l.CreatedAt.IsZero() || !l.CreatedAt.Before(since)
}

// leftoverUTM is whether a link with the UTM parameters listed can be left
// by a create whose resource sets utm: the create itself sets none (the
// link has none yet), and the step after it sets the resource's. A link
// with other parameters belongs to another resource, such as a second link
// to the same landing page for another campaign.
func leftoverUTM(listed, utm *client.UTM) bool {
	return listed == nil || *listed == (client.UTM{}) || utm != nil && *listed == *utm
}

// declaredAlike says l is what a create of in, whose resource sets utm,
// could have made.
func declaredAlike(l *client.Link, in client.CreateLinkInput, utm *client.UTM) bool {
	return SameDestination(in.Destination, l.Destination, l.UTM) && sameExpiry(l.ExpiresAt, in.ExpiresAt) && leftoverUTM(l.UTM, utm)
}

// sameExpiry compares the expiry asked for with the one a listed link
// carries, at the precision the service keeps (it may drop fractions).
func sameExpiry(listed, asked *time.Time) bool {
	if listed == nil || asked == nil {
		return listed == nil && asked == nil
	}
	return SameInstant(*asked, *listed)
}

// FormatDuration spells a duration such as adoption_window for people:
// whole hours as "24h" rather than "24h0m0s".
func FormatDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%dh", d/time.Hour)
	}
	return d.String()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
