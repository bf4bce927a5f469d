package emulator

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRateLimitWindows(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits = Limits{Write: 3, Read: 4, Window: Duration(10 * time.Second)} })
	second, err := e.srv.AddKey(e.fx.AccountID, ScopeRead, ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	create := func(key string) *response {
		return e.do(t, http.MethodPost, "/api/links", key, e.createBody("https://example.com/"))
	}
	headers := func(t *testing.T, r *response, limit, remaining, reset int) {
		t.Helper()
		if l, rem, res := wantRateHeaders(t, r); l != limit || rem != remaining || res != reset {
			t.Errorf("X-RateLimit limit/remaining/reset = %d/%d/%d, want %d/%d/%d", l, rem, res, limit, remaining, reset)
		}
	}

	// Remaining counts down in the write window of the first key.
	for i := range 3 {
		r := create(e.fx.APIKey)
		wantStatus(t, r, http.StatusCreated)
		headers(t, r, 3, 2-i, 10)
	}
	r := create(e.fx.APIKey)
	wantError(t, r, http.StatusTooManyRequests, "rate_limited", "")
	headers(t, r, 3, 0, 10)
	if got := r.Header.Get("Retry-After"); got != "10" {
		t.Errorf("Retry-After = %q, want 10", got)
	}

	// Reads have a window of their own, and so has every key.
	r = e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusOK)
	headers(t, r, 4, 3, 10)
	r = create(second)
	wantStatus(t, r, http.StatusCreated)
	headers(t, r, 3, 2, 10)

	// Retry-After is the ceiling of the seconds left.
	e.clock.Advance(2500 * time.Millisecond)
	for range 3 { // refused requests consume nothing and move nothing
		r = create(e.fx.APIKey)
		wantStatus(t, r, http.StatusTooManyRequests)
		headers(t, r, 3, 0, 8)
		if got := r.Header.Get("Retry-After"); got != "8" {
			t.Errorf("Retry-After = %q, want 8 (ceil of 7.5 s)", got)
		}
	}
	e.clock.Advance(7499 * time.Millisecond)
	r = create(e.fx.APIKey)
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After 1 ms before the reset = %q, want 1", got)
	}

	// At the reset the whole next window is available: the 429s above did not
	// consume any of it.
	e.clock.Advance(time.Millisecond)
	for i := range 3 {
		r := create(e.fx.APIKey)
		wantStatus(t, r, http.StatusCreated)
		headers(t, r, 3, 2-i, 10)
	}
	wantStatus(t, create(e.fx.APIKey), http.StatusTooManyRequests)

	if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusCreated); got != 7 {
		t.Errorf("201 count = %d, want 7", got)
	}
	if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusTooManyRequests); got != 6 {
		t.Errorf("429 count = %d, want 6", got)
	}
}

// The window runs on the real clock as well. It is a second long so that
// the second request falls in it even when a loaded machine stalls.
func TestRateLimitWindowRealTime(t *testing.T) {
	e := newEnvWith(t, Options{Settings: testSettings(func(s *Settings) {
		s.Limits = Limits{Write: 1, Read: 1, Window: Duration(time.Second)}
	}), Now: time.Now})
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
	r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	if got := r.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1 (rounded up)", got)
	}
	time.Sleep(1100 * time.Millisecond)
	wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
}

func TestLimitsChangeAtRuntime(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits = Limits{Write: 5, Read: 5, Window: Duration(time.Minute)} })
	for range 3 {
		wantStatus(t, e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil), http.StatusOK)
	}
	if err := e.srv.UpdateSettings(func(s *Settings) { s.Limits.Read = 2 }); err != nil {
		t.Fatal(err)
	}
	r := e.do(t, http.MethodGet, "/api/links", e.fx.APIKey, nil)
	wantStatus(t, r, http.StatusTooManyRequests)
	if l, rem, _ := wantRateHeaders(t, r); l != 2 || rem != 0 {
		t.Errorf("limit/remaining = %d/%d, want 2/0", l, rem)
	}
}

// parallel runs f(g, i) for i in [0, per) in each of n goroutines.
func parallel(n, per int, f func(g, i int)) {
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				f(g, i)
			}
		}()
	}
	wg.Wait()
}

func TestParallelCreatesUnderRateLimit(t *testing.T) {
	e := newEnv(t, func(s *Settings) { s.Limits = Limits{Write: 120, Read: 600, Window: Duration(time.Minute)} })
	var mu sync.Mutex
	statuses := map[int]int{}
	var created []map[string]any
	var errs []error
	parallel(50, 4, func(g, i int) {
		r, err := e.try(http.MethodPost, "/api/links", e.fx.APIKey, e.createBody(fmt.Sprintf("https://example.com/%d/%d", g, i)))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs = append(errs, err)
			return
		}
		statuses[r.Status]++
		if r.Status == http.StatusCreated {
			created = append(created, r.object(t))
		}
	})
	if len(errs) > 0 {
		t.Fatalf("transport errors: %v", errs)
	}
	if statuses[201] != 120 || statuses[429] != 80 || len(statuses) != 2 {
		t.Fatalf("statuses = %v, want 120×201 and 80×429", statuses)
	}
	wantUnique(t, created, 120)
	stored := e.srv.Links(e.fx.AccountID)
	if len(stored) != 120 {
		t.Errorf("%d links stored, want 120", len(stored))
	}
	for _, l := range stored {
		if !containsID(created, l.ID) {
			t.Errorf("stored link %s was never answered", l.ID)
		}
	}
	for status, want := range map[int]int{201: 120, 429: 80} {
		if got := e.srv.Count(http.MethodPost, "/api/links", status); got != want {
			t.Errorf("Count(POST, /api/links, %d) = %d, want %d", status, got, want)
		}
	}
	if got := e.srv.TotalRequests(); got != 200 {
		t.Errorf("TotalRequests = %d, want 200", got)
	}
	if got := e.srv.CountStatus(http.StatusTooManyRequests); got != 80 {
		t.Errorf("CountStatus(429) = %d, want 80", got)
	}
}

func TestParallelCreatesAllStored(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.UpdateSettings(func(s *Settings) { s.Limits.Write = 1000 }); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var created []map[string]any
	parallel(200, 1, func(g, _ int) {
		r, err := e.try(http.MethodPost, "/api/links", e.fx.APIKey, e.createBody(fmt.Sprintf("https://example.com/%d", g)))
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("create %d: %v", g, err)
			return
		}
		if r.Status != http.StatusCreated {
			t.Errorf("create %d: %s", g, r)
			return
		}
		created = append(created, r.object(t))
	})
	wantUnique(t, created, 200)
	if n := len(e.srv.Links(e.fx.AccountID)); n != 200 {
		t.Errorf("%d links stored, want 200", n)
	}
	if got := len(e.list(t)); got != 200 {
		t.Errorf("list has %d links, want 200", got)
	}
	if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusCreated); got != 200 {
		t.Errorf("Count(POST, 201) = %d, want 200", got)
	}
}

// Parallel creates of one slug: exactly one wins.
func TestParallelSameSlug(t *testing.T) {
	e := newEnv(t)
	statuses := e.parallelCreates(t, 20, "slug", "contested")
	if statuses[201] != 1 || statuses[409] != 19 {
		t.Errorf("statuses = %v, want 1×201 and 19×409", statuses)
	}
	if n := len(e.srv.Links(e.fx.AccountID)); n != 1 {
		t.Errorf("%d links stored, want 1", n)
	}
}

// Parallel creates against a monthly quota never exceed it.
func TestParallelQuota(t *testing.T) {
	e := newEnv(t)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 25); err != nil {
		t.Fatal(err)
	}
	statuses := e.parallelCreates(t, 40)
	if statuses[201] != 25 || statuses[402] != 15 {
		t.Errorf("statuses = %v, want 25×201 and 15×402", statuses)
	}
}

// parallelCreates sends n creates of https://example.com/ with the extra
// fields at once and counts the answers by status.
func (e *env) parallelCreates(t *testing.T, n int, extra ...any) map[int]int {
	t.Helper()
	var mu sync.Mutex
	statuses := map[int]int{}
	parallel(n, 1, func(int, int) {
		r, err := e.try(http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/", extra...))
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		statuses[r.Status]++
		mu.Unlock()
	})
	return statuses
}

func wantUnique(t *testing.T, links []map[string]any, n int) {
	t.Helper()
	if len(links) != n {
		t.Errorf("%d links answered, want %d", len(links), n)
	}
	seenID, seenSlug := map[string]bool{}, map[string]bool{}
	for _, l := range links {
		id, slug := str(l["id"]), str(l["slug"])
		if seenID[id] || seenSlug[slug] {
			t.Errorf("duplicate id %s or slug %s", id, slug)
		}
		seenID[id], seenSlug[slug] = true, true
	}
}

func containsID(links []map[string]any, id string) bool {
	for _, l := range links {
		if l["id"] == id {
			return true
		}
	}
	return false
}

// Each rate-limit model counts as it says, and its headers say what a
// client needs: Remaining, what may be sent now; Reset (and Retry-After on
// a 429), how long until the allowance next grows, 0 when it is whole.
// A limit of 2 per 10 s; times are offsets from a start 3 s past a turn of
// the clock.
func TestRateLimitModels(t *testing.T) {
	type step struct {
		at           time.Duration // since the start
		allowed      bool
		remaining    int
		reset, retry time.Duration
	}
	const s = time.Second
	for model, steps := range map[string][]step{
		ModelFirstRequest: { // windows start at a request
			{0, true, 1, 10 * s, 0},
			{1 * s, true, 0, 9 * s, 9 * s},
			{2 * s, false, 0, 8 * s, 8 * s},
			{10 * s, true, 1, 10 * s, 0},
		},
		ModelClock: { // windows turn at 10 s, 20 s … of the clock: 7 s, 17 s … after the start
			{0, true, 1, 7 * s, 0},
			{1 * s, true, 0, 6 * s, 6 * s},
			{6 * s, false, 0, 1 * s, 1 * s},
			{7 * s, true, 1, 10 * s, 0},
		},
		ModelSliding: { // a request leaves the count 10 s after it was allowed
			{0, true, 1, 10 * s, 0},
			{4 * s, true, 0, 10 * s, 6 * s},
			{5 * s, false, 0, 9 * s, 5 * s},
			{10 * s, true, 0, 10 * s, 4 * s},
			{14 * s, true, 0, 10 * s, 6 * s},
		},
		ModelBucket: { // full at first; one token every 5 s
			{0, true, 1, 5 * s, 0},
			{0, true, 0, 10 * s, 5 * s},
			{2 * s, false, 0, 8 * s, 3 * s},
			{5 * s, true, 0, 10 * s, 5 * s},
			{20 * s, true, 1, 5 * s, 0},
		},
	} {
		t.Run(model, func(t *testing.T) {
			rl := newRateLimiter()
			limits := Limits{Write: 2, Read: 2, Window: Duration(10 * time.Second), Model: model}
			start := time.Date(2027, 1, 5, 12, 0, 3, 0, time.UTC)
			for _, st := range steps {
				d := rl.take("key", classWrite, limits, start.Add(st.at))
				if d.allowed != st.allowed || d.remaining != st.remaining || d.reset != st.reset || d.retry != st.retry {
					t.Errorf("at %s: allowed %v, remaining %d, reset %s, retry %s; want %v, %d, %s, %s",
						st.at, d.allowed, d.remaining, d.reset, d.retry, st.allowed, st.remaining, st.reset, st.retry)
				}
			}
			if p := rl.peek("other", classWrite, limits, start); p.remaining != 2 || !p.allowed || p.retry != 0 {
				t.Errorf("an unused key: remaining %d, retry %s; want the whole limit at once", p.remaining, p.retry)
			}
		})
	}
}

// Reset and Retry-After are whole seconds, made so as Limits.Rounding
// says: 2.5 s left is 3 rounded up (the default), 2 down or to the
// nearest; 0.4 s left is 1, 0 and 0.
func TestRateLimitRounding(t *testing.T) {
	for rounding, want := range map[string][2]string{
		"": {"3", "1"}, RoundUp: {"3", "1"}, RoundDown: {"2", "0"}, RoundNearest: {"3", "0"},
	} {
		t.Run(cmp.Or(rounding, "default"), func(t *testing.T) {
			e := newEnv(t, func(s *Settings) {
				s.Limits = Limits{Write: 1, Read: 100, Window: Duration(3 * time.Second), Rounding: rounding}
			})
			create := func() *response {
				return e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
			}
			wantStatus(t, create(), http.StatusCreated)
			// The window turns 3 s after the first create: 0.5 s later 2.5 s
			// are left, 2.1 s later still 0.4 s.
			for i, advance := range []time.Duration{500 * time.Millisecond, 2100 * time.Millisecond} {
				e.clock.Advance(advance)
				r := create()
				wantStatus(t, r, http.StatusTooManyRequests)
				if reset, retry := r.Header.Get("X-RateLimit-Reset"), r.Header.Get("Retry-After"); reset != want[i] || retry != want[i] {
					t.Errorf("refusal %d: Reset %q, Retry-After %q; want %q for both", i+1, reset, retry, want[i])
				}
			}
		})
	}
}

// X-RateLimit-Remaining counts the request answered by default; counted
// before, a fresh window says the whole limit, and a refusal 0 either way.
func TestRateLimitRemainingBefore(t *testing.T) {
	for counted, want := range map[string][]int{"": {1, 0, 0}, RemainingAfter: {1, 0, 0}, RemainingBefore: {2, 1, 0}} {
		t.Run(cmp.Or(counted, "default"), func(t *testing.T) {
			e := newEnv(t, func(s *Settings) {
				s.Limits = Limits{Write: 2, Read: 100, Window: Duration(10 * time.Second), Remaining: counted}
			})
			for i, status := range []int{http.StatusCreated, http.StatusCreated, http.StatusTooManyRequests} {
				r := e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
				wantStatus(t, r, status)
				if _, remaining, _ := wantRateHeaders(t, r); remaining != want[i] {
					t.Errorf("request %d: X-RateLimit-Remaining %d, want %d", i+1, remaining, want[i])
				}
			}
		})
	}
}

// X-RateLimit-Reset counts to the whole allowance by default; set to
// count to the next unit, it says when one more request would be allowed
// on a sliding window or a bucket, and the end of the window on fixed ones.
func TestRateLimitResetNext(t *testing.T) {
	for _, tt := range []struct {
		model       string
		window      time.Duration
		whole, next string
	}{
		// Three requests a second apart of 4 per 4 s: the newest leaves
		// the sliding window 4 s after the third, the oldest 2 s after.
		{ModelSliding, 4 * time.Second, "4", "2"},
		// The bucket of 4 refills a token every 2 s and holds 2 after the
		// third: whole in 4 s, one more in 2.
		{ModelBucket, 8 * time.Second, "4", "2"},
		// The first request opened a 4 s window 2 s before the third.
		{ModelFirstRequest, 4 * time.Second, "2", "2"},
	} {
		for reading, want := range map[string]string{"": tt.whole, ResetWhole: tt.whole, ResetNext: tt.next} {
			t.Run(tt.model+"/"+cmp.Or(reading, "default"), func(t *testing.T) {
				e := newEnv(t, func(s *Settings) {
					s.Limits = Limits{Write: 4, Read: 100, Window: Duration(tt.window), Model: tt.model, Reset: reading}
				})
				var r *response
				for i := range 3 {
					if i > 0 {
						e.clock.Advance(time.Second)
					}
					r = e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/"))
					wantStatus(t, r, http.StatusCreated)
				}
				if got := r.Header.Get("X-RateLimit-Reset"); got != want {
					t.Errorf("X-RateLimit-Reset %q after the third request, want %q", got, want)
				}
			})
		}
	}
}

// A model, a rounding, a count or a reset the emulator does not know is
// refused with the setting's name.
func TestRateLimitSettingsValidated(t *testing.T) {
	for name, set := range map[string]func(*Limits){
		"limits.model":     func(l *Limits) { l.Model = "leaky" },
		"limits.rounding":  func(l *Limits) { l.Rounding = "sideways" },
		"limits.remaining": func(l *Limits) { l.Remaining = "during" },
		"limits.reset":     func(l *Limits) { l.Reset = "soon" },
	} {
		s := DefaultSettings()
		set(&s.Limits)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Validate = %v, want an error naming %s", err, name)
		}
	}
}

// A request whose clock was read before one already counted counts after
// it, as at a real counter, and a look at any time changes nothing: on a
// sliding window a look ahead lets in no request the window still holds,
// and a late clock takes back no part of a bucket's refill.
func TestRateLimitTimeNeverRunsBack(t *testing.T) {
	const s = time.Second
	start := time.Date(2027, 1, 5, 12, 0, 3, 0, time.UTC)
	for _, model := range []string{ModelFirstRequest, ModelClock, ModelSliding, ModelBucket} {
		t.Run(model, func(t *testing.T) {
			rl := newRateLimiter()
			limits := Limits{Write: 2, Read: 2, Window: Duration(10 * s), Model: model}
			rl.take("key", classWrite, limits, start)
			rl.take("key", classWrite, limits, start.Add(s))
			if p := rl.peek("key", classWrite, limits, start.Add(11*s)); !p.allowed {
				t.Fatalf("a look 11 s on: refused; want allowed")
			}
			if d := rl.take("key", classWrite, limits, start.Add(2*s)); d.allowed {
				t.Errorf("after a look ahead, a third request within the window: allowed, %d remaining; want refused", d.remaining)
			}
			if model != ModelBucket {
				return
			}
			// One token back every 5 s: whole at 15 s, and a clock read at 14 s
			// after that counts at 15 s, with one token left.
			if d := rl.take("key", classWrite, limits, start.Add(15*s)); !d.allowed || d.remaining != 1 {
				t.Fatalf("at 15 s: allowed %v, %d remaining; want allowed, 1", d.allowed, d.remaining)
			}
			if d := rl.take("key", classWrite, limits, start.Add(14*s)); !d.allowed || d.remaining != 0 {
				t.Errorf("a clock read at 14 s, after 15 s was counted: allowed %v, %d remaining; want allowed, 0", d.allowed, d.remaining)
			}
		})
	}
}
