package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/planmodify"
)

// clockSkewAllowance widens "created since the attempt began" when looking
// for a link a failed create may have made: the service's clock and ours
// may disagree.
const clockSkewAllowance = 2 * time.Minute

// linkCreator creates links so that none is ever created twice. A POST that
// failed ambiguously (a time-out, a connection closed after the body was
// sent, a 5xx) may have created the link, so it is never re-sent blindly:
// first the account's links are searched for the one that attempt may have
// made, which is adopted if found.
type linkCreator struct {
	client     *client.Client
	maxRetries int
	retryWait  time.Duration

	mu sync.Mutex
	// held are the IDs this provider process created, adopted or read: they
	// belong to resources already, so they are never adopted again.
	held map[string]bool
	// inflight counts the creates under way per identity, so a search waits
	// until every create that could have made the same link has answered.
	inflight map[string]int
	settled  *sync.Cond
}

func newLinkCreator(c *client.Client, maxRetries int, retryWait time.Duration) *linkCreator {
	lc := &linkCreator{client: c, maxRetries: maxRetries, retryWait: retryWait, held: map[string]bool{}, inflight: map[string]int{}}
	lc.settled = sync.NewCond(&lc.mu)
	return lc
}

// hold records a link that belongs to a resource of this process.
func (lc *linkCreator) hold(id string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.held[id] = true
}

// identity is what two creates must share to be able to make the same link.
func identity(in client.CreateLinkInput) string {
	if in.Slug != "" {
		return strings.ToLower(in.DomainID) + "/" + in.Slug
	}
	return strings.ToLower(in.DomainID) + " " + in.Destination
}

// create makes the link, adopting one an ambiguous attempt made. adopted
// reports that the link came from the search.
func (lc *linkCreator) create(ctx context.Context, in client.CreateLinkInput) (link *client.Link, adopted bool, err error) {
	key := identity(in)
	for attempt := 1; ; attempt++ {
		started := time.Now()
		lc.begin(key)
		link, err := lc.client.CreateLink(ctx, in)
		lc.end(key, link)
		if err == nil {
			return link, false, nil
		}
		retake := errors.Is(err, client.ErrAmbiguous) ||
			(attempt > 1 && in.Slug != "" && errors.Is(err, client.ErrConflict)) // our earlier attempt took the slug
		if !retake || ctx.Err() != nil {
			return nil, false, err
		}
		tflog.Warn(ctx, "create failed ambiguously; looking for a link the attempt may have made", map[string]any{"attempt": attempt, "error": err.Error()})
		found, searchErr := lc.adopt(ctx, key, in, started)
		switch {
		case searchErr != nil:
			return nil, false, fmt.Errorf("%w; then listing the links to check whether it was created failed: %w", err, searchErr)
		case found != nil:
			tflog.Info(ctx, "adopted the link an ambiguous create made", map[string]any{"id": found.ID})
			return found, true, nil
		case attempt > lc.maxRetries:
			return nil, false, fmt.Errorf("%w (no link was created; gave up after %d attempts)", err, attempt)
		}
		if err := sleep(ctx, lc.retryWait<<min(attempt-1, 5)); err != nil {
			return nil, false, err
		}
	}
}

func (lc *linkCreator) begin(key string) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.inflight[key]++
}

func (lc *linkCreator) end(key string, created *client.Link) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if created != nil {
		lc.held[created.ID] = true
	}
	lc.inflight[key]--
	if lc.inflight[key] == 0 {
		delete(lc.inflight, key)
		lc.settled.Broadcast()
	}
}

// adopt lists the links (bypassing the shared snapshot: the link may be
// brand new) and claims the one the failed attempt made, if any.
func (lc *linkCreator) adopt(ctx context.Context, key string, in client.CreateLinkInput, started time.Time) (*client.Link, error) {
	lc.waitSettled(ctx, key)
	links, err := lc.client.ListLinks(ctx)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for i := range links {
		l := &links[i]
		if !lc.held[l.ID] && madeBy(l, in, started.Add(-clockSkewAllowance)) {
			lc.held[l.ID] = true
			return l, nil
		}
	}
	return nil, nil
}

// waitSettled waits until no other create of the same identity is under
// way, so that a link another resource is about to learn it created is
// never mistaken for ours.
func (lc *linkCreator) waitSettled(ctx context.Context, key string) {
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

// madeBy reports whether l could be the link a create of in made: by domain
// and slug when a slug was asked for; otherwise by domain, destination and
// expiry, among links created since the attempt began.
func madeBy(l *client.Link, in client.CreateLinkInput, since time.Time) bool {
	if !strings.EqualFold(l.DomainID, in.DomainID) {
		return false
	}
	if in.Slug != "" {
		return l.Slug == in.Slug
	}
	if !sameDestination(in.Destination, l.Destination, l.UTM) || !sameExpiry(l.ExpiresAt, in.ExpiresAt) {
		return false
	}
	return l.CreatedAt.IsZero() || !l.CreatedAt.Before(since)
}

// sameExpiry compares the expiry asked for with the one a listed link
// carries, at the precision the service keeps (it may drop fractions).
func sameExpiry(listed, asked *time.Time) bool {
	if listed == nil || asked == nil {
		return listed == nil && asked == nil
	}
	return planmodify.SameTime(*asked, *listed)
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
