package e2e

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// TestMistakes_badBaseURL: a plan against a base_url that cannot work
// fails with one error that says what is wrong, not one per link, and
// without retrying each link for minutes: a plan of 15 links in the state,
// and a plan of only new links (which has nothing to refresh, so only its
// check of the new links asks the service). The time is logged (not
// asserted: machines are shared and noisy).
func TestMistakes_badBaseURL(t *testing.T) {
	for name, tc := range map[string]struct {
		baseURL  func(s *service) string
		settings string // in the provider block
		summary  string
		detail   string
	}{
		"connection refused": {
			baseURL: func(*service) string { return "http://" + testsupport.ClosedAddr(t) },
			summary: "Error: Cannot reach the short-link service",
			detail:  "connection refused",
		},
		// The retries end before the patience does: the same one error.
		"connection refused, no retries": {
			baseURL:  func(*service) string { return "http://" + testsupport.ClosedAddr(t) },
			settings: "max_retries = 0",
			summary:  "Error: Cannot reach the short-link service",
			detail:   "(one attempt: max_retries is 0)",
		},
		"unknown host": {
			baseURL: func(*service) string { return "https://api.shortlnk.invalid" },
			summary: "Error: Cannot reach the short-link service",
			detail:  "api.shortlnk.invalid",
		},
		"https to a plain-http port": {
			baseURL: func(s *service) string { return strings.Replace(s.url, "http://", "https://", 1) },
			summary: "Error: Cannot reach the short-link service",
			detail:  "server gave HTTP response to HTTPS client",
		},
		"wrong path": {
			baseURL: func(s *service) string { return s.url + "/api" },
			summary: "Error: base_url does not lead to the short-link service's API",
			detail:  "any other path the API does not have. Correct base_url", // after /api/api/links
		},
	} {
		for _, inState := range []bool{true, false} {
			label := name + map[bool]string{true: ", links in the state", false: ", only new links"}[inState]
			t.Run(label, func(t *testing.T) {
				t.Parallel()
				s := newService(t, instantFilter)
				config := strings.Replace(campaign(s.fx.DomainID, 15, halfWithSlugs), "provider \"shortlink\" {}", "provider \"shortlink\" {\n  "+tc.settings+"\n}", 1)
				w := s.workdir(t, "bad-base-url-"+strings.NewReplacer(" ", "-", ",", "").Replace(label), config)
				ctx := context.Background()
				want := 0
				if inState {
					want = 15
					if _, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
						t.Fatal(err)
					}
				}
				w.Setenv("SHORTLINK_BASE_URL=" + tc.baseURL(s))
				start := time.Now()
				out, err := runCLI(ctx, w, "plan")
				t.Logf("%s: the plan failed after %s", label, time.Since(start).Round(100*time.Millisecond))
				if err == nil {
					t.Fatalf("the plan succeeded against a bad base_url:\n%s", out)
				}
				unwrapped := strings.Join(strings.Fields(out), " ") // Terraform wraps diagnostics to its width
				if n := strings.Count(out, "Error: "); n != 1 || !strings.Contains(out, tc.summary) || !strings.Contains(unwrapped, tc.detail) {
					t.Fatalf("want exactly one error, %q naming %q; got %d errors:\n%s", tc.summary, tc.detail, n, out)
				}
				if strings.Contains(out, "deleted outside Terraform") {
					t.Fatalf("a bad base_url made links look deleted:\n%s", out)
				}
				if st, _ := w.State(); len(st) != want {
					t.Fatalf("the state holds %d links after the failed plan, want %d", len(st), want)
				}
			})
		}
	}
}

// TestMistakes_keyRefused: a key the service refuses is explained once per
// run, not once per link: an unknown key (401) on a plan of links in the
// state and on one of only new links, and a key without links:write (403)
// on an apply, whose other creates fail unsent with a line pointing to it.
func TestMistakes_keyRefused(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	ctx := context.Background()
	run := func(w *clitest.Workdir, args ...string) string {
		t.Helper()
		out, err := runCLI(ctx, w, args...)
		if err == nil {
			t.Fatalf("terraform %s succeeded with a refused key:\n%s", args[0], out)
		}
		return out
	}
	expect := func(out string, counts map[string]int) {
		t.Helper()
		flat := strings.Join(strings.Fields(out), " ") // the CLI wraps lines
		for what, want := range counts {
			if got := strings.Count(flat, what); got != want {
				t.Errorf("%q appears %d times, want %d:\n%s", what, got, want, out)
			}
		}
	}

	managed := s.workdir(t, "key-refused-state", campaign(s.fx.DomainID, 12, halfWithSlugs))
	if out, err := runCLI(ctx, managed, "apply", "-auto-approve"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	managed.Setenv("SHORTLINK_API_KEY=sk_unknown_key")
	// The other refreshes keep their state, with one warning that Terraform folds.
	expect(run(managed, "plan"), map[string]int{"Error: ": 1, "Error: The service rejected the API key": 1, "401 invalid_api_key": 1,
		"Warning: Not refreshed": 1, "The error is reported once for the whole run": 1, "(and 10 more similar warnings elsewhere)": 1})

	fresh := s.workdir(t, "key-refused-new", campaign(s.fx.DomainID, 12, halfWithSlugs))
	fresh.Setenv("SHORTLINK_API_KEY=sk_unknown_key")
	expect(run(fresh, "plan"), map[string]int{"Error: ": 1, "401 invalid_api_key": 1})

	readOnly := s.workdir(t, "key-refused-write", campaign(s.fx.DomainID, 6, halfWithSlugs))
	readOnly.Setenv("SHORTLINK_API_KEY=" + s.fx.ReadKey)
	expect(run(readOnly, "apply", "-auto-approve"), map[string]int{
		"Error: ": 6, "403 insufficient_scope": 1, "The API key lacks a scope Terraform needs: the same as the error reported in full once": 5,
	})

	// Every data source reads; each points to the one error in full.
	reads := s.workdir(t, "key-refused-reads", `
provider "shortlink" {}

data "shortlink_links" "all" {}
data "shortlink_clicks" "all" {}
data "shortlink_clicks" "since" { since = "2027-01-01T00:00:00Z" }
data "shortlink_analytics_export" "all" {}
`)
	reads.Setenv("SHORTLINK_API_KEY=" + s.fx.WriteKey)
	expect(run(reads, "plan"), map[string]int{
		"Error: ": 4, "403 insufficient_scope": 1, "The API key lacks a scope Terraform needs: the same as the error reported in full once": 3,
	})
}

// TestMistakes_duplicateSlug: two resources of one configuration that
// declare the same domain and slug (a row repeated in a CSV) fail the plan
// on the second, before anything is created.
func TestMistakes_duplicateSlug(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := fmt.Sprintf(`
provider "shortlink" {}

variable "rows" { type = list(object({ name = string, slug = string })) }

resource "shortlink_link" "row" {
  for_each    = { for r in var.rows : r.name => r }
  domain_id   = %q
  slug        = each.value.slug
  destination = "https://example.com/${each.key}"
}
`, s.fx.DomainID)
	w := s.workdir(t, "duplicate-slug", config)
	ctx := context.Background()
	rows := `rows=[{name="a",slug="spring"},{name="b",slug="summer"},{name="c",slug="spring"}]`
	before := writes(s)
	out, err := w.Terraform(ctx, runLimit, "apply", "-auto-approve", "-input=false", "-no-color", "-var", rows)
	if err == nil {
		t.Fatalf("an apply with one slug declared twice succeeded:\n%s", out)
	}
	if n := strings.Count(out, "Error: "); n != 1 || !strings.Contains(out, "Error: Slug declared twice") || !strings.Contains(strings.Join(strings.Fields(out), " "), `also creates a link with the slug "spring"`) {
		t.Fatalf("want one error, Slug declared twice; got %d:\n%s", n, out)
	}
	for _, advice := range []string{"import", "create_before_destroy"} {
		if strings.Contains(out, advice) {
			t.Errorf("the error advises %s, which does not apply:\n%s", advice, out)
		}
	}
	if sent := writes(s) - before; sent != 0 {
		t.Fatalf("%d writes reached the service; the plan should have stopped the apply", sent)
	}

}

// TestMistakes_badValues: values a CSV-driven configuration gets wrong are
// errors at plan time on their attribute, saying what to write: a time
// without its zone, a date without its time, an empty UTM value, and a
// base_url from the environment that is not a URL.
func TestMistakes_badValues(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	link := func(extra string) string {
		return fmt.Sprintf("provider \"shortlink\" {}\n\nresource \"shortlink_link\" \"l\" {\n  domain_id   = %q\n  destination = \"https://example.com/\"\n%s}\n", s.fx.DomainID, extra)
	}
	for name, tc := range map[string]struct {
		config string
		env    string
		want   []string
	}{
		"expiry without zone": {config: link("  expires_at = \"2027-01-05T23:59:59\"\n"),
			want: []string{"Error: Invalid time", "expires_at", "It has no time zone", "2027-01-05T23:59:59Z"}},
		"expiry without time": {config: link("  expires_at = \"2027-01-05\"\n"),
			want: []string{"Error: Invalid time", "It has no time of day", "2027-01-05T23:59:59Z"}},
		"empty utm value": {config: link("  utm = {\n    source  = \"mail\"\n    content = \"\"\n  }\n"),
			want: []string{"Error: Invalid utm.content", "utm.content is empty: for a link without this parameter, leave it out or set it to null"}},
		"base_url from the environment": {config: link(""), env: "SHORTLINK_BASE_URL=api.example.com",
			want: []string{"Error: Invalid SHORTLINK_BASE_URL", "comes from the environment variable SHORTLINK_BASE_URL"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := s.workdir(t, "bad-values-"+strings.ReplaceAll(name, " ", "-"), tc.config)
			if tc.env != "" {
				w.Setenv(tc.env)
			}
			out, err := runCLI(context.Background(), w, "plan")
			if err == nil {
				t.Fatalf("the plan succeeded:\n%s", out)
			}
			flat := strings.Join(strings.Fields(out), " ")
			if n := strings.Count(out, "Error: "); n != 1 {
				t.Errorf("%d errors, want 1:\n%s", n, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(flat, want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestMistakes_readRateLimitWait: a plan whose listing of the account
// waits for the read rate limit says so, once, though every read of the
// plan shares that listing.
func TestMistakes_readRateLimitWait(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) {
		st.Limits.Read, st.Limits.Window = 1, emulator.Duration(3*time.Second)
		st.Variants.Paging, st.Variants.PageSize = "cursor", 2
	})
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "dashboard", 6); err != nil {
		t.Fatal(err)
	}
	w := s.workdir(t, "read-rate-limit-wait", "data \"shortlink_links\" \"all\" {}\ndata \"shortlink_links\" \"again\" { slug_prefix = \"dash\" }\n")
	out, err := runCLI(context.Background(), w, "plan")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if n := strings.Count(flat, "Warning: Waited for the rate limit"); n != 1 || !strings.Contains(flat, "for the service's read rate limit") {
		t.Errorf("the plan says %d times that it waited for the rate limit, want once, for the read limit:\n%s", n, out)
	}
}

// TestMistakes_exportReadRateLimitWait: a plan whose analytics export
// waits for the read rate limit says so without putting the wait on a
// listing of the account, which these data sources do not take.
func TestMistakes_exportReadRateLimitWait(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) {
		st.Limits.Read, st.Limits.Window = 1, emulator.Duration(10*time.Second) // the second read still waits 5 s or more on a loaded machine
	})
	w := s.workdir(t, "export-read-rate-limit-wait", "data \"shortlink_clicks\" \"all\" {}\ndata \"shortlink_analytics_export\" \"all\" {}\n")
	out, err := runCLI(context.Background(), w, "plan")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if n := strings.Count(flat, "Warning: Waited for the rate limit"); n != 1 || !strings.Contains(flat, "for the service's read rate limit") {
		t.Fatalf("the plan says %d times that it waited for the rate limit, want once, for the read limit:\n%s", n, out)
	}
	if strings.Contains(flat, "a listing of a large account") || !strings.Contains(flat, "analytics export") {
		t.Errorf("the warning puts the export's wait on a listing of the account's links:\n%s", out)
	}
}

// TestMistakes_rateLimitWait: an apply that waits for the rate limit says
// so, in a warning on the resources that waited and in the log at INFO, so
// that "Still creating..." never stands without a reason.
func TestMistakes_rateLimitWait(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) {
		st.Filter.Delay = 0
		st.Limits.Write, st.Limits.Window = 3, emulator.Duration(6*time.Second)
	})
	w := s.workdir(t, "rate-limit-wait", campaign(s.fx.DomainID, 6, halfWithSlugs))
	w.Setenv("TF_LOG_PROVIDER=INFO")
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Warning: Waited for the rate limit", "for the service's rate limit"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\[INFO\][^\n]*(waited for|waiting for) the rate limit`).MatchString(out) {
		t.Errorf("no INFO log line says the provider waited for the rate limit:\n%s", out)
	}
	if st, _ := w.State(); len(st) != 6 {
		t.Fatalf("the state holds %d links, want 6", len(st))
	}
}

// TestMistakes_planWarnings: a plan warns, once and on the attribute, about
// what would go wrong or be lost at apply: a slug the refresh saw taken, an
// expiry already past (only for a link being created), a replacement that
// loses the click history; and a list filtered by a domain with no link.
func TestMistakes_planWarnings(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "taken", 2); err != nil {
		t.Fatal(err)
	}
	// linkAt takes the slug as an expression, link as a string.
	linkAt := func(name, slug, extra string) string {
		return fmt.Sprintf("\nresource \"shortlink_link\" %q {\n  domain_id   = %q\n  destination = \"https://example.com/%s\"\n  slug        = %s\n%s}\n", name, s.fx.DomainID, name, slug, extra)
	}
	link := func(name, slug, extra string) string { return linkAt(name, strconv.Quote(slug), extra) }
	keep := link("keep", "keep", "")
	w := s.workdir(t, "plan-warnings", "provider \"shortlink\" {}\n"+keep)
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(ctx, w, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	configure := func(resources string) {
		t.Helper()
		if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+resources); err != nil {
			t.Fatal(err)
		}
	}
	expectCount := func(out, what string, want int) {
		t.Helper()
		// Terraform wraps a warning's detail at its width.
		if got := strings.Count(strings.Join(strings.Fields(out), " "), what); got != want {
			t.Fatalf("%q appears %d times, want %d:\n%s", what, got, want, out)
		}
	}
	run("apply", "-auto-approve")

	past := link("past", "past", "  expires_at  = \"2020-01-01T00:00:00Z\"\n")
	noDomain := "\ndata \"shortlink_links\" \"elsewhere\" {\n  domain_id = \"0b7c1f2e-0000-4000-8000-000000000000\"\n}\n"
	// UTM parameters known only at apply do not hide a holder that no UTM
	// parameters would let the create take over (another destination).
	campaign, campaignLater := knownAtApply(t, w, "campaign", "spring")
	unknownUTM := campaign + link("clash_later", "taken-1", "  utm = { campaign = "+campaignLater+" }\n")
	configure(keep + unknownUTM)
	out := run("plan")
	expectCount(out, `Warning: Slug "taken-1" already taken`, 1)
	expectCount(out, s.fx.DomainID+"/taken-1", 1)

	// Terraform drops a misspelt name in timeouts unsaid: a timeouts that
	// then sets nothing is warned of; one that sets a timeout is not.
	configure(keep + link("late", "late", "  timeouts = { craete = \"10m\" }\n"))
	expectCount(run("plan"), "Warning: Empty timeouts", 1)
	configure(keep + link("late", "late", "  timeouts = { create = \"10m\" }\n"))
	expectCount(run("plan"), "Empty timeouts", 0)

	// Each slug held has its own summary: Terraform shows one warning in
	// full per summary, folding the rest into "more similar warnings".
	configure(keep + past + link("clash", "taken-0", "") + link("clash_too", "taken-1", "") + noDomain)
	out = run("plan")
	expectCount(out, "Warning: No link on this domain", 1)
	expectCount(out, `Warning: Slug "taken-0" already taken`, 1)
	expectCount(out, `Warning: Slug "taken-1" already taken`, 1)
	expectCount(out, "more similar warning", 0)
	expectCount(out, s.fx.DomainID+"/taken-0", 1)
	expectCount(out, s.fx.DomainID+"/taken-1", 1)
	expectCount(out, "Warning: Expiry in the past", 1)

	configure(keep + past)
	expectCount(run("apply", "-auto-approve"), "Warning: Expiry in the past", 1)
	expectCount(run("plan"), "Expiry in the past", 0) // expired after creation: not the plan's concern

	later := link("keep", "keep", "  expires_at  = \"2099-01-01T00:00:00Z\"\n")
	configure(later + past)
	out = run("plan")
	expectCount(out, "Warning: Replacing the link loses its click history", 1)
	expectCount(out, "the same short URL", 1)

	// A replacement creates a link: one already expired is warned of at
	// plan, as a new one is.
	expired := link("keep", "keep", "  expires_at  = \"2020-06-01T00:00:00Z\"\n")
	configure(expired + past)
	out = run("plan")
	expectCount(out, "Warning: Replacing the link loses its click history", 1)
	expectCount(out, "Warning: Expiry in the past", 1)

	// A replacement at a slug another link holds is warned of as a create
	// is: Terraform shows no warning of the create it plans next, and the
	// apply would delete the old link before the create fails with 409.
	configure(link("keep", "taken-1", "") + past)
	out = run("plan")
	expectCount(out, "Warning: Replacing the link loses its click history", 1)
	expectCount(out, `Warning: Slug "taken-1" already taken`, 1)
	expectCount(out, s.fx.DomainID+"/taken-1", 1)

	// A slug known only at apply replaces the link whatever it turns out
	// to be, and the plan says what that loses.
	revision, slugLater := knownAtApply(t, w, "revision", "keep")
	configure(revision + linkAt("keep", slugLater, "") + past)
	out = run("plan")
	// One attribute forces it: one line of the diff says so (Terraform 1.5.7
	// writes the mark on both sides of a value known only at apply).
	if n := len(regexp.MustCompile(`(?m)^.*# forces replacement.*$`).FindAllString(out, -1)); n != 1 {
		t.Fatalf("%d lines say \"# forces replacement\", want 1:\n%s", n, out)
	}
	expectCount(out, "Warning: Replacing the link loses its click history", 1)
	expectCount(out, "at a slug known only at apply", 1)
}

// TestMistakes_replacementShortURLWarning: a slug changed through a
// variable or a for_each map (as from a CSV) warns of a new short URL at
// the new slug, never that no slug is set, and says nothing of
// create_before_destroy; a link without a slug replaced for its expiry
// warns of a new short URL the service generates, never of the same one.
func TestMistakes_replacementShortURLWarning(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := fmt.Sprintf(`
provider "shortlink" {}

variable "slug" { type = string }
variable "campaign" { type = map(string) }
variable "expires_at" { type = string }

resource "shortlink_link" "single" {
  domain_id   = %[1]q
  slug        = var.slug
  destination = "https://example.com/single"
}

resource "shortlink_link" "campaign" {
  for_each    = var.campaign
  domain_id   = %[1]q
  slug        = each.value
  destination = "https://example.com/${each.key}"
}

resource "shortlink_link" "generated" {
  domain_id   = %[1]q
  destination = "https://example.com/generated"
  expires_at  = var.expires_at
}
`, s.fx.DomainID)
	w := s.workdir(t, "slug-rename", config)
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(ctx, w, args...)
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return out
	}
	const expires = "2099-01-01T00:00:00Z"
	run("apply", "-auto-approve", "-var", "slug=spring", "-var", `campaign={"mail":"spring-mail"}`, "-var", "expires_at="+expires)
	newSlug := func(slug string) map[string]int {
		return map[string]int{`a new short URL, at the slug "` + slug + `"`: 1, "no slug is set": 0, "create_before_destroy": 0}
	}
	// One change a plan: Terraform folds similar warnings into one.
	for _, c := range []struct {
		slug, campaign, expires string
		counts                  map[string]int
	}{
		{"summer", "spring-mail", expires, newSlug("summer")},
		{"spring", "summer-mail", expires, newSlug("summer-mail")},
		{"spring", "spring-mail", "2099-06-01T00:00:00Z", map[string]int{
			"a new short URL (no slug is set, so the service generates one)": 1, "the same short URL": 0}},
	} {
		out := run("plan", "-var", "slug="+c.slug, "-var", `campaign={"mail":"`+c.campaign+`"}`, "-var", "expires_at="+c.expires)
		flat := strings.Join(strings.Fields(out), " ") // the CLI wraps lines
		c.counts["Warning: Replacing the link loses its click history"] = 1
		for what, want := range c.counts {
			if got := strings.Count(flat, what); got != want {
				t.Errorf("%q appears %d times, want %d:\n%s", what, got, want, out)
			}
		}
	}
}

// TestMistakes_utmStepRefused: the service refuses the second write of a
// new link with UTM parameters (here 402: the month's quota ran out between
// the two writes). The link is kept in the state as tainted and the error
// says how to keep it; after `terraform untaint` the next apply sets the
// parameters in place: the same link, no create, and then no change.
func TestMistakes_utmStepRefused(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := s.workdir(t, "utm-step-refused", campaign(s.fx.DomainID, 1, func(int) bool { return true }))
	s.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusPaymentRequired, Method: http.MethodPatch})
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err == nil {
		t.Fatalf("the apply succeeded; want the UTM step's 402:\n%s", out)
	}
	for _, want := range []string{"Could not set the UTM parameters of the new link", "402 link_quota", "recorded in the state as tainted", "terraform untaint"} {
		if !strings.Contains(out, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, out)
		}
	}
	created := s.linkIDs()
	if len(created) != 1 {
		t.Fatalf("the service holds links %v, want the one created", created)
	}
	// The plan replaces the tainted link, whose slug it holds: the warning
	// says that is the resource's own link first, not a duplicate to find.
	out, err = runCLI(ctx, w, "plan")
	if flat := strings.Join(strings.Fields(out), " "); err != nil || !strings.Contains(flat, `Slug "promo-0" held by a link of this configuration`) ||
		!strings.Contains(flat, "If it is this resource's own link, being replaced (tainted by an interrupted or failed apply, or -replace), nothing more is needed") {
		t.Fatalf("the plan of the tainted link does not say its slug is held by its own link: %v\n%s", err, out)
	}
	if out, err := w.Terraform(ctx, runLimit, "untaint", "shortlink_link.l00"); err != nil {
		t.Fatalf("untaint: %v\n%s", err, out)
	}
	creates := s.srv.Count(http.MethodPost, "/api/links")
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("the apply after untaint: %v\n%s", err, out)
	}
	if n := s.srv.Count(http.MethodPost, "/api/links"); n != creates {
		t.Errorf("the apply after untaint sent %d creates, want none", n-creates)
	}
	links := s.srv.Links(s.fx.AccountID)
	if len(links) != 1 || links[0].ID != created[0] || links[0].UTM == nil || links[0].UTM.Source != "newsletter" {
		t.Fatalf("the service holds %+v; want link %s with its UTM parameters", links, created[0])
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); clitest.ExitCode(err) != 0 {
		t.Fatalf("the plan after it is not empty: %v\n%s", err, out)
	}
}

// TestMistakes_createMadeButUnanswered: a create the service carried out
// but whose answer was lost is not sent again: the link it made is found,
// managed, and named in a warning that says what else it may be.
func TestMistakes_createMadeButUnanswered(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := s.workdir(t, "create-unanswered", campaign(s.fx.DomainID, 1, func(int) bool { return false }))
	s.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPost})
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	ids := s.linkIDs()
	if len(ids) != 1 || s.srv.Count(http.MethodPost, "/api/links") != 1 {
		t.Fatalf("the service holds links %v after %d creates; want one, created once", ids, s.srv.Count(http.MethodPost, "/api/links"))
	}
	flat := strings.Join(strings.Fields(out), " ") // the CLI wraps lines
	for _, want := range []string{"Warning: Found link " + ids[0] + " after the create's error", "most probably the one that create made", "terraform state rm` on this resource and plan again", "an apply without an import creates a new link"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, out)
		}
	}
}

// TestMistakes_createAnsweredBeforeTheServiceMadeIt: a gateway answers the
// first create 504 at once and the service makes the link seconds later,
// after the search for it has found nothing and the create has been sent
// again. A link without a slug meets no 409, so the second create makes a
// second link: the apply must end with one link all the same, managed,
// and named in the warning.
func TestMistakes_createAnsweredBeforeTheServiceMadeIt(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = emulator.Duration(3 * time.Second) })
	w := s.workdir(t, "create-answered-before-made", campaign(s.fx.DomainID, 1, func(int) bool { return false }))
	s.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost})
	ctx := context.Background()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
		t.Fatal(err)
	}
	ids, inState := s.linkIDs(), stateIDs(t, w)
	if len(ids) != 1 || !slices.Equal(ids, inState) {
		t.Fatalf("the service holds links %v and the state %v; want one link, the state's\n%s", ids, inState, out)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "Warning: Found link "+ids[0]+" after the create's error") {
		t.Errorf("the apply's output does not name link %s:\n%s", ids[0], out)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); clitest.ExitCode(err) != 0 {
		t.Fatalf("the plan after it is not empty: %v\n%s", err, out)
	}
}

// TestMistakes_createAnsweredBeforeTheServiceMadeItTwice: a gateway
// answers the create 504 at once twice, and the service makes a link for
// each, seconds later. The second attempt's search finds the first's link
// and the resource manages it; the second link, which nothing but that
// search could tell from another configuration's, is left on the account,
// but the apply names it in a warning rather than end without a word.
func TestMistakes_createAnsweredBeforeTheServiceMadeItTwice(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = emulator.Duration(3 * time.Second) })
	w := s.workdir(t, "create-answered-before-made-twice", campaign(s.fx.DomainID, 1, func(int) bool { return false }))
	early := emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Method: http.MethodPost}
	s.srv.InjectFaults(early, early)
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve")
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
		t.Fatal(err)
	}
	inState := stateIDs(t, w)
	var unrecorded []string
	for _, id := range s.linkIDs() {
		if !slices.Contains(inState, id) {
			unrecorded = append(unrecorded, id)
		}
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, id := range unrecorded {
		if !strings.Contains(flat, "Warning: Link "+id+" duplicates this resource's link") {
			t.Errorf("link %s is on the service in no state, and the apply does not name it:\n%s", id, out)
		}
	}
}

// TestMistakes_listingUnreadableAtPlan: a plan of new links whose check
// cannot list the account (the answer is cut short, every time) goes on
// without the check, and says so, rather than fail a plan the apply may
// carry out.
func TestMistakes_listingUnreadableAtPlan(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/links" {
			s.srv.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"id":"x","slug":"x"`) // cut short
	}))
	t.Cleanup(proxy.Close)
	w := s.workdir(t, "listing-unreadable", campaign(s.fx.DomainID, 2, halfWithSlugs))
	w.Setenv("SHORTLINK_BASE_URL=" + proxy.URL)
	out, err := runCLI(context.Background(), w, "plan")
	if err != nil {
		t.Fatalf("the plan failed: %v\n%s", err, out)
	}
	for _, want := range []string{"Warning: New link not checked against the service", "it was cut short", "The plan goes on without the check", "2 to add"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("the plan's output lacks %q:\n%s", want, out)
		}
	}
}

// TestMistakes_clicksOfADeletedLink: shortlink_clicks names a link by ID
// that another configuration then deleted. Every plan reads the data
// source, a destroy's too, and fails naming link_id; the message's way out,
// terraform destroy -refresh=false, destroys without reading it.
func TestMistakes_clicksOfADeletedLink(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	seeded, err := s.srv.SeedLinks(s.fx.DomainID, "elsewhere", 1)
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("provider \"shortlink\" {}\n\nresource \"shortlink_link\" \"own\" {\n  domain_id   = %q\n  destination = \"https://example.com/own\"\n}\n\ndata \"shortlink_clicks\" \"other\" {\n  link_id = %q\n}\n", s.fx.DomainID, seeded[0].ID)
	w := s.workdir(t, "clicks-of-a-deleted-link", config)
	ctx := context.Background()
	run := func(args ...string) (string, error) {
		return runCLI(ctx, w, args...)
	}
	if out, err := run("apply", "-auto-approve"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if err := s.srv.DeleteLinkOutOfBand(seeded[0].ID); err != nil {
		t.Fatal(err)
	}
	if out, err := run("destroy", "-auto-approve"); err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "terraform destroy -refresh=false destroys without reading it") {
		t.Fatalf("destroy: %v; want it to fail on link_id, naming the way out\n%s", err, out)
	}
	if out, err := run("destroy", "-auto-approve", "-refresh=false"); err != nil {
		t.Fatalf("destroy -refresh=false: %v\n%s", err, out)
	}
	if ids := s.linkIDs(); len(ids) != 0 {
		t.Errorf("the service holds %v after the destroy, want nothing", ids)
	}
}

// TestMistakes_destroyThroughAnotherAccount: links applied through one
// provider configuration, whose resources are then given an alias of
// another account (a brand's link moved to another brand's provider) and
// destroyed without a refresh, as the error of the refresh proposes. The
// other account answers every delete with 404; the links leave the state
// but stay on their account, and the destroy must say so rather than
// report them destroyed. A 404 on a domain the account lists (one link
// deleted outside Terraform, with the right key) warns of nothing.
func TestMistakes_destroyThroughAnotherAccount(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	other, err := s.srv.SeedFixture("other", "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	links := func(provider string) string { return brandLinks(s, other.APIKey, provider, "https://example.com/") }
	ctx := context.Background()
	const warning = "Warning: Link removed from the state only"

	moved := s.appliedWorkdir(t, "destroy-through-another-account", links("shortlink"))
	ids := s.linkIDs()
	if err := moved.WriteFile("main.tf", clitest.RequiredProviders+links("shortlink.other")); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(ctx, moved, "destroy", "-auto-approve", "-refresh=false")
	if err != nil {
		t.Fatalf("destroy -refresh=false: %v\n%s", err, out)
	}
	flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "`", "")), " ")
	for _, want := range []string{warning, "is still on its own account and no state records it", "terraform import with the address of the resource that declared https://"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the destroy's output lacks %q:\n%s", want, out)
		}
	}
	if got := s.linkIDs(); !slices.Equal(got, ids) {
		t.Errorf("the service holds %v, want the links %v untouched", got, ids)
	}

	// The right account, one link deleted outside Terraform: no warning.
	for _, id := range ids {
		if err := s.srv.DeleteLinkOutOfBand(id); err != nil {
			t.Fatal(err)
		}
	}
	w := s.appliedWorkdir(t, "destroy-one-deleted-outside", links("shortlink"))
	if err := s.srv.DeleteLinkOutOfBand(s.linkIDs()[0]); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "destroy", "-auto-approve", "-refresh=false"); err != nil || strings.Contains(out, warning) {
		t.Errorf("destroy -refresh=false with the right key: %v; want it to succeed without %q\n%s", err, warning, out)
	}
	if got := s.linkIDs(); len(got) != 0 {
		t.Errorf("the service holds %v after the destroy, want nothing", got)
	}
}

// brandLinks declares three links of s's account through provider, beside
// an alias "other" of the account whose key is otherKey.
func brandLinks(s *service, otherKey, provider, destination string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider \"shortlink\" {}\n\nprovider \"shortlink\" {\n  alias    = \"other\"\n  base_url = %q\n  api_key  = %q\n}\n", s.url, otherKey)
	for i := range 3 {
		fmt.Fprintf(&b, "\nresource \"shortlink_link\" \"l%d\" {\n  provider    = %s\n  domain_id   = %q\n  slug        = \"brand-%d\"\n  destination = \"%s%d\"\n}\n", i, provider, s.fx.DomainID, i, destination, i)
	}
	return b.String()
}

// TestMistakes_changeThroughAnotherAccount: links whose resources are given
// an alias of another account and a new destination, applied without a
// refresh. The other account answers every change with 404; the error must
// not say the links were deleted outside Terraform, but name the key,
// base_url or provider, and nothing may change.
func TestMistakes_changeThroughAnotherAccount(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	other, err := s.srv.SeedFixture("other", "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	w := s.appliedWorkdir(t, "change-through-another-account", brandLinks(s, other.APIKey, "shortlink", "https://example.com/"))
	before := s.linksBySlug()
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+brandLinks(s, other.APIKey, "shortlink.other", "https://example.com/new/")); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve", "-refresh=false")
	if err == nil {
		t.Fatalf("the apply through another account succeeded:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	if strings.Contains(flat, "was deleted outside Terraform") {
		t.Errorf("the error says the links were deleted outside Terraform:\n%s", out)
	}
	for _, want := range []string{"is another account's", "after the resource's provider was changed to another alias", "Nothing was changed"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the apply's output lacks %q:\n%s", want, out)
		}
	}
	if after := s.linksBySlug(); !maps.EqualFunc(before, after, func(a, b emulator.Link) bool { return a.ID == b.ID && a.Destination == b.Destination }) {
		t.Errorf("the links changed: %v, then %v", before, after)
	}
	if n := len(stateIDs(t, w)); n != 3 {
		t.Errorf("the state records %d links, want 3", n)
	}
}

// TestMistakes_emptySettingTakenFromEnvironment: an alias for a second
// account whose key and base URL come from variables left at a default of
// "" takes the environment's, the first account's: the plan warns of each
// on its setting, never quoting the key; with the variables given, or null
// (the environment's taken on purpose), it says nothing of them.
func TestMistakes_emptySettingTakenFromEnvironment(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := fmt.Sprintf("variable \"other_key\" {\n  type      = string\n  default   = \"\"\n  sensitive = true\n}\n\nvariable \"other_url\" {\n  type    = string\n  default = \"\"\n}\n\n"+
		"provider \"shortlink\" {}\n\nprovider \"shortlink\" {\n  alias    = \"other\"\n  base_url = var.other_url\n  api_key  = var.other_key\n}\n\n"+
		"resource \"shortlink_link\" \"spring\" {\n  provider    = shortlink.other\n  domain_id   = %q\n  destination = \"https://shop.example.com/spring\"\n}\n", s.fx.DomainID)
	w := s.workdir(t, "empty-setting-from-env", config)
	ctx := context.Background()
	out, err := runCLI(ctx, w, "plan")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Warning: api_key is empty: SHORTLINK_API_KEY is used", "Warning: base_url is empty: SHORTLINK_BASE_URL is used", "another account's"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, s.fx.APIKey) {
		t.Errorf("the plan's output quotes the API key:\n%s", out)
	}
	out, err = runCLI(ctx, w, "plan", "-var", "other_key="+s.fx.APIKey, "-var", "other_url="+s.url)
	if err != nil || strings.Contains(out, "is empty:") {
		t.Errorf("plan with both variables given: %v; want no warning of an empty setting\n%s", err, out)
	}
	if err := w.WriteFile("null.tfvars", "other_key = null\nother_url = null\n"); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(ctx, w, "plan", "-var-file=null.tfvars")
	if err != nil || strings.Contains(out, "is empty:") {
		t.Errorf("plan with both variables null: %v; want the environment's settings taken unsaid\n%s", err, out)
	}
}

// TestMistakes_deleteAnsweredWithAServerErrorButCarriedOut: the service
// deletes its domain's only link and answers 500 all the same, and again
// to the retry. The destroy fails saying the delete may have been carried
// out; the next plan drops the link with a warning, rather than take the
// emptied domain for the sign of another account's key and fail, and the
// destroy run again finishes.
func TestMistakes_deleteAnsweredWithAServerErrorButCarriedOut(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	config := fmt.Sprintf("provider \"shortlink\" {\n  max_retries = 1\n}\n\nresource \"shortlink_link\" \"only\" {\n  domain_id   = %q\n  slug        = \"only\"\n  destination = \"https://example.com/only\"\n}\n", s.fx.DomainID)
	w := s.appliedWorkdir(t, "delete-answered-500", config)
	failed := emulator.Fault{Kind: emulator.FaultAnswerBeforeCommit, Status: http.StatusInternalServerError, Method: http.MethodDelete, Path: "/api/links/{id}"}
	s.srv.SetFaults(emulator.FaultPlan{Script: []emulator.Fault{failed, failed}})
	ctx := context.Background()
	out, err := runCLI(ctx, w, "destroy", "-auto-approve")
	if err == nil {
		t.Fatalf("the destroy succeeded although every delete was answered 500:\n%s", out)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "The service may have carried this request out before it failed") {
		t.Errorf("the destroy's error does not say the delete may have been carried out:\n%s", out)
	}
	if err := s.writes.WaitIdle(2 * writeDelay); err != nil {
		t.Fatal(err)
	}
	if ids := s.linkIDs(); len(ids) != 0 {
		t.Fatalf("the service still holds %v; the fault should have deleted the link", ids)
	}
	if out, err := runCLI(ctx, w, "plan"); err != nil || !strings.Contains(out, "Warning: Link deleted by an earlier run") {
		t.Fatalf("the plan after the failed destroy: %v; want it to warn that the link was deleted by the earlier run\n%s", err, out)
	}
	if out, err := runCLI(ctx, w, "destroy", "-auto-approve"); err != nil {
		t.Fatalf("the destroy run again failed: %v\n%s", err, out)
	}
	if ids := stateIDs(t, w); len(ids) != 0 {
		t.Fatalf("the state still records %v after the second destroy", ids)
	}
}
