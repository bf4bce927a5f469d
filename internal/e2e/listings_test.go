package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestListings_applyListsOnlyOnOpenTofuAndTerraformBelow1_9: a listing is
// the whole account (17 minutes for a million links paged by 100 at the
// spec's read limit), and an apply does not list it again for new links
// whose slugs the plan checked. Terraform plans each change once more just
// before applying it; that plan skips the check, which it tells by the
// deferred actions it allows (Terraform 1.9 and later). `terraform apply`
// lists once (its plan; twice before), the apply of a saved plan not at
// all (once before), new links without a slug too: their search for the
// leftovers of interrupted runs is the plan's. OpenTofu's plan before
// applying cannot be told from its first (it allows no deferred actions),
// nor can Terraform's before 1.9 (it sends no client capabilities), so
// there each apply lists once more; the guide Large accounts says so.
func TestListings_applyListsOnlyOnOpenTofuAndTerraformBelow1_9(t *testing.T) {
	s := newService(t, instantFilter)
	allSlugs := func(int) bool { return true }
	w := s.workdir(t, "apply-lists-once", campaign(s.fx.DomainID, 6, allSlugs))
	ctx := context.Background()
	again := 0 // the listings of the plan before applying, where it allows no deferred actions
	if isOpenTofu(t, w) || !cliAtLeast(t, w, 9, 0) {
		again = 1
	}
	listings := func(command string, args ...string) int {
		t.Helper()
		before := s.srv.Count(http.MethodGet, "/api/links")
		if out, err := w.Terraform(ctx, runLimit, append([]string{command, "-input=false", "-no-color"}, args...)...); err != nil {
			t.Fatalf("%s: %v\n%s", command, err, out)
		}
		return s.srv.Count(http.MethodGet, "/api/links") - before
	}

	if n := listings("apply", "-auto-approve"); n != 1+again {
		t.Errorf("an apply of 6 new links with slugs listed the account %d times, want %d", n, 1+again)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+(campaign(s.fx.DomainID, 10, allSlugs))); err != nil {
		t.Fatal(err)
	}
	if n := listings("plan", "-out=tfplan"); n != 1 {
		t.Errorf("the plan of 4 more links listed the account %d times, want 1 (refresh and checks share it)", n)
	}
	if n := listings("apply", "tfplan"); n != again {
		t.Errorf("the apply of the saved plan listed the account %d times, want %d", n, again)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+(campaign(s.fx.DomainID, 12, func(i int) bool { return i < 10 }))); err != nil {
		t.Fatal(err)
	}
	listings("plan", "-out=tfplan")
	if n := listings("apply", "tfplan"); n != again {
		t.Errorf("the apply of 2 new links without slugs listed the account %d times, want %d", n, again)
	}
	if ids := s.linkIDs(); len(ids) != 12 {
		t.Errorf("the service holds %d links, want the 12 declared, each once", len(ids))
	}
}

// TestListings_replacementCreatedBeforeDestroyWarnsWhereTheApplyLists: a
// replacement asked for with -replace, created before destroy, takes over
// its own old link (created within adoption_window), whatever the CLI. Where
// the apply lists again (OpenTofu, Terraform before 1.9), the create's plan
// at apply sees only what the apply changes, and warns that the slug is held
// by a link it would take over, as the resource's page says; where it does
// not, the apply shows no such warning.
func TestListings_replacementCreatedBeforeDestroyWarnsWhereTheApplyLists(t *testing.T) {
	s := newService(t, instantFilter)
	config := "provider \"shortlink\" {}\n" + createdBeforeDestroy(linkBlock("sale", s.fx.DomainID, "sale", "https://shop.example.com/sale"))
	w := s.appliedWorkdir(t, "replace-created-before-destroy", config)
	kept := stateIDs(t, w)
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve", "-replace=shortlink_link.sale")
	if err != nil || !strings.Contains(out, "Link kept for the object that took it over") {
		t.Fatalf("apply -replace: %v; want the old object's destroy to keep the link\n%s", err, out)
	}
	if ids := stateIDs(t, w); len(ids) != 1 || ids[0] != kept[0] {
		t.Fatalf("the state names links %v after the replacement; want link %v kept", ids, kept)
	}
	warned := strings.Contains(out, `Warning: Slug "sale" held by a link this resource would take over`)
	if listsAgain := isOpenTofu(t, w) || !cliAtLeast(t, w, 9, 0); warned != listsAgain {
		t.Fatalf("the apply warned that the create would take the slug's link over: %t; want %t (the apply lists again: %t)\n%s", warned, listsAgain, listsAgain, out)
	}
}

// isOpenTofu is whether the CLI the tests run is OpenTofu.
func isOpenTofu(t *testing.T, w *clitest.Workdir) bool {
	t.Helper()
	out, err := w.Terraform(context.Background(), time.Minute, "version")
	if err != nil {
		t.Fatal(err)
	}
	return strings.HasPrefix(strings.TrimSpace(out), "OpenTofu")
}

// A plan of new links lists the account to check their slugs; on a large
// account that listing waits for the read limit, and the plan says so, as
// a refresh does (the state holds no link here: nothing else lists).
func TestListings_aPlanThatWaitsToListSaysSo(t *testing.T) {
	s := newService(t, instantFilter, func(st *emulator.Settings) {
		st.Limits.Read, st.Limits.Window = 1, emulator.Duration(3*time.Second)
		st.Variants.Paging, st.Variants.PageSize = "cursor", 2
	})
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "dashboard", 5); err != nil {
		t.Fatal(err)
	}
	w := s.workdir(t, "plan-waits-to-list", campaign(s.fx.DomainID, 2, func(int) bool { return true }))
	out, err := w.Terraform(context.Background(), runLimit, "plan", "-input=false", "-no-color")
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if unwrapped := strings.Join(strings.Fields(out), " "); !strings.Contains(unwrapped, "Warning: Waited for the rate limit") || !strings.Contains(unwrapped, "for the service's read rate limit") {
		t.Fatalf("the plan waited for the read limit without saying so:\n%s", out)
	}
}

// TestListings_aPlanListsOnceForAll: a plan that refreshes links, checks
// new links with and without a slug, looks links up with shortlink_link by
// slug and by ID, and imports a link by <domain_id>/<slug> (where the CLI
// has import blocks) lists the account once, as the guide Large accounts
// says: every one of them is served from that listing.
func TestListings_aPlanListsOnceForAll(t *testing.T) {
	s := newService(t, instantFilter)
	applied := campaign(s.fx.DomainID, 2, func(int) bool { return true })
	w := s.appliedWorkdir(t, "plan-lists-once", applied)
	outside, err := s.srv.SeedLinks(s.fx.DomainID, "dashboard", 1)
	if err != nil {
		t.Fatal(err)
	}
	config := applied + linkBlock("with_slug", s.fx.DomainID, "new-with-slug", "https://example.com/new") +
		linkBlock("without_slug", s.fx.DomainID, "", "https://example.com/new") +
		fmt.Sprintf("data \"shortlink_link\" \"by_slug\" {\n  domain_id = %q\n  slug      = \"promo-0\"\n}\n", s.fx.DomainID) +
		"data \"shortlink_link\" \"by_id\" {\n  id = shortlink_link.l01.id\n}\n"
	if cliAtLeast(t, w, 5, 6) {
		config += linkBlock("adopted", s.fx.DomainID, outside[0].Slug, outside[0].Destination) +
			fmt.Sprintf("import {\n  to = shortlink_link.adopted\n  id = \"%s/%s\"\n}\n", s.fx.DomainID, outside[0].Slug)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+config); err != nil {
		t.Fatal(err)
	}
	before := s.srv.Count(http.MethodGet, "/api/links")
	out, err := runCLI(context.Background(), w, "plan")
	if err != nil || !strings.Contains(out, "2 to add") {
		t.Fatalf("plan: %v; want the two new links planned\n%s", err, out)
	}
	if n := s.srv.Count(http.MethodGet, "/api/links") - before; n != 1 {
		t.Errorf("the plan listed the account %d times, want once for the refresh, the checks, the lookups and the import\n%s", n, out)
	}
}
