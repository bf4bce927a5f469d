package snapshot

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// service is a fake account: list is a ListFunc over its links that counts
// its calls and can be held until released.
type service struct {
	mu    sync.Mutex
	links []client.Link
	err   error
	calls int
	// hold, when set, makes each listing wait for it to be closed (or for
	// its context to end) after it has read the links.
	hold chan struct{}
	// started, when set, receives the number of each listing as it starts.
	started chan int
	// during, when set, runs inside each listing (after reading the links).
	during func()
	// omit[n] are the IDs listing n (from 1) leaves out, as offset paging
	// does when another client deletes links while it runs.
	omit map[int][]string
}

func newService(ids ...string) *service {
	s := &service{}
	for _, id := range ids {
		s.links = append(s.links, link(id, "https://example.com/"+id))
	}
	return s
}

func link(id, destination string) client.Link {
	return client.Link{ID: id, Destination: destination, Slug: id}
}

func (s *service) list(ctx context.Context) (*client.LinkSet, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	// The listing shows the account as it was when the request arrived.
	links := slices.DeleteFunc(slices.Clone(s.links), func(l client.Link) bool {
		return slices.Contains(s.omit[n], l.ID)
	})
	err, hold, started, during := s.err, s.hold, s.started, s.during
	s.mu.Unlock()
	if started != nil {
		select {
		case started <- n:
		default: // more listings than the test expects: never block on it
		}
	}
	if during != nil {
		during()
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, fmt.Errorf("listing links: %w", ctx.Err())
		}
	}
	if err != nil {
		return nil, err
	}
	return client.LinkSetOf(links...), nil
}

func (s *service) listCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *service) set(change func(*service)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s)
}

// holdListings makes every later listing report its start on started
// and wait for hold to close.
func (s *service) holdListings() {
	s.set(func(s *service) {
		s.hold = make(chan struct{})
		s.started = make(chan int, 64)
	})
}

// put changes a link on the service, then records it in snap, as the
// provider does.
func (s *service) put(snap *Snapshot, l client.Link) {
	s.set(func(s *service) {
		if i := slices.IndexFunc(s.links, func(x client.Link) bool { return x.ID == l.ID }); i >= 0 {
			s.links[i] = l
		} else {
			s.links = append(s.links, l)
		}
	})
	snap.Put(l)
}

// remove deletes a link on the service, then records it in snap.
func (s *service) remove(snap *Snapshot, id string) {
	s.set(func(s *service) {
		s.links = slices.DeleteFunc(s.links, func(l client.Link) bool { return l.ID == id })
	})
	snap.Remove(id)
}

const lifetime = time.Minute

// newSnapshot is a snapshot over svc with a fake clock.
func newSnapshot(svc *service, lifetime time.Duration) (*Snapshot, *testclock.Clock) {
	clk := testclock.New()
	s := New(svc.list, lifetime)
	s.now = clk.Now
	return s, clk
}

// mustGet is Get, reporting an error (it may run in any goroutine).
func mustGet(t *testing.T, s *Snapshot, id string) (client.Link, bool) {
	t.Helper()
	l, ok, err := s.Get(context.Background(), id)
	if err != nil {
		t.Errorf("Get(%q): %v", id, err)
	}
	return l, ok
}

// expectMissing checks that Get does not find id; what names what it
// would have found (a link the service does not have, a removed link).
func expectMissing(t *testing.T, s *Snapshot, id, what string) {
	t.Helper()
	if _, ok := mustGet(t, s, id); ok {
		t.Errorf("Get(%s) found %s", id, what)
	}
}

// linkIDs lists the IDs of the snapshot's Links (it may run in any
// goroutine).
func linkIDs(t *testing.T, s *Snapshot) []string {
	t.Helper()
	links, err := s.Links(context.Background())
	if err != nil {
		t.Errorf("Links: %v", err)
	}
	ids := []string{}
	if links == nil {
		return ids
	}
	for l := range links.All() {
		ids = append(ids, l.ID)
	}
	return ids
}

func checkCalls(t *testing.T, svc *service, want int) {
	t.Helper()
	if got := svc.listCalls(); got != want {
		t.Errorf("%d list calls, want %d", got, want)
	}
}

// startAll starts f(0) … f(n-1) in goroutines.
func startAll(n int, f func(i int)) {
	for i := range n {
		go f(i)
	}
}

// waitCallers waits until n callers share the listing in flight. A test
// that holds a listing releases it only then: a caller that reached the
// snapshot after the listing ended would start another, and a grace period
// for callers to arrive is too short on a loaded machine.
func waitCallers(t *testing.T, s *Snapshot, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		got := 0
		if s.inflight != nil {
			got = s.inflight.callers
		}
		s.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers share the listing in flight, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// inParallel runs f(0) … f(n-1) at once and waits for them.
func inParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

func TestSnapshotConcurrentGetsShareOneListing(t *testing.T) {
	svc := newService("a", "b", "c")
	svc.holdListings()
	s, clk := newSnapshot(svc, lifetime)

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := []string{"a", "b", "c"}[i%3]
			l, ok, err := s.Get(context.Background(), id)
			switch {
			case err != nil:
				errs <- err
			case !ok || l.ID != id:
				errs <- fmt.Errorf("Get(%q) = %+v, %v", id, l, ok)
			}
		}()
	}
	testsupport.Receive(t, svc.started, "a listing to start")
	waitCallers(t, s, n)
	close(svc.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkCalls(t, svc, 1)

	// Within the lifetime: served from the listing.
	clk.Advance(lifetime - time.Second)
	inParallel(n, func(int) { mustGet(t, s, "a") })
	checkCalls(t, svc, 1)
	// Links confirms with a second listing, which becomes the current one.
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Links = %v", got)
	}
	checkCalls(t, svc, 2)

	// After the lifetime: one more listing, shared again.
	clk.Advance(lifetime)
	inParallel(n, func(int) { mustGet(t, s, "b") })
	checkCalls(t, svc, 3)
	mustGet(t, s, "c")
	checkCalls(t, svc, 3)
}

func TestSnapshotSeesChangesOfTheServiceAfterTheLifetime(t *testing.T) {
	svc := newService("a", "b")
	s, clk := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.set(func(svc *service) { svc.links = append(svc.links[1:], link("c", "https://example.com/c")) })
	if _, ok := mustGet(t, s, "a"); !ok {
		t.Error("a changed listing was seen before the lifetime ended")
	}
	clk.Advance(lifetime)
	if _, ok := mustGet(t, s, "a"); ok {
		t.Error("a link deleted out of band is still served after the lifetime")
	}
	if _, ok := mustGet(t, s, "c"); !ok {
		t.Error("a link created out of band is not seen after the lifetime")
	}
	// The refresh, and the listing that confirmed a is gone.
	checkCalls(t, svc, 3)
}

// A listing slower than the lifetime still serves every caller that waited
// for it: they must not list again one after the other.
func TestSnapshotSlowListingServesItsWaiters(t *testing.T) {
	svc := newService("a")
	svc.holdListings()
	s, clk := newSnapshot(svc, lifetime)
	svc.during = func() { clk.Advance(2 * lifetime) }

	const n = 10
	done := make(chan error, n)
	startAll(n, func(int) {
		_, ok, err := s.Get(context.Background(), "a")
		if err == nil && !ok {
			err = errors.New("link a not found")
		}
		done <- err
	})
	testsupport.Receive(t, svc.started, "a listing to start")
	waitCallers(t, s, n)
	svc.set(func(svc *service) { svc.during = nil })
	close(svc.hold)
	for range n {
		if err := testsupport.Receive(t, done, "a Get"); err != nil {
			t.Error(err)
		}
	}
	if got := svc.listCalls(); got != 1 {
		t.Errorf("%d list calls for one round of concurrent Gets, want 1", got)
	}
	// Terraform refreshes a few resources at a time: the next round comes
	// once the listing is in, and it is served too, until the lifetime has
	// passed since the listing ended.
	clk.Advance(lifetime - time.Second)
	if _, ok, err := s.Get(context.Background(), "a"); err != nil || !ok {
		t.Errorf("Get after the slow listing: found %v, %v", ok, err)
	}
	if got := svc.listCalls(); got != 1 {
		t.Errorf("%d list calls once the slow listing was in, want 1", got)
	}
}

func TestSnapshotPutAndRemoveNeedNoListing(t *testing.T) {
	svc := newService("a", "b")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")

	svc.put(s, link("c", "https://example.com/c"))
	svc.put(s, link("a", "https://example.com/changed"))
	svc.remove(s, "b")

	if l, ok := mustGet(t, s, "c"); !ok || l.Destination != "https://example.com/c" {
		t.Errorf("Get(c) = %+v, %v, want the link put", l, ok)
	}
	if l, ok := mustGet(t, s, "a"); !ok || l.Destination != "https://example.com/changed" {
		t.Errorf("Get(a) = %+v, %v, want the changed link", l, ok)
	}
	expectMissing(t, s, "b", "a removed link")
	s.Remove("nope") // removing an unknown link is harmless
	checkCalls(t, svc, 1)
	// Links alone lists, to confirm: once, since b, in the first listing
	// and not in the second, is ours, deleted after the first ended.
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Links = %v, want [a c]", got)
	}
	checkCalls(t, svc, 2)
}

// A link ID that is a UUID is found in any case, and the provider's own
// writes, kept under the service's spelling, are found so too.
func TestSnapshotGetComparesUUIDsInAnyCase(t *testing.T) {
	const changed, gone = "0b7c1f2e-0000-4000-8000-00000000000a", "0b7c1f2e-0000-4000-8000-00000000000b"
	svc := newService(changed, gone)
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, changed)
	svc.put(s, link(changed, "https://example.com/changed"))
	svc.remove(s, gone)
	if l, ok := mustGet(t, s, strings.ToUpper(changed)); !ok || l.ID != changed || l.Destination != "https://example.com/changed" {
		t.Errorf("Get in capitals = %+v, %v; want the changed link", l, ok)
	}
	expectMissing(t, s, strings.ToUpper(gone), "a removed link asked for in capitals")
}

func TestSnapshotPutBeforeAnyListing(t *testing.T) {
	// The link was created on the service before the first listing, which
	// therefore shows it.
	svc := newService("a")
	s, _ := newSnapshot(svc, lifetime)
	created := link("new", "https://example.com/new")
	svc.set(func(svc *service) { svc.links = append(svc.links, created) })
	s.Put(created)
	s.Remove("a")
	svc.set(func(svc *service) { svc.links = svc.links[1:] })

	if l, ok := mustGet(t, s, "new"); !ok || l != created {
		t.Errorf("Get(new) = %+v, %v, want the link put before the listing", l, ok)
	}
	if _, ok := mustGet(t, s, "a"); ok {
		t.Error("a link removed before the listing is served")
	}
	checkCalls(t, svc, 1) // a was removed by us: its absence needs no confirmation
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"new"}) {
		t.Errorf("Links = %v, want [new]", got)
	}
	checkCalls(t, svc, 2)
}

// The listing in flight shows the account as it was when it started; the
// writes made meanwhile are replayed on top of it. (A Get of c drives the
// listing: Links would list again to confirm, and answer from that.)
func TestSnapshotWritesDuringListingAreReplayed(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("refresh=%v", stale), func(t *testing.T) {
			svc := newService("a", "b", "c")
			s, clk := newSnapshot(svc, lifetime)
			if stale {
				mustGet(t, s, "a")
				clk.Advance(lifetime)
			}
			svc.holdListings()
			got := make(chan error, 1)
			go func() {
				_, _, err := s.Get(context.Background(), "c")
				got <- err
			}()
			testsupport.Receive(t, svc.started, "a listing to start")

			// The service carries these out; the listing in flight predates them.
			svc.put(s, link("d", "https://example.com/d"))
			svc.put(s, link("a", "https://example.com/changed"))
			svc.remove(s, "b")
			svc.put(s, link("e", "https://example.com/e"))
			svc.remove(s, "e")
			close(svc.hold)
			if err := testsupport.Receive(t, got, "Get"); err != nil {
				t.Fatal(err)
			}

			if l, ok := mustGet(t, s, "a"); !ok || l.Destination != "https://example.com/changed" {
				t.Errorf("Get(a) = %+v, %v, want the change made during the listing", l, ok)
			}
			if _, ok := mustGet(t, s, "b"); ok {
				t.Error("a link removed during the listing came back")
			}
			if _, ok := mustGet(t, s, "d"); !ok {
				t.Error("a link put during the listing is missing")
			}
			if _, ok := mustGet(t, s, "e"); ok {
				t.Error("a link put then removed during the listing is served")
			}
			checkCalls(t, svc, map[bool]int{false: 1, true: 2}[stale])
			if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "c", "d"}) {
				t.Errorf("Links = %v, want [a c d]", got)
			}
			// b, removed while the first listing was taken, is in it and not
			// in the second: a third shows that one skipped nothing.
			checkCalls(t, svc, map[bool]int{false: 3, true: 4}[stale])

			// The journal is spent: the next listing is not patched by it.
			svc.set(func(svc *service) {
				svc.hold, svc.started = nil, nil
				svc.links = []client.Link{link("b", "https://example.com/b")}
			})
			clk.Advance(lifetime)
			if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"b"}) {
				t.Errorf("Links after the next listing = %v, want [b]", got)
			}
		})
	}
}

func TestSnapshotLifetimeZeroListsEveryTime(t *testing.T) {
	svc := newService("a", "b")
	s, _ := newSnapshot(svc, 0)
	// A Get that finds its link lists once; Links lists twice, to confirm.
	for i := range 3 {
		if _, ok := mustGet(t, s, "a"); !ok {
			t.Fatal("Get(a) found nothing")
		}
		checkCalls(t, svc, 3*i+1)
		if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("Links = %v", got)
		}
		checkCalls(t, svc, 3*i+3)
	}
	// A miss lists once more.
	expectMissing(t, s, "zzz", "a link")
	checkCalls(t, svc, 11)
	// Writes change nothing: the service's list is the truth.
	s.Put(link("x", "https://example.com/x"))
	s.Remove("a")
	if _, ok := mustGet(t, s, "a"); !ok {
		t.Error("with the snapshot off, Remove hid a listed link")
	}
	if _, ok := mustGet(t, s, "x"); ok {
		t.Error("with the snapshot off, Get served a link the service does not list")
	}

	svc.set(func(svc *service) { svc.err = errors.New("boom") })
	if _, _, err := s.Get(context.Background(), "a"); err == nil {
		t.Error("Get: the list error was lost")
	}
	if _, err := s.Links(context.Background()); err == nil {
		t.Error("Links: the list error was lost")
	}
}

func TestSnapshotListErrorReachesEveryWaiter(t *testing.T) {
	boom := errors.New("boom")
	svc := newService("a")
	svc.err = boom
	svc.holdListings()
	s, _ := newSnapshot(svc, lifetime)

	const n = 10
	errs := make(chan error, n)
	startAll(n, func(int) {
		_, _, err := s.Get(context.Background(), "a")
		errs <- err
	})
	testsupport.Receive(t, svc.started, "a listing to start")
	waitCallers(t, s, n)
	close(svc.hold)
	for range n {
		if err := testsupport.Receive(t, errs, "a Get"); !errors.Is(err, boom) {
			t.Errorf("Get: %v, want %v", err, boom)
		}
	}
	checkCalls(t, svc, 1)

	// A failed listing is not kept: the next call lists again.
	svc.set(func(svc *service) { svc.err, svc.hold, svc.started = nil, nil, nil })
	if _, ok := mustGet(t, s, "a"); !ok {
		t.Error("Get(a) found nothing after the error")
	}
	checkCalls(t, svc, 2)
}

// A failed refresh returns its error; the call after it lists again.
func TestSnapshotFailedRefreshListsAgain(t *testing.T) {
	boom := errors.New("boom")
	svc := newService("a")
	s, clk := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	clk.Advance(lifetime)
	svc.set(func(svc *service) { svc.err = boom })
	if _, err := s.Links(context.Background()); !errors.Is(err, boom) {
		t.Errorf("Links: %v, want %v", err, boom)
	}
	svc.set(func(svc *service) { svc.err = nil })
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("Links = %v", got)
	}
	checkCalls(t, svc, 4) // the refresh, then the confirming listing
}

// A leader cancelled while its listing is under way, the first or one that
// confirms a miss, does not fail its waiters: they list again with their
// own context.
func TestSnapshotCancelledLeaderDoesNotFailWaiters(t *testing.T) {
	for name, tc := range map[string]struct {
		confirming             bool // the leader's listing confirms a miss
		leaderGets, waiterGets string
		waiterFinds            bool
	}{
		"first listing":      {false, "a", "a", true},
		"confirming listing": {true, "x", "y", false},
	} {
		t.Run(name, func(t *testing.T) {
			svc := newService("a")
			s, _ := newSnapshot(svc, lifetime)
			first := 1
			if tc.confirming {
				mustGet(t, s, "a")
				first = 2
			}
			svc.holdListings()
			leaderCtx, cancelLeader := context.WithCancel(context.Background())
			leader := make(chan error, 1)
			go func() {
				_, _, err := s.Get(leaderCtx, tc.leaderGets)
				leader <- err
			}()
			if n := testsupport.Receive(t, svc.started, "the leader's listing to start"); n != first {
				t.Fatalf("listing %d started, want %d", n, first)
			}
			waiter := make(chan error, 1)
			startAll(1, func(int) {
				_, ok, err := s.Get(context.Background(), tc.waiterGets)
				if err == nil && ok != tc.waiterFinds {
					err = fmt.Errorf("Get(%s) found it: %v, want %v", tc.waiterGets, ok, tc.waiterFinds)
				}
				waiter <- err
			})
			waitCallers(t, s, 2)
			cancelLeader()
			if err := testsupport.Receive(t, leader, "the leader"); !errors.Is(err, context.Canceled) {
				t.Errorf("leader: %v, want context.Canceled", err)
			}
			select {
			case n := <-svc.started:
				if n != first+1 {
					t.Errorf("listing %d started, want %d", n, first+1)
				}
			case err := <-waiter:
				t.Fatalf("the waiter returned %v without listing again", err)
			case <-time.After(5 * time.Second):
				t.Fatal("the waiter did not list again")
			}
			close(svc.hold)
			if err := testsupport.Receive(t, waiter, "the waiter"); err != nil {
				t.Errorf("waiter: %v", err)
			}
			checkCalls(t, svc, first+1)
		})
	}
}

func TestSnapshotCancelledWaiterReturnsPromptly(t *testing.T) {
	svc := newService("a")
	svc.holdListings()
	s, _ := newSnapshot(svc, lifetime)
	leader := make(chan error, 1)
	go func() {
		_, _, err := s.Get(context.Background(), "a")
		leader <- err
	}()
	testsupport.Receive(t, svc.started, "a listing to start")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := s.Get(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter: %v, want context.DeadlineExceeded", err)
	}
	close(svc.hold)
	if err := testsupport.Receive(t, leader, "the leader"); err != nil {
		t.Errorf("leader: %v", err)
	}
	checkCalls(t, svc, 1)
}

func TestSnapshotLinksOrder(t *testing.T) {
	svc := newService("a", "b", "c")
	// A repeated link (offset paging under concurrent creates) appears once,
	// where it first appeared, as it was last listed.
	svc.links = append(svc.links, link("b", "https://example.com/b2"))
	s, _ := newSnapshot(svc, lifetime)

	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("Links = %v, want [a b c]", got)
	}
	if l, _ := mustGet(t, s, "b"); l.Destination != "https://example.com/b2" {
		t.Errorf("Get(b) = %+v, want the last listed", l)
	}
	svc.put(s, link("d", "https://example.com/d"))  // newest: last
	svc.put(s, link("a", "https://example.com/a2")) // changed: stays in place
	svc.remove(s, "c")
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "d"}) {
		t.Errorf("Links = %v, want [a b d]", got)
	}
	// A link removed and put again (the same ID re-created) appears once,
	// as the newest.
	svc.remove(s, "b")
	svc.put(s, link("b", "https://example.com/b3"))
	svc.put(s, link("b", "https://example.com/b4"))
	links, err := s.Links(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for l := range links.All() {
		ids = append(ids, l.ID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "d", "b"}) {
		t.Errorf("Links = %v, want [a d b]", ids)
	}
	if last, _ := links.Get("b"); last.Destination != "https://example.com/b4" {
		t.Errorf("Links holds %+v, want the last put", last)
	}

	// What Links returned is not changed by later writes.
	svc.put(s, link("a", "https://example.com/a3"))
	if l, _ := links.Get("a"); l.Destination != "https://example.com/a2" {
		t.Errorf("Links' a = %+v after a later put", l)
	}
	checkCalls(t, svc, 4) // two for the first Links, one each for the others
}

func TestSnapshotConcurrentReadsAndWrites(t *testing.T) {
	// Under -race: writers and readers together, across listings.
	svc := newService("a", "b")
	s, clk := newSnapshot(svc, lifetime)
	inParallel(40, func(i int) {
		id := fmt.Sprintf("l%d", i%8)
		switch i % 4 {
		case 0:
			s.Put(link(id, "https://example.com/"+id))
		case 1:
			s.Remove(id)
		case 2:
			mustGet(t, s, id)
		case 3:
			if i%8 == 3 {
				clk.Advance(lifetime)
			}
			linkIDs(t, s)
		}
	})
	seen := map[string]bool{}
	for _, id := range linkIDs(t, s) {
		if seen[id] {
			t.Errorf("Links lists %s twice", id)
		}
		seen[id] = true
	}
}

// A link one listing skipped (paging shifted by deletes elsewhere) is found
// by the listing that confirms the miss.
func TestSnapshotMissIsConfirmed(t *testing.T) {
	svc := newService("a", "x", "b")
	svc.omit = map[int][]string{1: {"x"}}
	s, _ := newSnapshot(svc, lifetime)
	if l, ok := mustGet(t, s, "x"); !ok || l.ID != "x" {
		t.Errorf("Get(x) = %+v, %v, want the link the first listing skipped", l, ok)
	}
	checkCalls(t, svc, 2)
	// The confirming listing is now the current one.
	mustGet(t, s, "a")
	mustGet(t, s, "x")
	checkCalls(t, svc, 2)
}

// deleteOnePerListing makes another client delete the oldest of the links
// named in turn while each listing is taken (after it read them), as a
// bulk delete under way does: each listing holds a link the next lacks.
func (s *service) deleteOnePerListing(ids ...string) {
	s.during = func() {
		s.set(func(s *service) {
			if len(ids) > 0 {
				doomed := ids[0]
				ids = ids[1:]
				s.links = slices.DeleteFunc(s.links, func(l client.Link) bool { return l.ID == doomed })
			}
		})
	}
}

// A listing that missed a link while links were being deleted may have
// skipped it (offset paging shifts past a link when links before it go):
// the miss is settled only by a listing that holds every link of the one
// that missed, and looked for again until one does. So by Get, and by
// FindSince, whose miss sends a create again.
func TestSnapshotMissWhileLinksAreDeletedLooksAgain(t *testing.T) {
	lookups := map[string]func(*Snapshot) (bool, error){
		"Get": func(s *Snapshot) (bool, error) { _, ok, err := s.Get(context.Background(), "x"); return ok, err },
		"FindSince": func(s *Snapshot) (bool, error) {
			_, ok, err := s.FindSince(context.Background(), s.Mark(), func(l client.Listing) (client.Link, bool) { return l.Get("x") })
			return ok, err
		},
	}
	for name, lifetime := range map[string]time.Duration{"shared": lifetime, "lifetime 0": 0} {
		for lookupName, find := range lookups {
			t.Run(name+", "+lookupName, func(t *testing.T) {
				t.Run("skipped by two listings, found by the third", func(t *testing.T) {
					svc := newService("o1", "o2", "o3", "x")
					svc.omit = map[int][]string{1: {"x"}, 2: {"x"}}
					svc.deleteOnePerListing("o1", "o2")
					s, _ := newSnapshot(svc, lifetime)
					if ok, err := find(s); !ok || err != nil {
						t.Errorf("found x: %v, %v; want the link two shifted listings skipped", ok, err)
					}
					checkCalls(t, svc, 3)
				})
				t.Run("gone, once the deletes end", func(t *testing.T) {
					svc := newService("o1", "o2", "o3")
					svc.deleteOnePerListing("o1", "o2")
					s, _ := newSnapshot(svc, lifetime)
					if ok, err := find(s); ok || err != nil {
						t.Errorf("found x: %v, %v; want a settled miss of a link the service does not have", ok, err)
					}
					checkCalls(t, svc, 4) // o1 and o2 went during the first two: the fourth holds all the third did
				})
				t.Run("deletes under way the whole time", func(t *testing.T) {
					svc := newService("o1", "o2", "o3", "o4", "o5", "o6")
					svc.deleteOnePerListing("o1", "o2", "o3", "o4", "o5", "o6")
					s, _ := newSnapshot(svc, lifetime)
					if ok, err := find(s); ok || !errors.Is(err, ErrListingsShifted) {
						t.Errorf("found x: %v, %v; want ErrListingsShifted", ok, err)
					}
					checkCalls(t, svc, MaxLooks)
				})
			})
		}
	}
}

// FindSince looks only in listings started after its mark: a link made
// after the current listing is found by the next one.
func TestSnapshotFindSinceLooksOnlyAfterItsMark(t *testing.T) {
	svc := newService("a")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.set(func(svc *service) { svc.links = append(svc.links, link("x", "https://example.com/x")) })
	if _, ok, err := s.FindSince(context.Background(), s.Mark(), func(l client.Listing) (client.Link, bool) { return l.Get("x") }); !ok || err != nil {
		t.Errorf("FindSince(x) = %v, %v; want the link made after the current listing", ok, err)
	}
	checkCalls(t, svc, 2)
}

// A link only a listing before the settled pair held was deleted: Links
// leaves it out. And this provider's own deletes, made after a listing
// ended, shifted none of its pages: they do not keep a miss from settling.
func TestSnapshotLinksLeavesOutWhatASettledListingLacks(t *testing.T) {
	for name, lifetime := range map[string]time.Duration{"shared": lifetime, "lifetime 0": 0} {
		t.Run(name, func(t *testing.T) {
			svc := newService("a", "o1", "x")
			svc.deleteOnePerListing("o1")
			s, _ := newSnapshot(svc, lifetime)
			if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "x"}) {
				t.Errorf("Links = %v, want [a x]: o1 was deleted while the first listing was taken", got)
			}
			checkCalls(t, svc, 3)
		})
	}
	t.Run("our delete after the listing that missed", func(t *testing.T) {
		svc := newService("a", "b")
		s, _ := newSnapshot(svc, lifetime)
		mustGet(t, s, "a")
		svc.remove(s, "b") // an apply's delete, once the listing has ended
		expectMissing(t, s, "gone", "a link the service does not have")
		checkCalls(t, svc, 2)
	})
}

func TestSnapshotMissingLinkIsConfirmedGone(t *testing.T) {
	svc := newService("a")
	s, clk := newSnapshot(svc, lifetime)
	expectMissing(t, s, "x", "a link the service does not have")
	checkCalls(t, svc, 2)

	// Later, from a fresh listing: one more to confirm.
	mustGet(t, s, "a")
	checkCalls(t, svc, 2)
	expectMissing(t, s, "y", "a link the service does not have")
	checkCalls(t, svc, 3)
	clk.Advance(lifetime)
	expectMissing(t, s, "y", "a link the service does not have")
	checkCalls(t, svc, 5)
}

// Concurrent misses share one confirming listing.
func TestSnapshotConcurrentMissesShareOneListing(t *testing.T) {
	svc := newService("a")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.holdListings()

	const n = 50
	errs := make(chan error, n)
	startAll(n, func(i int) {
		id := fmt.Sprintf("gone%d", i)
		_, ok, err := s.Get(context.Background(), id)
		if err == nil && ok {
			err = fmt.Errorf("Get(%q) found a link the service does not have", id)
		}
		errs <- err
	})
	if got := testsupport.Receive(t, svc.started, "a confirming listing to start"); got != 2 {
		t.Errorf("listing %d started, want 2", got)
	}
	waitCallers(t, s, n)
	close(svc.hold)
	for range n {
		if err := testsupport.Receive(t, errs, "a Get"); err != nil {
			t.Error(err)
		}
	}
	checkCalls(t, svc, 2)
}

// A link this provider deleted is known to be gone: no listing confirms it,
// even after the lifetime.
func TestSnapshotRemovedLinkNeedsNoConfirmation(t *testing.T) {
	svc := newService("a", "b")
	s, clk := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.remove(s, "b")
	expectMissing(t, s, "b", "a removed link")
	checkCalls(t, svc, 1)
	clk.Advance(lifetime)
	expectMissing(t, s, "b", "a removed link after the lifetime")
	checkCalls(t, svc, 2) // the refresh only

	// Put again (the same ID re-created): a miss is confirmed again.
	s.Put(link("b", "https://example.com/b"))
	clk.Advance(lifetime)
	expectMissing(t, s, "b", "a link the service does not have")
	checkCalls(t, svc, 4)
}

// Links returns a link a listing skipped, in the service's order, those
// only the later listing has last. A listing that lacks a link the one
// before held (y: deleted while that one was taken, or skipped) is followed
// by another, until one holds every link of the one before: the union of
// those two is every link (a link only listings before them hold was
// deleted).
func TestSnapshotLinksIsTheUnionOfItsListings(t *testing.T) {
	svc := newService("a", "x", "y", "z")
	svc.omit = map[int][]string{1: {"x"}, 2: {"y"}}
	s, _ := newSnapshot(svc, lifetime)
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "x", "z", "y"}) {
		t.Errorf("Links = %v, want [a x z y]", got)
	}
	checkCalls(t, svc, 3)
	// The third listing is the current one: x and y are served.
	mustGet(t, s, "x")
	mustGet(t, s, "y")
	checkCalls(t, svc, 3)

	// Links deleted while every listing is taken: no listing settles.
	svc.deleteOnePerListing("a", "x", "y", "z")
	s, _ = newSnapshot(svc, lifetime)
	if _, err := s.Links(context.Background()); !errors.Is(err, ErrListingsShifted) {
		t.Errorf("Links while links are deleted during every listing: %v, want ErrListingsShifted", err)
	}
	checkCalls(t, svc, 3+MaxLooks)
	// A second call of the same command is served the same union, and warned
	// the same, with no listing more.
	if _, err := s.Links(context.Background()); !errors.Is(err, ErrListingsShifted) {
		t.Errorf("Links served again: %v, want ErrListingsShifted", err)
	}
	checkCalls(t, svc, 3+MaxLooks)
}

// A link only the first listing has is left out when this provider removed
// it while the second listing ran.
func TestSnapshotLinksLeavesOutLinksRemovedMeanwhile(t *testing.T) {
	svc := newService("a", "b", "c")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.set(func(svc *service) { svc.during = func() { svc.remove(s, "b") } })
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Links = %v, want [a c]", got)
	}
	checkCalls(t, svc, 2)
}

// Links shares its confirming listing with concurrent misses.
func TestSnapshotLinksSharesTheConfirmingListing(t *testing.T) {
	svc := newService("a", "b")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.holdListings()
	const n = 10
	done := make(chan struct{}, n)
	startAll(n, func(i int) {
		if i%2 == 0 {
			linkIDs(t, s)
		} else if _, ok := mustGet(t, s, "gone"); ok {
			t.Error("Get(gone) found a link the service does not have")
		}
		done <- struct{}{}
	})
	testsupport.Receive(t, svc.started, "a confirming listing to start")
	waitCallers(t, s, n)
	close(svc.hold)
	for range n {
		testsupport.Receive(t, done, "a call")
	}
	checkCalls(t, svc, 2)
}

func TestSnapshotLifetimeZeroConfirmsMisses(t *testing.T) {
	svc := newService("a", "x", "y")
	svc.omit = map[int][]string{1: {"x"}, 3: {"x"}, 4: {"y"}}
	s, _ := newSnapshot(svc, 0)
	if _, ok := mustGet(t, s, "x"); !ok {
		t.Error("Get(x) did not find the link the first listing skipped")
	}
	checkCalls(t, svc, 2)
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "x", "y"}) { // the fourth and fifth
		t.Errorf("Links = %v, want [a x y]", got)
	}
	checkCalls(t, svc, 5) // the fourth lacks y, which the third held: a fifth holds all
	expectMissing(t, s, "gone", "a link the service does not have")
	checkCalls(t, svc, 7)
}

// BySlug finds a link that one listing skipped (a page shifted under it)
// by confirming the miss with another, and a slug that is free costs one
// more listing to confirm.
func TestSnapshotBySlugConfirmsAMiss(t *testing.T) {
	svc := newService("a", "x", "b")
	svc.omit = map[int][]string{1: {"x"}}
	s, _ := newSnapshot(svc, lifetime)
	l, ok, err := s.BySlug(context.Background(), "", "x")
	if err != nil || !ok || l.ID != "x" {
		t.Fatalf("BySlug(x) = %+v, %v, %v; want the link the first listing skipped", l, ok, err)
	}
	checkCalls(t, svc, 2)
	if _, ok, err := s.BySlug(context.Background(), "", "nope"); err != nil || ok {
		t.Fatalf("BySlug(nope) = %v, %v; want not found", ok, err)
	}
	checkCalls(t, svc, 3) // the miss was confirmed by one more listing
}

// A link this provider deleted holds its slug no more: BySlug does not
// find it in the listing the delete came after, which still has it (a
// data source reading the slug in the apply that deleted its link).
func TestSnapshotBySlugLeavesOutARemovedLink(t *testing.T) {
	svc := newService("a", "b")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")
	svc.remove(s, "b")
	if l, ok, err := s.BySlug(context.Background(), "", "b"); err != nil || ok {
		t.Fatalf("BySlug(b) = %+v, %v, %v; want the deleted link's slug free", l, ok, err)
	}
}

func TestSnapshotCurrentNeedsNoConfirmation(t *testing.T) {
	svc := newService("a", "x", "b")
	svc.omit = map[int][]string{1: {"x"}}
	s, _ := newSnapshot(svc, lifetime)
	links, err := s.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := links.Len(); got != 2 {
		t.Fatalf("Current listed %d links, want the first listing's 2", got)
	}
	checkCalls(t, svc, 1)
	if _, err := s.Current(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, svc, 1) // served from the fresh listing
}

// A listing the service gave in one answer can have skipped no link, so
// Links returns it alone; a listing of several pages gets its second
// listing. Against the emulator, through the client, which alone knows
// how many answers a listing took.
func TestSnapshotLinksListsOnceWhenOneAnswerHeldThemAll(t *testing.T) {
	for name, tc := range map[string]struct {
		paging       string
		wantRequests int
	}{
		"one answer": {"none", 1},
		"two pages":  {"cursor", 4}, // two listings of two pages
	} {
		t.Run(name, func(t *testing.T) {
			svc := testsupport.Start(t, testsupport.Options{Settings: func(s *emulator.Settings) {
				s.Variants.Paging, s.Variants.PageSize = tc.paging, 2
			}})
			if _, err := svc.Server.SeedLinks(svc.Fixture.DomainID, "seeded", 3); err != nil {
				t.Fatal(err)
			}
			c, err := client.New(client.Config{BaseURL: svc.URL, APIKey: svc.Fixture.APIKey})
			if err != nil {
				t.Fatal(err)
			}
			links, err := New(c.ListLinks, lifetime).Links(context.Background())
			if err != nil || links.Len() != 3 {
				t.Fatalf("Links: %v links, error %v; want 3", links, err)
			}
			if n := svc.Server.Count("GET", "/api/links"); n != tc.wantRequests {
				t.Errorf("%d list requests, want %d", n, tc.wantRequests)
			}
		})
	}
}

// A search's miss in a listing the service gave in one answer is settled
// by that listing: a create whose answer was lost is sent again after one
// listing, not two. Against the emulator, as above.
func TestSnapshotFindSinceMissInOneAnswerListsOnce(t *testing.T) {
	svc := testsupport.Start(t, testsupport.Options{})
	if _, err := svc.Server.SeedLinks(svc.Fixture.DomainID, "seeded", 3); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(client.Config{BaseURL: svc.URL, APIKey: svc.Fixture.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	s := New(c.ListLinks, lifetime)
	_, ok, err := s.FindSince(context.Background(), s.Mark(), func(l client.Listing) (client.Link, bool) { return l.Get("missing") })
	if ok || err != nil {
		t.Fatalf("FindSince = %v, %v; want a settled miss", ok, err)
	}
	if n := svc.Server.Count("GET", "/api/links"); n != 1 {
		t.Errorf("%d list requests, want 1", n)
	}
}

// Since serves a listing started after the mark: not the current one, nor
// one in flight that started before, but the next, which callers marking
// at once share; a caller whose mark precedes the current listing takes it.
func TestSnapshotSinceWaitsForAListingStartedAfterTheMark(t *testing.T) {
	svc := newService("a")
	s, _ := newSnapshot(svc, lifetime)
	ctx := context.Background()
	if _, err := s.Links(ctx); err != nil { // a current listing, started before the mark
		t.Fatal(err)
	}
	before := svc.listCalls()
	mark := s.Mark()
	svc.set(func(svc *service) { svc.links = append(svc.links, link("b", "https://example.com/b")) })
	const n = 10
	done := make(chan error, n)
	startAll(n, func(int) {
		listed, err := s.Since(ctx, mark)
		if _, ok := listed.Get("b"); err == nil && !ok {
			err = errors.New("the listing lacks link b, made after the mark")
		}
		done <- err
	})
	for range n {
		if err := testsupport.Receive(t, done, "a Since"); err != nil {
			t.Error(err)
		}
	}
	if got := svc.listCalls() - before; got != 1 {
		t.Errorf("%d listings for %d callers marking at once, want 1", got, n)
	}
	if _, err := s.Since(ctx, mark); err != nil || svc.listCalls()-before != 1 {
		t.Errorf("a caller whose mark precedes the current listing listed again (%d listings): %v", svc.listCalls()-before, err)
	}
}
