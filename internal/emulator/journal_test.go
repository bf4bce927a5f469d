package emulator

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// journaled starts an emulator on a data file in a fresh directory, with
// the fixture and links seeded links (written as a snapshot).
func journaled(t *testing.T, links int) (e *env, file string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "store.json")
	e = newEnvWith(t, Options{Settings: testSettings(), DataFile: file})
	if _, err := e.srv.FillLinks(e.fx.DomainID, "seeded", links); err != nil {
		t.Fatal(err)
	}
	return e, file
}

// reload is a second emulator on the same data file, as after a crash of
// the first: it reads the snapshot and replays the journal.
func reload(t *testing.T, file string) *env {
	t.Helper()
	return newEnvWith(t, Options{Settings: testSettings(), DataFile: file})
}

func journalLines(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(journalPath(file))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// A client's change costs a line of the journal, not a rewrite of the
// store, and a reload after a crash (no Close) has every change: creates
// (with the quota they used), changes, deletes and clicks.
func TestJournal_aChangeIsALine(t *testing.T) {
	e, file := journaled(t, 5000)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 3); err != nil { // an admin change: a snapshot
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	kept := e.create(t, "https://example.com/kept", "slug", "kept")
	gone := e.create(t, "https://example.com/gone")
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+str(kept["id"]), e.fx.APIKey, map[string]any{"destination": "https://example.com/changed"}), http.StatusOK)
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+str(gone["id"]), e.fx.APIKey, nil), http.StatusNoContent)
	wantStatus(t, e.visit(t, "go.example.test", "kept", ""), http.StatusFound)

	if now, err := os.ReadFile(file); err != nil || !bytes.Equal(now, snapshot) {
		t.Fatalf("the clients' writes rewrote the data file of 5,000 links (%v)", err)
	}
	if n := journalLines(t, file); n != 5 {
		t.Fatalf("the journal holds %d lines, want 5 (two creates, a change, a delete, a click)", n)
	}

	again := reload(t, file)
	if got := again.list(t); len(got) != 5001 || str(got[5000]["destination"]) != "https://example.com/changed" {
		t.Fatalf("after the reload the account lists %d links, the last %v", len(got), got[len(got)-1])
	}
	if _, clicks := again.export(t, ""); len(clicks) != 1 {
		t.Errorf("after the reload the export holds %d clicks, want 1", len(clicks))
	}
	wantStatus(t, again.do(t, http.MethodPost, "/api/links", again.fx.APIKey, again.createBody("https://example.com/third")), http.StatusCreated)
	wantError(t, again.do(t, http.MethodPost, "/api/links", again.fx.APIKey, again.createBody("https://example.com/fourth")), http.StatusPaymentRequired, "link_quota", "")
}

// A crash between writing a snapshot and emptying the journal leaves lines
// the snapshot holds already: they are not applied twice (a click counted
// twice, a quota used twice). A last line cut short by a crash is left out;
// a line that cannot be read elsewhere fails the start, naming the file.
func TestJournal_replay(t *testing.T) {
	e, file := journaled(t, 10)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 2); err != nil {
		t.Fatal(err)
	}
	e.create(t, "https://example.com/a", "slug", "a")
	wantStatus(t, e.visit(t, "go.example.test", "a", ""), http.StatusFound)
	lines, err := os.ReadFile(journalPath(file))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.Close(); err != nil { // the snapshot now holds both
		t.Fatal(err)
	}
	if _, err := os.Stat(journalPath(file)); !os.IsNotExist(err) {
		t.Fatalf("Close left the journal (%v)", err)
	}

	restore := func(t *testing.T, content string) {
		t.Helper()
		if err := os.WriteFile(journalPath(file), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("lines the snapshot holds", func(t *testing.T) {
		restore(t, string(lines))
		again := reload(t, file)
		if _, clicks := again.export(t, ""); len(clicks) != 1 {
			t.Errorf("the export holds %d clicks, want 1", len(clicks))
		}
		wantStatus(t, again.do(t, http.MethodPost, "/api/links", again.fx.APIKey, again.createBody("https://example.com/b")), http.StatusCreated)
	})
	t.Run("a last line cut short", func(t *testing.T) {
		restore(t, string(lines)+`{"n":99,"put":{"id":"x`)
		again := reload(t, file)
		if got := again.list(t); len(got) != 11 {
			t.Errorf("the account lists %d links, want the 11 of the whole lines", len(got))
		}
		// The next change is a line of its own, not the rest of the cut one.
		again.create(t, "https://example.com/after-the-cut")
		if got := reload(t, file).list(t); len(got) != 12 {
			t.Errorf("after a change and a second reload the account lists %d links, want 12", len(got))
		}
	})
	t.Run("an unreadable line", func(t *testing.T) {
		restore(t, "not a change\n"+string(lines))
		if _, err := New(Options{DataFile: file}); err == nil || !strings.Contains(err.Error(), journalPath(file)) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("New = %v, want an error naming %s, line 1", err, journalPath(file))
		}
	})
}

// The journal is folded into a new snapshot once it would hold an eighth
// as many lines as the store holds links and clicks (1,000 at least), so
// that it does not grow without end.
func TestJournal_foldedWhenLong(t *testing.T) {
	e, file := journaled(t, 0)
	e.create(t, "https://example.com/clicked", "slug", "clicked")
	for range 998 {
		wantStatus(t, e.visit(t, "go.example.test", "clicked", ""), http.StatusFound)
	}
	if n := journalLines(t, file); n != 999 {
		t.Fatalf("the journal holds %d lines, want 999", n)
	}
	wantStatus(t, e.visit(t, "go.example.test", "clicked", ""), http.StatusFound)
	e.srv.folds.Wait()
	if n := journalLines(t, file); n != 0 {
		t.Fatalf("the journal holds %d lines after its 1000th change, want it folded into the snapshot", n)
	}
	if _, clicks := reload(t, file).export(t, ""); len(clicks) != 999 {
		t.Errorf("after the reload the export holds %d clicks, want 999", len(clicks))
	}
}

// heldFold makes the next fold wait, once its snapshot is written, until
// the returned release is called.
func heldFold(t *testing.T, e *env) (written <-chan struct{}, release func()) {
	t.Helper()
	wrote, held := make(chan struct{}), make(chan struct{})
	e.srv.mu.Lock()
	e.srv.writeFold = func(dataFile string, st *store) (string, error) {
		tmp, err := writeStoreBeside(dataFile, st)
		close(wrote)
		<-held
		return tmp, err
	}
	e.srv.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(held) }) }
	t.Cleanup(release)
	return wrote, release
}

// within fails the test unless do returns within 10 s: a request that the
// fold holds would not.
func within(t *testing.T, what string, do func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); do() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s waited for the fold", what)
	}
}

// foldNow makes enough changes for the journal to be folded: visits of a
// link of its own.
func foldNow(t *testing.T, e *env) {
	t.Helper()
	e.create(t, "https://example.com/clicked", "slug", "clicked")
	for range 999 {
		wantStatus(t, e.visit(t, "go.example.test", "clicked", ""), http.StatusFound)
	}
}

// A fold is written in the background: requests go on meanwhile (a million
// links took ten seconds to write, and every request waited). Until it is
// in place the old snapshot and the whole journal hold every change; once
// it is, the journal holds only the changes made while it was written.
func TestJournal_foldHoldsNoRequest(t *testing.T) {
	e, file := journaled(t, 10)
	written, release := heldFold(t, e)
	within(t, "the change that began the fold", func() { foldNow(t, e) })
	<-written
	var made map[string]any
	within(t, "a create", func() { made = e.create(t, "https://example.com/during", "slug", "during") })
	within(t, "a list", func() { e.list(t) })
	within(t, "a visit", func() { wantStatus(t, e.visit(t, "go.example.test", "during", ""), http.StatusFound) })

	// A crash now: the old snapshot and the whole journal.
	if got := reload(t, file); len(got.list(t)) != 12 || len(got.srv.Clicks(e.fx.AccountID)) != 1000 {
		t.Fatalf("a reload during the fold lists %d links and %d clicks, want 12 and 1000", len(got.list(t)), len(got.srv.Clicks(e.fx.AccountID)))
	}
	release()
	e.srv.folds.Wait()
	if err := e.srv.PersistError(); err != nil {
		t.Fatal(err)
	}
	if n := journalLines(t, file); n != 2 {
		t.Fatalf("after the fold the journal holds %d lines, want the create and the visit made during it", n)
	}
	again := reload(t, file)
	if links := again.list(t); len(links) != 12 || str(links[11]["id"]) != str(made["id"]) || len(again.srv.Clicks(e.fx.AccountID)) != 1000 {
		t.Fatalf("after the fold a reload lists %d links and %d clicks, want 12 (the last %s) and 1000", len(links), len(again.srv.Clicks(e.fx.AccountID)), made["id"])
	}
	// The next change goes to the new journal, not the file it replaced.
	e.create(t, "https://example.com/after", "slug", "after")
	if n := journalLines(t, file); n != 3 {
		t.Fatalf("after one more change the journal holds %d lines, want 3", n)
	}
}

// A snapshot written while a fold is written (an admin change, whose change
// no journal line describes) is newer: the fold, done later, does not put
// its own in its place.
func TestJournal_aNewerSnapshotOutlivesTheFold(t *testing.T) {
	e, file := journaled(t, 10)
	written, release := heldFold(t, e)
	foldNow(t, e)
	<-written
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 3); err != nil { // the fold's create and the next made: one more may be
		t.Fatal(err)
	}
	e.create(t, "https://example.com/after-the-admin-change")
	release()
	e.srv.folds.Wait()
	again := reload(t, file)
	if len(again.list(t)) != 12 {
		t.Fatalf("a reload lists %d links, want 12", len(again.list(t)))
	}
	wantStatus(t, again.do(t, http.MethodPost, "/api/links", again.fx.APIKey, again.createBody("https://example.com/last")), http.StatusCreated)
	wantError(t, again.do(t, http.MethodPost, "/api/links", again.fx.APIKey, again.createBody("https://example.com/over")), http.StatusPaymentRequired, "link_quota", "")
}

// Another client's changes (the churn switch) are journaled as a client's
// are, a line each, so that listing a large account page by page does not
// rewrite the data file per page; a reload has them.
func TestJournal_churnIsALine(t *testing.T) {
	e, file := journaled(t, 5000)
	if err := e.srv.AddOtherClientLinks(e.fx.AccountID, 5); err != nil { // seeding: a snapshot
		t.Fatal(err)
	}
	if err := e.srv.UpdateSettings(func(s *Settings) {
		s.Variants.Paging, s.Variants.PageSize = "offset", 1000
		s.Churn = Churn{Delete: 1, Create: 1}
	}); err != nil { // an admin change: a snapshot
		t.Fatal(err)
	}
	snapshot, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, e.do(t, http.MethodGet, "/api/links?cursor=5002", e.fx.APIKey, nil), http.StatusOK)
	if now, err := os.ReadFile(file); err != nil || !bytes.Equal(now, snapshot) {
		t.Fatalf("another client's changes rewrote the data file of 5,000 links (%v)", err)
	}
	if n := journalLines(t, file); n != 2 {
		t.Fatalf("the journal holds %d lines, want 2 (a delete and a create)", n)
	}
	want := len(e.srv.Links(e.fx.AccountID))
	if got := len(reload(t, file).srv.Links(e.fx.AccountID)); got != want {
		t.Errorf("after the reload the account holds %d links, want %d", got, want)
	}
}

// A change whose journal line cannot be written fails, and changes
// nothing: not the store, not the journal (the journal here is /dev/full,
// which refuses every write).
func TestJournal_aChangeNotWrittenIsNotMade(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	e, file := journaled(t, 0)
	seeded := e.seedLinks(t, e.fx.DomainID, "s", 1)[0]
	if err := os.Symlink("/dev/full", journalPath(file)); err != nil {
		t.Fatal(err)
	}
	link := "/api/links/" + seeded.ID
	wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/new", "slug", "new")), http.StatusInternalServerError, "internal_error", "")
	wantError(t, e.do(t, http.MethodPatch, link, e.fx.APIKey, map[string]any{"destination": "https://example.com/changed"}), http.StatusInternalServerError, "internal_error", "")
	wantError(t, e.do(t, http.MethodDelete, link, e.fx.APIKey, nil), http.StatusInternalServerError, "internal_error", "")
	wantStatus(t, e.visit(t, "go.example.test", seeded.Slug, ""), http.StatusInternalServerError)

	links := e.list(t)
	if len(links) != 1 || str(links[0]["id"]) != seeded.ID || str(links[0]["destination"]) != seeded.Destination {
		t.Fatalf("links after failed writes = %v, want only %s, unchanged", links, seeded.ID)
	}
	if clicks := e.srv.Clicks(e.fx.AccountID); len(clicks) != 0 {
		t.Fatalf("%d clicks recorded, want none", len(clicks))
	}
	// The slug is still free: once the journal can be written, the create
	// the client sends again is made, not refused as taken.
	if err := os.Remove(journalPath(file)); err != nil {
		t.Fatal(err)
	}
	e.create(t, "https://example.com/new", "slug", "new")
	if n := journalLines(t, file); n != 1 {
		t.Fatalf("the journal holds %d lines, want the one create", n)
	}
}

// An empty data file (made by touch or mktemp) is an empty store, not a
// file that cannot be read.
func TestJournal_emptyDataFileIsAnEmptyStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "store.json")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, Options{Settings: testSettings(), DataFile: file})
	e.create(t, "https://example.com/a")
	if links := reload(t, file).list(t); len(links) != 1 {
		t.Fatalf("after a reload the store holds %d links, want 1", len(links))
	}
}
