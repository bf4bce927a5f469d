package emulator

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPersistence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "store.json")
	opts := Options{Settings: testSettings(), DataFile: file}

	e := newEnvWith(t, opts)
	revoked, err := e.srv.AddKey(e.fx.AccountID, ScopeRead, ScopeWrite)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.srv.RevokeKey(revoked); err != nil {
		t.Fatal(err)
	}
	keep := e.create(t, "https://example.com/keep", "slug", "keep", "expiresAt", "2027-01-31T23:59:59.000Z")
	wantStatus(t, e.do(t, http.MethodPatch, "/api/links/"+str(keep["id"]), e.fx.APIKey,
		map[string]any{"destination": "https://example.com/kept", "utm": map[string]any{"source": "news"}}), http.StatusOK)
	gone := e.create(t, "https://example.com/gone")
	wantStatus(t, e.do(t, http.MethodDelete, "/api/links/"+str(gone["id"]), e.fx.APIKey, nil), http.StatusNoContent)
	e.create(t, "https://example.com/third", "slug", "third")
	wantStatus(t, e.visit(t, "go.example.test", "keep", "https://ref.example/a,b"), http.StatusFound)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 4); err != nil {
		t.Fatal(err)
	}
	beforeList := e.list(t)
	_, beforeExport := e.export(t, "")
	if err := e.srv.PersistError(); err != nil {
		t.Fatal(err)
	}

	// The directory holds the data file and nothing else.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "store.json" {
		t.Errorf("directory holds %v, want only store.json", entries)
	}
	raw, err := os.ReadFile(file)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("data file is not JSON: %v", err)
	}

	// A second server on the same file sees everything.
	e2 := newEnvWith(t, opts)
	if e2.fx != e.fx {
		t.Errorf("fixture after reload = %+v, want %+v", e2.fx, e.fx)
	}
	if got := e2.list(t); !sameJSON(got, beforeList) {
		t.Errorf("list after reload =\n %v\nwant\n %v", got, beforeList)
	}
	if _, got := e2.export(t, ""); !sameJSON(got, beforeExport) || len(got) != 1 {
		t.Errorf("export after reload = %v, want %v", got, beforeExport)
	}
	wantError(t, e2.do(t, http.MethodGet, "/api/links", revoked, nil), http.StatusUnauthorized, "invalid_api_key", "")
	wantStatus(t, e2.do(t, http.MethodGet, "/api/links", e.fx.ReadKey, nil), http.StatusOK)
	wantError(t, e2.do(t, http.MethodGet, "/api/links", e.fx.WriteKey, nil), http.StatusForbidden, "insufficient_scope", "")
	// The slug index is rebuilt: a taken slug is still taken, a deleted one is free.
	wantError(t, e2.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e2.createBody("https://example.com/", "slug", "keep")), http.StatusConflict, "slug_taken", "slug")
	if r := e2.visit(t, "go.example.test", "keep", ""); r.Header.Get("Location") != "https://example.com/kept?utm_source=news" {
		t.Errorf("visit after reload: %s %q", r, r.Header.Get("Location"))
	}
	// Creation order continues after the reloaded links; the month's quota
	// counts the links created before the restart (3 of 4).
	fourth := e2.create(t, "https://example.com/fourth", "slug", "gone")
	if got := ids(e2.list(t)); len(got) != 3 || got[2] != str(fourth["id"]) {
		t.Errorf("list order after reload = %v", got)
	}
	wantError(t, e2.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e2.createBody("https://example.com/fifth")), http.StatusPaymentRequired, "link_quota", "")

	// Every write replaces the file by a rename, never in place: a reader
	// holding the old file keeps a complete old version.
	old, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	oldContent, err := io.ReadAll(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := e2.srv.SetMonthlyQuota(e.fx.AccountID, 0); err != nil {
		t.Fatal(err)
	}
	e2.create(t, "https://example.com/after") // a line of the journal
	if err := e2.srv.Close(); err != nil {    // folded into the data file
		t.Fatal(err)
	}
	before, err := old.Stat()
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("the data file was rewritten in place, not replaced")
	}
	if again, err := io.ReadAll(io.NewSectionReader(old, 0, 1<<30)); err != nil || !bytes.Equal(again, oldContent) {
		t.Errorf("the old version changed under its reader (%v)", err)
	}
	if now, err := os.ReadFile(file); err != nil || !strings.Contains(string(now), "https://example.com/after") {
		t.Errorf("the new version lacks the last link (%v)", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %v after more writes", entries)
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

func TestDataFileErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing file is an empty store", func(t *testing.T) {
		file := filepath.Join(dir, "new.json")
		srv, err := New(Options{DataFile: file})
		if err != nil {
			t.Fatal(err)
		}
		if got := srv.AllLinks(); len(got) != 0 {
			t.Errorf("links = %v", got)
		}
		if _, err := os.Stat(file); !os.IsNotExist(err) {
			t.Errorf("the file was created before any change: %v", err)
		}
		srv.AddAccount("a")
		if _, err := os.Stat(file); err != nil {
			t.Errorf("the first change did not write the file: %v", err)
		}
	})
	for name, content := range map[string]string{
		"corrupt":   "{not json",
		"truncated": `{"accounts":{},"keys":{`,
		"an array":  "[]",
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
			if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := New(Options{DataFile: file}); err == nil || !strings.Contains(err.Error(), file) {
				t.Errorf("New = %v, want an error naming %s", err, file)
			}
		})
	}
	t.Run("a directory", func(t *testing.T) {
		if _, err := New(Options{DataFile: dir}); err == nil {
			t.Error("New accepted a directory as data file")
		}
	})
	t.Run("unwritable location", func(t *testing.T) {
		file := filepath.Join(dir, "no", "such", "dir", "store.json")
		e := newEnvWith(t, Options{Settings: testSettings(), DataFile: file})
		if err := e.srv.PersistError(); err == nil {
			t.Error("PersistError = nil after failed writes")
		}
		wantError(t, e.do(t, http.MethodPost, "/api/links", e.fx.APIKey, e.createBody("https://example.com/")), http.StatusInternalServerError, "internal_error", "")
	})
}

// Timestamps survive the round trip through the file as instants.
func TestPersistenceTimes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "store.json")
	e := newEnvWith(t, Options{Settings: testSettings(), DataFile: file})
	e.clock.Advance(1234567 * time.Microsecond)
	l := e.create(t, "https://example.com/", "expiresAt", "2027-01-31T23:59:59.123Z")
	srv, err := New(Options{DataFile: file})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.AllLinks()
	if len(got) != 1 || !got[0].CreatedAt.Equal(e.clock.Now()) || got[0].ExpiresAt.Format(time.RFC3339Nano) != "2027-01-31T23:59:59.123Z" || got[0].ID != l["id"] {
		t.Errorf("reloaded %+v", got)
	}
}
