package snapshot

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"

	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
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

func (s *service) list(ctx context.Context) ([]client.Link, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	// The listing shows the account as it was when the request arrived.
	links := append([]client.Link(nil), s.links...)
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
	return links, nil
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

// linkIDs lists the IDs of the snapshot's Links (it may run in any
// goroutine).
func linkIDs(t *testing.T, s *Snapshot) []string {
	t.Helper()
	links, err := s.Links(context.Background())
	if err != nil {
		t.Errorf("Links: %v", err)
	}
	ids := []string{}
	for _, l := range links {
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

// receive takes a value from ch, failing the test rather than hanging when
// none comes.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// startAll starts f(0) … f(n-1) in goroutines and returns once each has
// started, after a grace period for them to reach the snapshot and queue
// behind a listing held in flight.
func startAll(n int, f func(i int)) {
	var ready sync.WaitGroup
	for i := range n {
		ready.Add(1)
		go func() {
			ready.Done()
			f(i)
		}()
	}
	ready.Wait()
	time.Sleep(20 * time.Millisecond)
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
	svc.hold = make(chan struct{})
	svc.started = make(chan int, 64)
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
	receive(t, svc.started, "a listing to start")
	time.Sleep(10 * time.Millisecond) // let the others queue behind the listing
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
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Links = %v", got)
	}
	checkCalls(t, svc, 1)

	// After the lifetime: one more listing, shared again.
	clk.Advance(time.Second)
	inParallel(n, func(int) { mustGet(t, s, "b") })
	checkCalls(t, svc, 2)
	mustGet(t, s, "c")
	checkCalls(t, svc, 2)
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
	checkCalls(t, svc, 2)
}

// A listing slower than the lifetime still serves every caller that waited
// for it: they must not list again one after the other.
func TestSnapshotSlowListingServesItsWaiters(t *testing.T) {
	svc := newService("a")
	svc.hold = make(chan struct{})
	svc.started = make(chan int, 64)
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
	receive(t, svc.started, "a listing to start")
	svc.set(func(svc *service) { svc.during = nil })
	close(svc.hold)
	for range n {
		if err := receive(t, done, "a Get"); err != nil {
			t.Error(err)
		}
	}
	if got := svc.listCalls(); got != 1 {
		t.Errorf("%d list calls for one round of concurrent Gets, want 1", got)
	}
}

func TestSnapshotPutAndRemoveNeedNoListing(t *testing.T) {
	svc := newService("a", "b")
	s, _ := newSnapshot(svc, lifetime)
	mustGet(t, s, "a")

	s.Put(link("c", "https://example.com/c"))
	s.Put(link("a", "https://example.com/changed"))
	s.Remove("b")

	if l, ok := mustGet(t, s, "c"); !ok || l.Destination != "https://example.com/c" {
		t.Errorf("Get(c) = %+v, %v, want the link put", l, ok)
	}
	if l, ok := mustGet(t, s, "a"); !ok || l.Destination != "https://example.com/changed" {
		t.Errorf("Get(a) = %+v, %v, want the changed link", l, ok)
	}
	if _, ok := mustGet(t, s, "b"); ok {
		t.Error("Get(b) found a removed link")
	}
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "c"}) {
		t.Errorf("Links = %v, want [a c]", got)
	}
	s.Remove("nope") // removing an unknown link is harmless
	checkCalls(t, svc, 1)
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
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"new"}) {
		t.Errorf("Links = %v, want [new]", got)
	}
	checkCalls(t, svc, 1)
}

// The listing in flight shows the account as it was when it started; the
// writes made meanwhile are replayed on top of it.
func TestSnapshotWritesDuringListingAreReplayed(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(fmt.Sprintf("refresh=%v", stale), func(t *testing.T) {
			svc := newService("a", "b", "c")
			s, clk := newSnapshot(svc, lifetime)
			if stale {
				mustGet(t, s, "a")
				clk.Advance(lifetime)
			}
			svc.set(func(svc *service) {
				svc.hold = make(chan struct{})
				svc.started = make(chan int, 64)
			})
			got := make(chan error, 1)
			go func() {
				_, err := s.Links(context.Background())
				got <- err
			}()
			receive(t, svc.started, "a listing to start")

			// The service carries these out; the listing in flight predates them.
			s.Put(link("d", "https://example.com/d"))
			s.Put(link("a", "https://example.com/changed"))
			s.Remove("b")
			s.Put(link("e", "https://example.com/e"))
			s.Remove("e")
			close(svc.hold)
			if err := receive(t, got, "Links"); err != nil {
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
			if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "c", "d"}) {
				t.Errorf("Links = %v, want [a c d]", got)
			}
			checkCalls(t, svc, map[bool]int{false: 1, true: 2}[stale])

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
	for i := range 3 {
		if _, ok := mustGet(t, s, "a"); !ok {
			t.Fatal("Get(a) found nothing")
		}
		checkCalls(t, svc, 2*i+1)
		if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("Links = %v", got)
		}
		checkCalls(t, svc, 2*i+2)
	}
	if _, ok := mustGet(t, s, "zzz"); ok {
		t.Error("Get(zzz) found a link")
	}
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
	svc.hold = make(chan struct{})
	svc.started = make(chan int, 64)
	s, _ := newSnapshot(svc, lifetime)

	const n = 10
	errs := make(chan error, n)
	startAll(n, func(int) {
		_, _, err := s.Get(context.Background(), "a")
		errs <- err
	})
	receive(t, svc.started, "a listing to start")
	close(svc.hold)
	for range n {
		if err := receive(t, errs, "a Get"); !errors.Is(err, boom) {
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
	checkCalls(t, svc, 3)
}

func TestSnapshotCancelledLeaderDoesNotFailWaiters(t *testing.T) {
	svc := newService("a")
	svc.hold = make(chan struct{})
	svc.started = make(chan int, 64)
	s, _ := newSnapshot(svc, lifetime)

	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leader := make(chan error, 1)
	go func() {
		_, _, err := s.Get(leaderCtx, "a")
		leader <- err
	}()
	if n := receive(t, svc.started, "a listing to start"); n != 1 {
		t.Fatalf("listing %d started first", n)
	}
	waiter := make(chan error, 1)
	startAll(1, func(int) {
		_, ok, err := s.Get(context.Background(), "a")
		if err == nil && !ok {
			err = errors.New("link a not found")
		}
		waiter <- err
	})
	cancelLeader()
	if err := receive(t, leader, "the leader"); !errors.Is(err, context.Canceled) {
		t.Errorf("leader: %v, want context.Canceled", err)
	}
	// The waiter lists again, with its own context.
	select {
	case n := <-svc.started:
		if n != 2 {
			t.Errorf("listing %d started, want 2", n)
		}
	case err := <-waiter:
		t.Fatalf("the waiter returned %v without listing again", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not list again")
	}
	close(svc.hold)
	if err := receive(t, waiter, "the waiter"); err != nil {
		t.Errorf("waiter: %v", err)
	}
	checkCalls(t, svc, 2)
}

func TestSnapshotCancelledWaiterReturnsPromptly(t *testing.T) {
	svc := newService("a")
	svc.hold = make(chan struct{})
	svc.started = make(chan int, 64)
	s, _ := newSnapshot(svc, lifetime)
	leader := make(chan error, 1)
	go func() {
		_, _, err := s.Get(context.Background(), "a")
		leader <- err
	}()
	receive(t, svc.started, "a listing to start")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, _, err := s.Get(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiter: %v, want context.DeadlineExceeded", err)
	}
	close(svc.hold)
	if err := receive(t, leader, "the leader"); err != nil {
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
	s.Put(link("d", "https://example.com/d"))  // newest: last
	s.Put(link("a", "https://example.com/a2")) // changed: stays in place
	s.Remove("c")
	if got := linkIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "d"}) {
		t.Errorf("Links = %v, want [a b d]", got)
	}
	// A link removed and put again (the same ID re-created) appears once,
	// as the newest.
	s.Remove("b")
	s.Put(link("b", "https://example.com/b3"))
	s.Put(link("b", "https://example.com/b4"))
	links, err := s.Links(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range links {
		ids = append(ids, l.ID)
	}
	if !reflect.DeepEqual(ids, []string{"a", "d", "b"}) {
		t.Errorf("Links = %v, want [a d b]", ids)
	}
	if last := links[len(links)-1]; last.Destination != "https://example.com/b4" {
		t.Errorf("Links ends with %+v, want the last put", last)
	}

	// The slice returned is the caller's.
	links[0].Destination = "mutated"
	if l, _ := mustGet(t, s, "a"); l.Destination != "https://example.com/a2" {
		t.Errorf("Get(a) = %+v after the caller changed Links' result", l)
	}
	checkCalls(t, svc, 1)
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
