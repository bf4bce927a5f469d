package e2e

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestSettings_providerBlock: settings of the provider block reach what
// they govern, as the real CLI passes them. bulk_refresh = false lists the
// account once per refreshed link rather than once per plan;
// max_rate_limit_percent = 50 leaves half of the first window of writes to
// others: no write of it is answered with less than half the limit
// remaining. (Later windows are the pacer's estimates, which a loaded
// machine can shift by a request; the pacing's own tests hold the cap
// there.)
func TestSettings_providerBlock(t *testing.T) {
	t.Parallel()
	const limit, window = 10, 2 * time.Second
	s := newService(t, instantFilter, func(st *emulator.Settings) {
		st.Limits.Write, st.Limits.Window = limit, emulator.Duration(window)
	})
	var mu sync.Mutex
	type answer struct {
		at        time.Time
		remaining int
	}
	var answers []answer // of the writes, in turn
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		s.srv.ServeHTTP(rec, r)
		if r.Method != http.MethodGet {
			if n, err := strconv.Atoi(rec.Header().Get("X-RateLimit-Remaining")); err == nil && rec.Code < 300 {
				mu.Lock()
				answers = append(answers, answer{time.Now(), n})
				mu.Unlock()
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(proxy.Close)
	config := func(settings string) string {
		return strings.Replace(campaign(s.fx.DomainID, 12, halfWithSlugs), "provider \"shortlink\" {}", "provider \"shortlink\" {\n"+settings+"}", 1)
	}
	w := s.workdir(t, "provider-settings", config("  max_rate_limit_percent = 50\n"))
	w.Setenv("SHORTLINK_BASE_URL=" + proxy.URL)
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The answers of the first half window all belong to the first window,
	// whatever the machine's load; the run sends its part there at once.
	least := limit
	for _, a := range answers {
		if a.at.Sub(answers[0].at) < window/2 {
			least = min(least, a.remaining)
		}
	}
	if least < limit/2 {
		t.Errorf("a write of the first window was answered with %d of %d remaining: max_rate_limit_percent = 50 took more than half of it", least, limit)
	}
	if n := s.srv.CountStatus(http.StatusTooManyRequests); n != 0 {
		t.Errorf("%d writes were answered 429", n)
	}

	lists := func(settings string) int {
		t.Helper()
		if err := w.WriteFile("main.tf", clitest.RequiredProviders+config(settings)); err != nil {
			t.Fatal(err)
		}
		before := s.srv.Count(http.MethodGet, "/api/links")
		if out, err := runCLI(ctx, w, "plan"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return s.srv.Count(http.MethodGet, "/api/links") - before
	}
	if n := lists(""); n != 1 {
		t.Errorf("a plan refreshing 12 links listed %d times, want once", n)
	}
	if n := lists("  bulk_refresh = false\n"); n != 12 {
		t.Errorf("with bulk_refresh = false a plan refreshing 12 links listed %d times, want once per link", n)
	}
}

// TestSettings_ephemeralKeyStaysOutOfPlanFiles: an api_key written in the
// provider block from a variable declared ephemeral (Terraform 1.10 and
// later) leaves no trace in a saved plan or the state, where one from a
// sensitive variable sits in the plan file (Terraform keeps the
// variables a plan was made with), as the docs say. Ephemeral variables
// need Terraform 1.10 or OpenTofu 1.11 or later.
func TestSettings_ephemeralKeyStaysOutOfPlanFiles(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	skipBelow(t, s.workdir(t, "cli-version", ""), 10, 11, "an ephemeral variable")
	config := func(kind string) string {
		return fmt.Sprintf("variable \"api_key\" {\n  type = string\n  %s = true\n}\nprovider \"shortlink\" {\n  api_key = var.api_key\n}\nresource \"shortlink_link\" \"a\" {\n  domain_id   = %q\n  destination = \"https://example.com/%s\"\n}\n", kind, s.fx.DomainID, kind)
	}
	ctx := context.Background()
	for kind, inPlan := range map[string]bool{"ephemeral": false, "sensitive": true} {
		w := s.workdir(t, kind+"-key", config(kind))
		w.Setenv("SHORTLINK_API_KEY=", "TF_VAR_api_key="+s.fx.APIKey) // the block's variable only
		if out, err := runCLI(ctx, w, "plan", "-out=saved.tfplan"); err != nil {
			t.Fatalf("%s: plan: %v\n%s", kind, err, out)
		}
		if got := zipHolds(t, filepath.Join(w.Dir, "saved.tfplan"), s.fx.APIKey); got != inPlan {
			t.Errorf("a key from a %s variable: in the saved plan %t, want %t", kind, got, inPlan)
		}
		if out, err := w.Terraform(ctx, runLimit, "apply", "-input=false", "-no-color", "saved.tfplan"); err != nil {
			t.Fatalf("%s: apply of the saved plan: %v\n%s", kind, err, out)
		}
		state, err := os.ReadFile(filepath.Join(w.Dir, "terraform.tfstate"))
		if err != nil || strings.Contains(string(state), s.fx.APIKey) {
			t.Errorf("a key from a %s variable: the state holds it (or cannot be read: %v)", kind, err)
		}
	}
	if n := len(s.linkIDs()); n != 2 {
		t.Errorf("the service holds %d links, want 2", n)
	}
}

// TestSettings_keyInProtocolDumpsIsWarned: with terraform-plugin-go's
// TF_LOG_SDK_PROTO_DATA_DIR set, the provider block's api_key is written
// in clear to the files it names, and the plan warns of it without
// quoting the key, even where the key is written in the block; a key
// from SHORTLINK_API_KEY, as the warning advises, is in none of those
// files and warns of nothing.
func TestSettings_keyInProtocolDumpsIsWarned(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := func(provider string) string {
		return fmt.Sprintf("variable \"api_key\" {\n  type      = string\n  default   = null\n  sensitive = true\n}\n%s\nresource \"shortlink_link\" \"a\" {\n  domain_id   = %q\n  destination = \"https://example.com/dumped\"\n}\n", provider, s.fx.DomainID)
	}
	ctx := context.Background()
	for name, c := range map[string]struct {
		provider string
		env      []string
		warned   bool
	}{
		"in the provider block": {"provider \"shortlink\" {\n  api_key = var.api_key\n}\n", []string{"SHORTLINK_API_KEY=", "TF_VAR_api_key=" + s.fx.APIKey}, true},
		// A warning on the attribute would print this line, key and all.
		"written in the block":   {fmt.Sprintf("provider \"shortlink\" {\n  api_key = %q\n}\n", s.fx.APIKey), []string{"SHORTLINK_API_KEY="}, true},
		"from SHORTLINK_API_KEY": {"provider \"shortlink\" {}\n", nil, false},
	} {
		dumps := t.TempDir()
		w := s.workdir(t, "dumps-"+strings.ReplaceAll(name, " ", "-"), config(c.provider))
		w.Setenv(append(c.env, "TF_LOG_SDK_PROTO_DATA_DIR="+dumps)...)
		out, err := runCLI(ctx, w, "plan")
		if err != nil {
			t.Fatalf("%s: plan: %v\n%s", name, err, out)
		}
		flat := strings.Join(strings.Fields(out), " ")
		if got := strings.Contains(flat, "Warning: API key written to protocol dumps"); got != c.warned || strings.Contains(out, s.fx.APIKey) {
			t.Errorf("%s: warned %t, want %t, and the key never quoted:\n%s", name, got, c.warned, out)
		}
		if c.warned && !strings.Contains(flat, "SHORTLINK_API_KEY environment variable rather than in the provider block") {
			t.Errorf("%s: the warning does not say what to do:\n%s", name, out)
		}
		if got := dirHolds(t, dumps, s.fx.APIKey); got != c.warned {
			t.Errorf("%s: the key in the protocol dumps %t, want %t", name, got, c.warned)
		}
	}
}

// dirHolds reports whether any file directly in dir holds text; it fails
// the test when dir holds no file at all.
func dirHolds(t *testing.T, dir, text string) bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) == 0 {
		t.Fatalf("no files in %s (%v)", dir, err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}

// zipHolds reports whether any file of the zip archive at path (a saved
// plan) holds text.
func zipHolds(t *testing.T, path, text string) bool {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), text) {
			return true
		}
	}
	return false
}
