package links

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// creatorEnv is an emulator, a client and a creator, without Terraform.
type creatorEnv struct {
	srv     *emulator.Server
	fx      emulator.Fixture
	creator *Creator
	clock   *time.Time
}

func newCreatorEnv(t *testing.T) *creatorEnv {
	t.Helper()
	now := time.Now()
	env := &creatorEnv{clock: &now}
	var mu sync.Mutex
	svc := testsupport.Start(t, testsupport.Options{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return *env.clock
	}})
	env.srv, env.fx = svc.Server, svc.Fixture
	c, err := client.New(client.Config{BaseURL: svc.URL, APIKey: env.fx.APIKey, RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	env.creator = NewCreator(c, snapshot.New(c.ListLinks, snapshot.DefaultLifetime), 3, time.Millisecond, DefaultAdoptionWindow)
	return env
}

func (e *creatorEnv) input(dest, slug string) client.CreateLinkInput {
	return client.CreateLinkInput{Destination: dest, DomainID: e.fx.DomainID, Slug: slug}
}

// serviceTaking makes the service take delay over every create (its
// filter) and the creator wait retryWait before its first resend: the two
// durations that time the looks after a lost answer.
func (e *creatorEnv) serviceTaking(t *testing.T, delay, retryWait time.Duration) {
	t.Helper()
	if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Filter.Delay = emulator.Duration(delay) }); err != nil {
		t.Fatal(err)
	}
	e.creator = NewCreator(e.creator.client, e.creator.listings, 3, retryWait, DefaultAdoptionWindow)
}

func (e *creatorEnv) closeNextCreateAfterCommit() {
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPost})
}

func TestCreate_adoptsLinkCommittedBeforeConnectionClosed(t *testing.T) {
	for _, slug := range []string{"", "spring"} {
		t.Run("slug="+slug, func(t *testing.T) {
			e := newCreatorEnv(t)
			e.closeNextCreateAfterCommit()
			link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", slug), nil)
			if err != nil {
				t.Fatal(err)
			}
			stored := e.srv.Links(e.fx.AccountID)
			if len(stored) != 1 || stored[0].ID != link.ID || from != Retaken {
				t.Fatalf("origin=%v, link %s, service holds %d links", from, link.ID, len(stored))
			}
			if n := e.srv.Count(http.MethodPost, "/api/links"); n != 1 {
				t.Errorf("%d POSTs, want 1: the create must not be re-sent once its link is found", n)
			}
		})
	}
}

// A listing that skipped the link a search looks for (offset paging shifted
// past it while another client deleted links) is not taken for its
// absence: the search looks again and finds it. After a lost answer the
// create is not sent a second time; after a 409 the leftover holding the
// slug is taken over, not reported as a slug taken by a link not listed.
func TestCreate_findsALinkTheFirstListingSkipped(t *testing.T) {
	for name, tc := range map[string]struct {
		slug   string
		before func(*creatorEnv)
		want   Origin
	}{
		"the link a lost answer made":       {before: (*creatorEnv).closeNextCreateAfterCommit, want: Retaken},
		"a leftover holding the slug (409)": {slug: "left-0", before: func(e *creatorEnv) { e.seedLeftover(t, time.Hour) }, want: Leftover},
	} {
		t.Run(name, func(t *testing.T) {
			e := newCreatorEnv(t)
			dest := "https://example.com/left/0"
			var skipped atomic.Bool
			list := func(ctx context.Context) (*client.LinkSet, error) {
				listed, err := e.creator.client.ListLinks(ctx)
				if err != nil || e.srv.Count(http.MethodPost, "/api/links") == 0 || skipped.Swap(true) {
					return listed, err
				}
				var kept []client.Link // the first listing after the create, as pages that shifted past the link
				for l := range listed.All() {
					if l.Destination != dest {
						kept = append(kept, l)
					}
				}
				return client.LinkSetOf(kept...), nil
			}
			e.creator = NewCreator(e.creator.client, snapshot.New(list, snapshot.DefaultLifetime), 3, time.Millisecond, DefaultAdoptionWindow)
			tc.before(e)
			link, from, err := e.creator.Create(context.Background(), e.input(dest, tc.slug), nil)
			if err != nil || from != tc.want || !skipped.Load() {
				t.Fatalf("Create = %v, %v, %v; want the link the first listing skipped, origin %v", link, from, err, tc.want)
			}
			if stored := e.srv.Links(e.fx.AccountID); len(stored) != 1 || e.srv.Count(http.MethodPost, "/api/links") != 1 {
				t.Fatalf("the service holds %d links after %d POSTs; want one of each", len(stored), e.srv.Count(http.MethodPost, "/api/links"))
			}
		})
	}
}

func TestCreate_createsAgainWhenTheFailedAttemptMadeNothing(t *testing.T) {
	for _, status := range []int{500, 502, 503} {
		e := newCreatorEnv(t)
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: status, Method: http.MethodPost})
		link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", ""), nil)
		if err != nil {
			t.Fatal(err)
		}
		if from != Made || len(e.srv.Links(e.fx.AccountID)) != 1 || e.srv.Count(http.MethodPost, "/api/links") != 2 {
			t.Fatalf("status %d: origin=%v, %d links, %d POSTs; want a second POST and one link %s",
				status, from, len(e.srv.Links(e.fx.AccountID)), e.srv.Count(http.MethodPost, "/api/links"), link.ID)
		}
	}
}

// A create answered 503 with a Retry-After is sent again no sooner than
// the service asked (a POST is never retried at once: the search comes
// first), and fails at once when that is past the create's timeout.
func TestCreate_waitsAs503sRetryAfterAsks(t *testing.T) {
	e := newCreatorEnv(t)
	unavailable := emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusServiceUnavailable, RetryAfter: 2, Method: http.MethodPost}
	e.srv.InjectFaults(unavailable)
	start := time.Now()
	if _, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", ""), nil); err != nil || from != Made {
		t.Fatalf("Create = %v, %v; want the link made by the create sent again", from, err)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("the create was sent again after %s, before the 2s the 503 asked", took.Round(time.Millisecond))
	}
	e.srv.InjectFaults(unavailable)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start = time.Now()
	_, _, err := e.creator.Create(ctx, e.input("https://example.com/b", ""), nil)
	if err == nil || !strings.Contains(err.Error(), "the service asked to wait 2s before the create is sent again, past the create's timeout") || time.Since(start) > 900*time.Millisecond {
		t.Fatalf("Create under a 1s timeout = %v after %s; want it to fail at once, naming the wait", err, time.Since(start).Round(time.Millisecond))
	}
	if n := e.srv.Count(http.MethodPost, "/api/links"); n != 3 {
		t.Errorf("%d POSTs, want 3: the second create is not sent again", n)
	}
}

// A gateway in front of a slow service may answer 504 while the service
// goes on to make the link. The search for it waits, after that answer, as
// long as the slowest create answered so far took, so it finds the link
// rather than make a second one beside it. The wait before a retry, half
// the service's work here, would not be enough on its own: the slowest is
// measured.
func TestCreate_waitsForALinkTheServiceMakesAfterItsAnswer(t *testing.T) {
	e := newCreatorEnv(t)
	e.serviceTaking(t, 600*time.Millisecond, 300*time.Millisecond)
	if _, _, err := e.creator.Create(context.Background(), e.input("https://example.com/first", ""), nil); err != nil {
		t.Fatal(err) // answered after the filter: how long the service works on a create
	}
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/later", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); from != Retaken || n != 2 || e.srv.Count(http.MethodPost, "/api/links") != 2 {
		t.Fatalf("origin=%v, %d links, %d POSTs; want link %s, which the 504's create made, found, and no second POST",
			from, n, e.srv.Count(http.MethodPost, "/api/links"), link.ID)
	}
}

func TestCreate_neverAdoptsALinkAnotherResourceHolds(t *testing.T) {
	e := newCreatorEnv(t)
	existing, _, err := e.creator.Create(context.Background(), e.input("https://example.com/same", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The next attempt fails before commit; the link with the same
	// destination belongs to another resource and must not be taken.
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 500, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/same", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if from != Made || link.ID == existing.ID || len(e.srv.Links(e.fx.AccountID)) != 2 {
		t.Fatalf("origin=%v, same ID=%v, %d links", from, link.ID == existing.ID, len(e.srv.Links(e.fx.AccountID)))
	}
}

func TestCreate_neverAdoptsALinkOlderThanTheAttempt(t *testing.T) {
	e := newCreatorEnv(t)
	*e.clock = time.Now().Add(-time.Hour) // made an hour ago, outside Terraform
	if _, err := e.srv.SeedLinks(e.fx.DomainID, "old", 1); err != nil {
		t.Fatal(err)
	}
	*e.clock = time.Now()
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 503, Method: http.MethodPost})
	_, from, err := e.creator.Create(context.Background(), e.input("https://example.com/old/0", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if from != Made || len(e.srv.Links(e.fx.AccountID)) != 2 {
		t.Fatalf("origin=%v, %d links; the old link must be left alone", from, len(e.srv.Links(e.fx.AccountID)))
	}
}

// A create with a slug whose answer was lost takes only a link that holds
// its slug: another configuration's link to the same page, made in the
// same seconds under another slug, is not the link the attempt made.
func TestCreate_ambiguousCreateWithASlugTakesNoLinkWithAnotherSlug(t *testing.T) {
	e := newCreatorEnv(t)
	theirs, err := e.srv.SeedLinks(e.fx.DomainID, "promo", 1) // https://example.com/promo/0, slug promo-0
	if err != nil {
		t.Fatal(err)
	}
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusServiceUnavailable, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input(theirs[0].Destination, "mine"), nil)
	if err != nil || from != Made || link.ID == theirs[0].ID || link.Slug != "mine" {
		t.Fatalf("origin %v, link %+v, error %v; want a link of its own with slug mine, sent again", from, link, err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
		t.Errorf("%d links, want theirs and the new one", n)
	}
}

// A service whose list does not say when a link was made (no createdAt)
// gives nothing to tell the lost answer's link from an older twin by, and
// a link made twice is the worse mistake: the link alike that no resource
// holds is taken, not made a second time.
func TestCreate_ambiguousCreateFindsItsLinkInAListWithoutCreatedAt(t *testing.T) {
	e := newCreatorEnv(t)
	list := func(ctx context.Context) (*client.LinkSet, error) {
		listed, err := e.creator.client.ListLinks(ctx)
		if err != nil {
			return nil, err
		}
		var undated []client.Link
		for l := range listed.All() {
			l.CreatedAt = time.Time{}
			undated = append(undated, l)
		}
		return client.LinkSetOf(undated...), nil
	}
	e.creator = NewCreator(e.creator.client, snapshot.New(list, snapshot.DefaultLifetime), 3, time.Millisecond, DefaultAdoptionWindow)
	e.closeNextCreateAfterCommit()
	link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", ""), nil)
	if err != nil || from != Retaken {
		t.Fatalf("origin %v, link %v, error %v; want the link the attempt made, found", from, link, err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 1 || e.srv.Count(http.MethodPost, "/api/links") != 1 {
		t.Fatalf("%d links after %d POSTs; want one of each", n, e.srv.Count(http.MethodPost, "/api/links"))
	}
}

func TestCreate_twinsWithTheSameDestinationStayTwo(t *testing.T) {
	for round := range 20 {
		e := newCreatorEnv(t)
		e.closeNextCreateAfterCommit()
		var wg sync.WaitGroup
		ids := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				link, _, err := e.creator.Create(context.Background(), e.input("https://example.com/twins", ""), nil)
				errs[i] = err
				if err == nil {
					ids[i] = link.ID
				}
			})
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatal(errs)
		}
		if ids[0] == ids[1] || len(e.srv.Links(e.fx.AccountID)) != 2 {
			t.Fatalf("round %d: IDs %v, %d links stored; want two distinct links", round, ids, len(e.srv.Links(e.fx.AccountID)))
		}
	}
}

func TestCreate_givesUpWithAClearErrorWhenEveryAttemptFails(t *testing.T) {
	e := newCreatorEnv(t)
	for range 10 {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 500, Method: http.MethodPost})
	}
	_, _, err := e.creator.Create(context.Background(), e.input("https://example.com/a", ""), nil)
	if err == nil || !strings.Contains(err.Error(), "no link was found on the account after it; gave up after 4 attempts") {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 0 {
		t.Fatalf("%d links stored", n)
	}
}

// seedLeftover stores a link as a run killed after its POST would have
// left it: slug left-0, destination https://example.com/left/0.
func (e *creatorEnv) seedLeftover(t *testing.T, age time.Duration) emulator.Link {
	t.Helper()
	now := *e.clock
	*e.clock = now.Add(-age)
	links, err := e.srv.SeedLinks(e.fx.DomainID, "left", 1)
	*e.clock = now
	if err != nil {
		t.Fatal(err)
	}
	return links[0]
}

// A create answered 5xx, its outcome unknown, looks for the link it may
// have made. Another configuration's link is not that link, however alike:
// one that holds the slug but points elsewhere (the create sent again then
// meets the 409, which names it), one to the same page for another
// campaign, or one made before the attempt began (the service's clock
// placed by the links this process made).
func TestCreate_ambiguousCreateTakesNoOtherConfigurationsLink(t *testing.T) {
	spring := &client.UTM{Campaign: "spring"}
	for name, tc := range map[string]struct {
		slug, destination string
		utm               *client.UTM   // the resource's
		theirs            *client.UTM   // the other link's
		age               time.Duration // of the other link, when the attempt begins
	}{
		"its slug, another destination":      {slug: "promo", destination: "https://example.com/mine", age: time.Hour},
		"same page, another campaign":        {destination: "https://example.com/landing", utm: spring, theirs: &client.UTM{Campaign: "autumn"}},
		"same page, made before the attempt": {destination: "https://example.com/landing", age: time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			e := newCreatorEnv(t)
			// A link of this process places the service's clock.
			if _, _, err := e.creator.Create(context.Background(), e.input("https://example.com/first", ""), nil); err != nil {
				t.Fatal(err)
			}
			now := *e.clock
			*e.clock = now.Add(-tc.age)
			theirs, err := e.srv.SeedLinks(e.fx.DomainID, "promo", 1)
			*e.clock = now
			if err != nil {
				t.Fatal(err)
			}
			other := theirs[0]
			if tc.slug == "" || tc.theirs != nil {
				dest := tc.destination
				if _, err := e.creator.client.ChangeDestination(context.Background(), other.ID, client.ChangeDestinationInput{Destination: dest, UTM: tc.theirs}); err != nil {
					t.Fatal(err)
				}
			}
			e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusServiceUnavailable, Method: http.MethodPost})
			in := e.input(tc.destination, tc.slug)
			if tc.slug != "" {
				in.Slug = "promo-0"
			}
			link, from, err := e.creator.Create(context.Background(), in, tc.utm)
			var taken *SlugTakenError
			switch {
			case tc.slug != "" && (!errors.As(err, &taken) || taken.Holder == nil || taken.Holder.ID != other.ID):
				t.Fatalf("origin %v, link %v, error %v; want the 409 naming the other link", from, link, err)
			case tc.slug == "" && (err != nil || link.ID == other.ID || from != Made):
				t.Fatalf("origin %v, link %v, error %v; want a link of its own, sent again", from, link, err)
			}
		})
	}
}

// The service's clock placed by a first create may move against ours
// during the run (a clock stepped by NTP): the link a later ambiguous
// attempt made is still found, not made again.
func TestCreate_ambiguousCreateFindsItsLinkAfterAClockStep(t *testing.T) {
	for _, step := range []time.Duration{0, -3 * time.Second, -20 * time.Second, 20 * time.Second} {
		t.Run(step.String(), func(t *testing.T) {
			e := newCreatorEnv(t)
			if _, _, err := e.creator.Create(context.Background(), e.input("https://example.com/first", ""), nil); err != nil {
				t.Fatal(err)
			}
			*e.clock = time.Now().Add(step) // the service's clock moved against ours
			e.closeNextCreateAfterCommit()
			link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", ""), nil)
			if err != nil || from != Retaken {
				t.Fatalf("origin %v, link %v, error %v; want the link the attempt made, found", from, link, err)
			}
			if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
				t.Errorf("%d links, want 2: each create made one", n)
			}
		})
	}
}

func TestCreate_takesOverTheExactRecentLeftoverOfAnInterruptedRun(t *testing.T) {
	e := newCreatorEnv(t)
	left := e.seedLeftover(t, time.Hour)
	link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/left/0", "left-0"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if from != Leftover || link.ID != left.ID || len(e.srv.Links(e.fx.AccountID)) != 1 {
		t.Fatalf("origin %v, link %s (leftover %s), %d links; want the leftover taken over", from, link.ID, left.ID, len(e.srv.Links(e.fx.AccountID)))
	}
	// Taken over means held: a second resource may not take it too.
	if _, _, err := e.creator.Create(context.Background(), e.input("https://example.com/left/0", "left-0"), nil); err == nil {
		t.Fatal("a second create took over the same link")
	}
}

// The adoption window is read with an allowance for the service's clock
// against ours: a leftover that looks a minute older than the window may
// be as old as the window on the service's clock.
func TestCreate_takesOverALeftoverAClockStepPastTheWindow(t *testing.T) {
	e := newCreatorEnv(t)
	left := e.seedLeftover(t, DefaultAdoptionWindow+time.Minute)
	link, from, err := e.creator.Create(context.Background(), e.input(left.Destination, "left-0"), nil)
	if err != nil || from != Leftover || link.ID != left.ID {
		t.Fatalf("origin %v, link %v, error %v; want leftover %s taken over", from, link, err, left.ID)
	}
}

// A resource renamed without a moved block: its create may meet the old
// link's 409 before the apply sends that link's delete, and settle the
// 409 while the delete goes, whether the listing then still shows the old
// link or no longer does. The create waits for the delete and sends its
// POST again, and makes the link.
func TestCreate_slugFreedWhileSettlingA409IsCreatedAgain(t *testing.T) {
	for name, deleteTakes := range map[string]time.Duration{
		"the delete answered before the listing": 0,
		"the delete on its way at the listing":   2 * time.Second,
	} {
		t.Run(name, func(t *testing.T) {
			e := newCreatorEnv(t)
			old := e.seedLeftover(t, time.Hour) // older than the adoption window: not to be taken over
			e.srv.InjectFaults(
				emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Second), Method: http.MethodGet, Path: "/api/links"},
				emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(deleteTakes), Method: http.MethodDelete},
			)
			type result struct {
				link *client.Link
				err  error
			}
			created := make(chan result, 1)
			go func() {
				link, _, err := e.creator.Create(context.Background(), e.input("https://example.com/left/0", "left-0"), nil)
				created <- result{link, err}
			}()
			for e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict) == 0 {
				time.Sleep(5 * time.Millisecond)
			}
			handedOn, end := e.creator.BeginDelete(old.ID, e.fx.DomainID, "left-0")
			if handedOn {
				t.Fatal("the old link was handed on; want it deleted")
			}
			if err := e.creator.client.DeleteLink(context.Background(), old.ID); err != nil {
				t.Fatal(err)
			}
			end()
			r := <-created
			if r.err != nil || r.link.ID == old.ID || len(e.srv.Links(e.fx.AccountID)) != 1 {
				t.Fatalf("create: %v (link %v, old %s, %d links); want a new link made once the delete freed the slug", r.err, r.link, old.ID, len(e.srv.Links(e.fx.AccountID)))
			}
		})
	}
}

// A run stopped while it lists to settle a 409 tells of the stop, not of
// a slug taken: the next run settles the 409 (and takes over a leftover).
func TestCreate_stoppedWhileSettlingA409TellsOfTheStop(t *testing.T) {
	e := newCreatorEnv(t)
	e.seedLeftover(t, time.Hour)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(3 * time.Second), Method: http.MethodGet, Path: "/api/links"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel) // while the listing waits
	_, _, err := e.creator.Create(ctx, e.input("https://example.com/left/0", "left-0"), nil)
	var taken *SlugTakenError
	var apiErr *client.APIError
	if !errors.Is(err, context.Canceled) || errors.As(err, &taken) || errors.As(err, &apiErr) {
		t.Fatalf("error = %v; want the stop, without the 409 that makes it read as a slug taken", err)
	}
}

// A run stopped while it settles the 409 met by a create sent again after
// a lost answer says the outcome is unknown (ErrAmbiguous): the holder may
// be the link the lost answer's attempt made.
func TestCreate_stoppedWhileSettlingA409AfterALostAnswerIsAmbiguous(t *testing.T) {
	e := newCreatorEnv(t)
	e.seedLeftover(t, time.Hour) // holds the slug; older than the attempt, so not the link the search looks for
	e.srv.InjectFaults(
		emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusBadGateway, Method: http.MethodPost},
		emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Millisecond), Method: http.MethodGet, Path: "/api/links"}, // the search
		emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Second), Method: http.MethodGet, Path: "/api/links"},      // settling the 409
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict) == 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // while the listing waits
		cancel()
	}()
	_, _, err := e.creator.Create(ctx, e.input("https://example.com/left/0", "left-0"), nil)
	if !errors.Is(err, client.ErrAmbiguous) || !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v; want the stop, said to leave the outcome of the lost answer unknown", err)
	}
	if n := e.srv.Count(http.MethodPost, "/api/links"); n != 2 {
		t.Fatalf("%d POSTs, want 2: the lost one and the one sent again", n)
	}
}

// The slug's holder that a create sent again after a lost answer meets is
// the link that answer's attempt made, found late: it is retaken, not
// taken over as an interrupted run's leftover, and the warning says so.
func TestCreate_slugHeldByTheLostAnswersLinkIsRetaken(t *testing.T) {
	e := newCreatorEnv(t)
	var listings atomic.Int32
	list := func(ctx context.Context) (*client.LinkSet, error) {
		listed, err := e.creator.client.ListLinks(ctx)
		if err != nil || listings.Add(1) > 2 {
			return listed, err
		}
		var kept []client.Link // the search's two listings, as pages that shifted past the link
		for l := range listed.All() {
			if l.Slug != "spring" {
				kept = append(kept, l)
			}
		}
		return client.LinkSetOf(kept...), nil
	}
	e.creator = NewCreator(e.creator.client, snapshot.New(list, snapshot.DefaultLifetime), 3, time.Millisecond, DefaultAdoptionWindow)
	e.closeNextCreateAfterCommit()
	link, from, err := e.creator.Create(context.Background(), e.input("https://example.com/a", "spring"), nil)
	if err != nil || from != Retaken {
		t.Fatalf("origin %v, link %v, error %v; want the lost answer's link, retaken", from, link, err)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 1 || e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict) != 1 {
		t.Fatalf("%d links, %d POSTs answered 409; want one link, met by the create sent again", n, e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict))
	}
}

// A leftover of this resource's interrupted create has no UTM parameters
// yet, or the resource's own if its UTM step ran too. A link with others
// belongs to another configuration (another campaign), however alike.
func TestCreate_takesOverASlugHolderByItsUTMParameters(t *testing.T) {
	old, mine := &client.UTM{Source: "old"}, &client.UTM{Source: "newsletter", Campaign: "spring"}
	for name, tc := range map[string]struct {
		holder, resource *client.UTM
		takenOver        bool
	}{
		"none, resource none":      {nil, nil, true},
		"none, resource its own":   {nil, mine, true},
		"its own":                  {mine, mine, true},
		"others, resource none":    {old, nil, false},
		"others, resource its own": {old, mine, false},
	} {
		t.Run(name, func(t *testing.T) {
			e := newCreatorEnv(t)
			left := e.seedLeftover(t, time.Minute)
			if tc.holder != nil {
				if _, err := e.creator.client.ChangeDestination(context.Background(), left.ID, client.ChangeDestinationInput{Destination: left.Destination, UTM: tc.holder}); err != nil {
					t.Fatal(err)
				}
			}
			in := e.input(left.Destination, "left-0")
			listed, err := e.creator.client.ListLinks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, planned := e.creator.SlugHolder(listed, in, tc.resource)
			link, from, err := e.creator.Create(context.Background(), in, tc.resource)
			if tc.takenOver {
				if err != nil || from != Leftover || link.ID != left.ID || planned != "" {
					t.Fatalf("origin %v, link %v, error %v, plan said %q; want the holder taken over", from, link, err, planned)
				}
				return
			}
			var taken *SlugTakenError
			if !errors.As(err, &taken) || !strings.Contains(taken.Reason, "UTM parameters differ") || planned != taken.Reason {
				t.Fatalf("error %v, plan said %q; want the holder left for its UTM parameters, at plan and apply", err, planned)
			}
		})
	}
}

func TestCreate_leavesASlugHolderItMayNotTakeOver(t *testing.T) {
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		age         time.Duration
		destination string
		setup       func(*creatorEnv, emulator.Link)
		reason      string
		alike       bool       // what the create declares (a resource renamed without a moved block?)
		expires     *time.Time // the create's (the holder has none)
	}{
		"other destination": {time.Minute, "https://example.com/mine", nil, `destination "https://example.com/left/0" differs`, false, nil},
		"other expiry":      {time.Minute, "https://example.com/left/0", nil, "its expiry differs", false, &expiry},
		// Not alike, whatever it declares: the plan's advice is to apply
		// again once the delete is through, not a moved block.
		"being deleted": {time.Minute, "https://example.com/left/0", func(e *creatorEnv, l emulator.Link) { e.creator.BeginDelete(l.ID, e.fx.DomainID, "") },
			"this apply sent its delete", false, nil},
		"too old": {DefaultAdoptionWindow + 3*time.Hour, "https://example.com/left/0", nil, "longer ago than adoption_window (24h)", true, nil},
		"held by this run": {time.Minute, "https://example.com/left/0", func(e *creatorEnv, l emulator.Link) { e.creator.Hold(l.ID, "") },
			"another resource of this configuration already manages it", false, nil},
		"window 0": {time.Minute, "https://example.com/left/0", func(e *creatorEnv, _ emulator.Link) { e.creator.window = 0 },
			"adoption_window is 0", true, nil},
	} {
		t.Run(name, func(t *testing.T) {
			e := newCreatorEnv(t)
			left := e.seedLeftover(t, tc.age)
			if tc.setup != nil {
				tc.setup(e, left)
			}
			in := e.input(tc.destination, "left-0")
			in.ExpiresAt = tc.expires
			_, _, err := e.creator.Create(context.Background(), in, nil)
			var taken *SlugTakenError
			if !errors.As(err, &taken) || !errors.Is(err, client.ErrConflict) {
				t.Fatalf("error = %v, want a SlugTakenError wrapping the 409", err)
			}
			if taken.Holder == nil || taken.Holder.ID != left.ID || !strings.Contains(taken.Reason, tc.reason) {
				t.Fatalf("holder %+v, reason %q; want %s and %q", taken.Holder, taken.Reason, left.ID, tc.reason)
			}
			if taken.Alike != tc.alike {
				t.Fatalf("alike = %t, want %t", taken.Alike, tc.alike)
			}
			if got, want := taken.ImportID(), e.fx.DomainID+"/left-0"; got != want {
				t.Fatalf("import ID %q, want %q", got, want)
			}
			if n := len(e.srv.Links(e.fx.AccountID)); n != 1 {
				t.Fatalf("%d links, want the holder alone", n)
			}
		})
	}
}

// Two objects that a create marked are told apart. A read without a mark
// is never counted as a second object: a CLI may import a link twice in a
// run, and OpenTofu reads the object a removed block drops beside the one
// an import block brings in, one link moving.
func TestHold_tellsTwoObjectsNamingOneLink(t *testing.T) {
	for name, tc := range map[string]struct {
		first, second string
		twice         bool
	}{
		"one created object read twice":      {`"a"`, `"a"`, false},
		"two created objects":                {`"a"`, `"b"`, true},
		"an imported object read twice":      {"", "", false},
		"a created object, then an imported": {`"a"`, "", false},
		"an imported object, then a created": {"", `"a"`, false},
	} {
		t.Run(name, func(t *testing.T) {
			lc := NewCreator(nil, nil, 0, 0, 0)
			if lc.Hold("l1", tc.first) {
				t.Fatal("the first read was said to be a second object")
			}
			if got := lc.Hold("l1", tc.second); got != tc.twice {
				t.Fatalf("twice = %t, want %t", got, tc.twice)
			}
		})
	}
}

func TestCreate_namesProbableLeftoversOfLinksWithoutSlug(t *testing.T) {
	e := newCreatorEnv(t)
	recent := e.seedLeftover(t, time.Hour)
	in := e.input(recent.Destination, "")
	if _, _, err := e.creator.Create(context.Background(), in, nil); err != nil { // a twin this run made, held: never named
		t.Fatal(err)
	}
	listed, err := e.creator.client.ListLinks(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := e.creator.ProbableLeftovers(context.Background(), in, nil, listed)
	if len(found) != 1 || found[0].ID != recent.ID {
		t.Fatalf("probable leftovers %v, want only %s", found, recent.ID)
	}
	e.creator.Hold(recent.ID, "") // now a resource of this run manages it
	if found := e.creator.ProbableLeftovers(context.Background(), in, nil, listed); len(found) != 0 {
		t.Fatalf("a held link was named: %v", found)
	}
	other := e.input("https://example.com/other", "")
	if found := e.creator.ProbableLeftovers(context.Background(), other, nil, listed); len(found) != 0 {
		t.Fatalf("links with another destination were named: %v", found)
	}
	e.creator = NewCreator(e.creator.client, e.creator.listings, 3, time.Millisecond, DefaultAdoptionWindow)
	e.creator.now = func() time.Time { return time.Now().Add(DefaultAdoptionWindow + 3*time.Hour) }
	if found := e.creator.ProbableLeftovers(context.Background(), in, nil, listed); len(found) != 0 {
		t.Fatalf("a link older than the adoption window was named: %v", found)
	}
	e.creator = NewCreator(e.creator.client, e.creator.listings, 3, time.Millisecond, 0)
	if found := e.creator.ProbableLeftovers(context.Background(), in, nil, listed); len(found) != 0 {
		t.Fatalf("with adoption_window 0, a link was named: %v", found)
	}
}

// seedOlderTwin seeds the link an object of the state already holds,
// identical to what a create without a slug asks for, made ago on the
// service's clock but within the clock-skew allowance: a search after a
// lost answer cannot tell it from the link the create made by its age.
func (e *creatorEnv) seedOlderTwin(t *testing.T, ago time.Duration) emulator.Link {
	t.Helper()
	*e.clock = time.Now().Add(-ago)
	seeded, err := e.srv.SeedLinks(e.fx.DomainID, "twin", 1)
	*e.clock = time.Now()
	if err != nil {
		t.Fatal(err)
	}
	return seeded[0]
}

// seedIdenticalPair seeds the links of two objects of the state, identical
// to what a create without a slug asks for: newer made 30 s ago on the
// service's clock (seedOlderTwin), older 40 s ago.
func (e *creatorEnv) seedIdenticalPair(t *testing.T) (newer emulator.Link, older *client.Link) {
	t.Helper()
	newer = e.seedOlderTwin(t, 30*time.Second)
	*e.clock = time.Now().Add(-40 * time.Second)
	older, err := e.creator.client.CreateLink(context.Background(), e.input(newer.Destination, ""))
	*e.clock = time.Now()
	if err != nil {
		t.Fatal(err)
	}
	return newer, older
}

// -replace (or a taint) of a link without a slug, with
// create_before_destroy, whose create's answer is lost: the old link is
// identical and a few seconds old, and the link the create made is newer.
func TestCreate_takesTheNewestOfTheLinksItCouldHaveMade(t *testing.T) {
	e := newCreatorEnv(t)
	old := e.seedOlderTwin(t, 30*time.Second)
	e.creator = NewCreator(e.creator.client, e.creator.listings, 3, 50*time.Millisecond, DefaultAdoptionWindow)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input(old.Destination, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	if from != Retaken || link.ID == old.ID || len(e.srv.Links(e.fx.AccountID)) != 2 {
		t.Fatalf("origin %v, link %s (the older one %s), %d links; want the newer link, which the lost answer's create made", from, link.ID, old.ID, len(e.srv.Links(e.fx.AccountID)))
	}
}

// When the service makes the create's link only after the search has
// listed the links and the create has looked again (about 5.5 s here), the
// search takes the old one; the old object's destroy, handed on, then
// finds the link the create made, which no state records.
func TestCreate_madeInsteadFindsTheLinkOfACreateThatTookAnotherObjects(t *testing.T) {
	e := newCreatorEnv(t)
	old := e.seedOlderTwin(t, 30*time.Second)
	// The create lists at about 0.5, 1.5, 3 and 5.5 s, a destroy after it
	// at about 6, 7 and 8.5 s: the link is made between the two.
	e.serviceTaking(t, 7*time.Second, 500*time.Millisecond)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input(old.Destination, ""), nil)
	if err != nil || from != Retaken || link.ID != old.ID {
		t.Fatalf("origin %v, link %v, error %v; want the old link %s taken (the service had not made the create's yet)", from, link, err, old.ID)
	}
	if made, mistaken := e.creator.MadeInstead(context.Background(), "another"); mistaken || made != nil {
		t.Fatalf("a link no create took over: mistaken %v, made %v", mistaken, made)
	}
	handedOn, _ := e.creator.BeginDelete(old.ID, e.fx.DomainID, "")
	made, mistaken := e.creator.MadeInstead(context.Background(), old.ID)
	if !handedOn || !mistaken || made == nil || made.ID == old.ID {
		t.Fatalf("handed on %v, mistaken %v, made %v; want the link the create made, found", handedOn, mistaken, made)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
		t.Errorf("%d links, want 2: the old one and the create's", n)
	}
}

// A resource renamed without a moved block, its link without a slug: the
// old object's delete has begun when the new one's create loses its
// answer. The link being deleted is the old object's, never the create's.
func TestCreate_neverTakesALinkThisApplyDeletes(t *testing.T) {
	e := newCreatorEnv(t)
	old := e.seedOlderTwin(t, 30*time.Second)
	e.serviceTaking(t, 600*time.Millisecond, 300*time.Millisecond)
	if handedOn, _ := e.creator.BeginDelete(old.ID, e.fx.DomainID, ""); handedOn {
		t.Fatal("the old link was handed on before any create")
	}
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, _, err := e.creator.Create(context.Background(), e.input(old.Destination, ""), nil)
	if err != nil || link.ID == old.ID {
		t.Fatalf("link %v, error %v; want a link of the create's, not the one being deleted (%s)", link, err, old.ID)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
		t.Errorf("%d links, want 2: the old one (its delete not sent here) and the create's", n)
	}
}

// A link without a slug added beside identical ones (count or for_each
// grown, or an instance added to a for_each): the apply never read the
// others' links, so when the service makes the create's link only after
// the search has listed, the search finds another object's. No destroy
// tells the provider so; the create itself looks again for a newer link,
// and takes it.
func TestCreate_takesTheLinkTheServiceMadeAfterTheSearchOverAnOlderOne(t *testing.T) {
	e := newCreatorEnv(t)
	other := e.seedOlderTwin(t, 30*time.Second)
	e.serviceTaking(t, 600*time.Millisecond, 300*time.Millisecond)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, from, err := e.creator.Create(context.Background(), e.input(other.Destination, ""), nil)
	if err != nil || from != Retaken || link.ID == other.ID {
		t.Fatalf("origin %v, link %v, error %v; want the link the service made after the search, not the other object's %s", from, link, err, other.ID)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 2 {
		t.Errorf("%d links, want 2: the other object's and the create's", n)
	}
	if handedOn, _ := e.creator.BeginDelete(other.ID, e.fx.DomainID, ""); handedOn {
		t.Errorf("the other object's link %s is still held as taken over", other.ID)
	}
}

// -replace of the newer of two identical links without a slug, with
// create_before_destroy, whose create's answer is lost and whose link the
// service makes only after every look: the search takes the replaced
// object's link, the newest. The other object's older link, which this
// process never read, is no link the create made, and MadeInstead must
// not name it as one to delete.
func TestCreate_madeInsteadNamesNoOlderObjectsLink(t *testing.T) {
	e := newCreatorEnv(t)
	old, other := e.seedIdenticalPair(t)
	e.serviceTaking(t, 3*time.Second, 50*time.Millisecond)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, _, err := e.creator.Create(context.Background(), e.input(old.Destination, ""), nil)
	if err != nil || link.ID != old.ID {
		t.Fatalf("link %v, error %v; want the replaced object's link %s, the newest", link, err, old.ID)
	}
	handedOn, _ := e.creator.BeginDelete(old.ID, e.fx.DomainID, "")
	made, mistaken := e.creator.MadeInstead(context.Background(), old.ID)
	if !handedOn || !mistaken || made != nil {
		t.Fatalf("handed on %v, mistaken %v, made %v; want no link named: the service has not made the create's, and %s is the other object's", handedOn, mistaken, made, other.ID)
	}
}

// -replace of the older of two identical links without a slug, with
// create_before_destroy, whose create's answer is lost and whose link the
// service makes only after the create has looked again: the search takes
// the other object's link, the newest, and the replaced object's destroy
// is not handed on. That destroy finds the link the create made.
func TestCreate_madeBesideFindsTheLinkOfACreateThatTookAnotherInstances(t *testing.T) {
	e := newCreatorEnv(t)
	newer, replaced := e.seedIdenticalPair(t)
	// The create lists at about 0.5, 1.5, 3 and 5.5 s, a destroy after it
	// at about 6, 7 and 8.5 s: the link is made between the two.
	e.serviceTaking(t, 7*time.Second, 500*time.Millisecond)
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	link, _, err := e.creator.Create(context.Background(), e.input(newer.Destination, ""), nil)
	if err != nil || link.ID != newer.ID {
		t.Fatalf("link %v, error %v; want the other object's link %s, the newest", link, err, newer.ID)
	}
	if handedOn, _ := e.creator.BeginDelete(replaced.ID, e.fx.DomainID, ""); handedOn {
		t.Fatalf("the replaced object's link %s was handed on", replaced.ID)
	}
	made, taken := e.creator.MadeBeside(context.Background(), e.fx.DomainID, newer.Destination)
	if taken != newer.ID || made == nil || made.ID == newer.ID || made.ID == replaced.ID {
		t.Fatalf("taken %s, made %v; want %s taken and the link the create made found", taken, made, newer.ID)
	}
	if made, taken := e.creator.MadeBeside(context.Background(), e.fx.DomainID, newer.Destination); made != nil || taken != "" {
		t.Errorf("a second destroy found %v, taken %s: the create's link is named once", made, taken)
	}
}

// Once the run's own creates have placed the service's clock, a lost
// create whose link the service made at once finds a link no older than
// the attempt, takes it, and looks no further: the looks for a newer link
// are for a link surely made before the attempt, which only another
// object's can be.
func TestCreate_looksNoFurtherForALinkMadeAfterTheAttempt(t *testing.T) {
	e := newCreatorEnv(t)
	if _, _, err := e.creator.Create(context.Background(), e.input("https://example.com/first", ""), nil); err != nil {
		t.Fatal(err)
	}
	e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	before := e.srv.Count(http.MethodGet, "/api/links")
	_, from, err := e.creator.Create(context.Background(), e.input("https://example.com/second", ""), nil)
	if err != nil || from != Retaken {
		t.Fatalf("origin %v, error %v; want the link the lost answer's create made, found", from, err)
	}
	if n := e.srv.Count(http.MethodGet, "/api/links") - before; n != 1 {
		t.Errorf("the account was listed %d times after the lost answer; want once: the link found was made after the attempt", n)
	}
}

// The links deleted on a domain are those on a domain of the same ID: a
// UUID in any case, another ID only as written.
func TestCreator_deletesOnComparesDomainIDsAsIDs(t *testing.T) {
	lc := NewCreator(nil, nil, 0, 0, 0)
	lc.Deleted("l1", strings.ToUpper(d1))
	lc.Deleted("l2", "dom_A")
	for domainID, want := range map[string]string{d1: "[l1]", d2: "[]", "dom_A": "[l2]", "dom_a": "[]"} {
		if got := fmt.Sprint(lc.DeletesOn(domainID)); got != want {
			t.Errorf("DeletesOn(%q) = %s, want %s", domainID, got, want)
		}
	}
}
