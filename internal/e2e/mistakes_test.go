package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestMistakes_badBaseURL: a plan of 15 links in the state against a
// base_url that cannot work fails with one error that says what is wrong,
// not one per link, and without retrying each link for minutes. The time
// is logged (not asserted: machines are shared and noisy).
func TestMistakes_badBaseURL(t *testing.T) {
	for name, tc := range map[string]struct {
		baseURL func(s *service) string
		summary string
		detail  string
	}{
		"unreachable": {
			baseURL: func(*service) string { return "http://" + clitest.ClosedAddr(t) },
			summary: "Error: Cannot reach the short-link service",
			detail:  "connection refused",
		},
		"wrong path": {
			baseURL: func(s *service) string { return s.url + "/api" },
			summary: "Error: base_url does not lead to the short-link service's API",
			detail:  "/api/api/links",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = 0 })
			w := s.workdir(t, "bad-base-url-"+strings.ReplaceAll(name, " ", "-"), campaign(s.fx.DomainID, 15, halfWithSlugs))
			ctx := context.Background()
			if _, err := w.Terraform(ctx, runLimit, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
				t.Fatal(err)
			}
			w.Setenv("SHORTLINK_BASE_URL=" + tc.baseURL(s))
			start := time.Now()
			out, err := w.Terraform(ctx, runLimit, "plan", "-input=false", "-no-color")
			t.Logf("%s: the plan of 15 links failed after %s", name, time.Since(start).Round(100*time.Millisecond))
			if err == nil {
				t.Fatalf("the plan succeeded against a bad base_url:\n%s", out)
			}
			if n := strings.Count(out, "Error: "); n != 1 || !strings.Contains(out, tc.summary) || !strings.Contains(out, tc.detail) {
				t.Fatalf("want exactly one error, %q naming %q; got %d errors:\n%s", tc.summary, tc.detail, n, out)
			}
			if strings.Contains(out, "deleted outside Terraform") {
				t.Fatalf("a bad base_url made links look deleted:\n%s", out)
			}
			if st, _ := w.State(); len(st) != 15 {
				t.Fatalf("the state holds %d links after the failed plan, want all 15", len(st))
			}
		})
	}
}

// TestMistakes_planWarnings: a plan warns, once and on the attribute, about
// what would go wrong or be lost at apply: a slug the refresh saw taken, an
// expiry already past (only for a link being created), a replacement that
// loses the click history; and a list filtered by a domain with no link.
func TestMistakes_planWarnings(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = 0 })
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "taken", 1); err != nil {
		t.Fatal(err)
	}
	link := func(name, slug, extra string) string {
		return fmt.Sprintf("\nresource \"shortlink_link\" %q {\n  domain_id   = %q\n  destination = \"https://example.com/%s\"\n  slug        = %q\n%s}\n", name, s.fx.DomainID, name, slug, extra)
	}
	keep := link("keep", "keep", "")
	w := s.workdir(t, "plan-warnings", "provider \"shortlink\" {}\n"+keep)
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := w.Terraform(ctx, runLimit, append(args, "-input=false", "-no-color")...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	expectCount := func(out, what string, want int) {
		t.Helper()
		if got := strings.Count(out, what); got != want {
			t.Fatalf("%q appears %d times, want %d:\n%s", what, got, want, out)
		}
	}
	run("apply", "-auto-approve")

	past := link("past", "past", "  expires_at  = \"2020-01-01T00:00:00Z\"\n")
	noDomain := "\ndata \"shortlink_links\" \"elsewhere\" {\n  domain_id = \"0b7c1f2e-0000-4000-8000-000000000000\"\n}\n"
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+keep+past+link("clash", "taken-0", "")+noDomain); err != nil {
		t.Fatal(err)
	}
	out := run("plan")
	expectCount(out, "Warning: No link on this domain", 1)
	expectCount(out, "Warning: Slug already taken", 1)
	expectCount(out, s.fx.DomainID+"/taken-0", 1)
	expectCount(out, "Warning: Expiry in the past", 1)

	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+keep+past); err != nil {
		t.Fatal(err)
	}
	expectCount(run("apply", "-auto-approve"), "Warning: Expiry in the past", 1)
	expectCount(run("plan"), "Expiry in the past", 0) // expired after creation: not the plan's concern

	later := link("keep", "keep", "  expires_at  = \"2099-01-01T00:00:00Z\"\n")
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+"provider \"shortlink\" {}\n"+later+past); err != nil {
		t.Fatal(err)
	}
	out = run("plan")
	expectCount(out, "Warning: Replacing the link loses its click history", 1)
	expectCount(out, "the same short URL", 1)
}

// TestMistakes_slugRenameWarning: a slug changed through a variable or a
// for_each map (as from a CSV) warns of a new short URL at the new slug,
// never that no slug is set, and says nothing of create_before_destroy.
func TestMistakes_slugRenameWarning(t *testing.T) {
	t.Parallel()
	s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = 0 })
	config := fmt.Sprintf(`
provider "shortlink" {}

variable "slug" { type = string }
variable "campaign" { type = map(string) }

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
`, s.fx.DomainID)
	w := s.workdir(t, "slug-rename", config)
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := w.Terraform(ctx, runLimit, append(args, "-input=false", "-no-color")...)
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return out
	}
	run("apply", "-auto-approve", "-var", "slug=spring", "-var", `campaign={"mail":"spring-mail"}`)
	// One change a plan: Terraform folds similar warnings into one.
	for _, c := range []struct{ slug, campaign, want string }{
		{"summer", "spring-mail", `a new short URL, at the slug "summer"`},
		{"spring", "summer-mail", `a new short URL, at the slug "summer-mail"`},
	} {
		out := run("plan", "-var", "slug="+c.slug, "-var", `campaign={"mail":"`+c.campaign+`"}`)
		flat := strings.Join(strings.Fields(out), " ") // the CLI wraps lines
		for what, want := range map[string]int{
			"Warning: Replacing the link loses its click history": 1,
			c.want:                  1,
			"no slug is set":        0,
			"create_before_destroy": 0,
		} {
			if got := strings.Count(flat, what); got != want {
				t.Errorf("%q appears %d times, want %d:\n%s", what, got, want, out)
			}
		}
	}
}
