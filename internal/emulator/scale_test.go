package emulator

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// countingWriter is an http.ResponseWriter that keeps only the size of the
// answer: io.Discard with a header and a status.
type countingWriter struct {
	header  http.Header
	status  int
	n       int64
	largest int // the most bytes one Write was given
}

func (w *countingWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}
func (w *countingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.n += int64(len(b))
	w.largest = max(w.largest, len(b))
	return len(b), nil
}

// largeAccount is an emulator whose fixture account holds n seeded links,
// with a read limit that a benchmark cannot exhaust.
func largeAccount(tb testing.TB, n int) (*Server, Fixture, time.Duration) {
	tb.Helper()
	srv, err := New(Options{Settings: testSettings(func(s *Settings) { s.Limits.Read = 1 << 30 })})
	if err != nil {
		tb.Fatal(err)
	}
	fx, err := srv.SeedFixture("large", "go.example.test")
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if _, err := srv.SeedLinks(fx.DomainID, "large", n); err != nil {
		tb.Fatal(err)
	}
	return srv, fx, time.Since(start)
}

func BenchmarkSeedLinks(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				largeAccount(b, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/link")
		})
	}
}

func BenchmarkListLinks(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv, fx, _ := largeAccount(b, n)
			req := httptest.NewRequest(http.MethodGet, "/api/links", nil)
			req.Header.Set("Authorization", "Bearer "+fx.APIKey)
			var size int64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w := &countingWriter{}
				srv.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
				size = w.n
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/link")
			b.ReportMetric(float64(size), "answer-bytes")
		})
	}
}

// BenchmarkChurnPage measures a page deep in a large account's listing
// while another client deletes and creates a link before each page
// (Settings.Churn): the server's lock is held meanwhile, so every other
// request waits as long.
func BenchmarkChurnPage(b *testing.B) {
	const n = 1_000_000
	srv, fx, _ := largeAccount(b, 0)
	if err := srv.AddOtherClientLinks(fx.AccountID, 20); err != nil {
		b.Fatal(err)
	}
	seeded, err := srv.SeedLinks(fx.DomainID, "large", n)
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.SetSettings(testSettings(func(s *Settings) {
		s.Limits.Read, s.Variants.Paging, s.Variants.PageSize, s.Churn = 1<<30, "cursor", 100, Churn{Delete: 1, Create: 1}
	})); err != nil {
		b.Fatal(err)
	}
	// Once the 20 before the cursor are gone, the other client's links are
	// the ones churn made, all after it.
	cursor := base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(seeded[n*9/10].Seq, 10)))
	req := httptest.NewRequest(http.MethodGet, "/api/links?cursor="+cursor, nil)
	req.Header.Set("Authorization", "Bearer "+fx.APIKey)
	for b.Loop() {
		w := &countingWriter{}
		srv.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// BenchmarkFold measures what a fold of the journal costs a large account:
// the copy of the store, under the lock (every request waits for it),
// against its writing, in the background.
func BenchmarkFold(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			srv, _, _ := largeAccount(b, n)
			file := filepath.Join(b.TempDir(), "store.json")
			var held, written time.Duration
			for b.Loop() {
				srv.mu.Lock()
				start := time.Now()
				st := srv.st.copyToSave()
				held += time.Since(start)
				srv.mu.Unlock()
				start = time.Now()
				tmp, err := srv.writeFold(file, st)
				written += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				_ = os.Remove(tmp)
			}
			b.ReportMetric(held.Seconds()*1000/float64(b.N), "held-ms")
			b.ReportMetric(written.Seconds()*1000/float64(b.N), "written-ms")
		})
	}
}

// A seeded account lists in creation order through the per-account index,
// and stays so while links are deleted and changed between listings.
func TestSeededAccountListsInOrder(t *testing.T) {
	e := newEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "s", 5000)
	mine := e.create(t, "https://example.com/mine", "slug", "mine")
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+seeded[10].ID, e.fx.APIKey, nil), http.StatusNoContent)
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+seeded[20].ID, e.fx.APIKey, map[string]any{"destination": "https://example.com/changed"}), http.StatusOK)

	got := e.list(t)
	if len(got) != 5000 {
		t.Fatalf("list holds %d links, want 5000", len(got))
	}
	want := make([]string, 0, 5000)
	for i, l := range seeded {
		if i != 10 {
			want = append(want, l.ID)
		}
	}
	want = append(want, str(mine["id"]))
	if !slices.Equal(ids(got), want) {
		t.Error("the list is not the seeded links in creation order, less the deleted one, then the new one")
	}
	if d := str(got[19]["destination"]); d != "https://example.com/changed" {
		t.Errorf("changed link lists destination %q", d)
	}
}

// A taken slug fails SeedLinks before anything is stored; FillLinks skips it
// and counts to a total.
func TestSeedLinksTakenSlug(t *testing.T) {
	e := newEnv(t)
	e.create(t, "https://example.com/", "slug", "s-3")
	if _, err := e.srv.SeedLinks(e.fx.DomainID, "s", 10); err == nil || !strings.Contains(err.Error(), `"s-3" is taken`) {
		t.Errorf("SeedLinks over a taken slug: %v", err)
	}
	if n := e.srv.LinkCount(e.fx.AccountID); n != 1 {
		t.Errorf("a failed seed stored %d links", n-1)
	}
	added, err := e.srv.FillLinks(e.fx.DomainID, "s", 10)
	if err != nil || added != 9 {
		t.Errorf("FillLinks to 10 added %d (%v), want 9", added, err)
	}
	if added, _ := e.srv.FillLinks(e.fx.DomainID, "s", 10); added != 0 {
		t.Errorf("a second FillLinks to 10 added %d", added)
	}
}
