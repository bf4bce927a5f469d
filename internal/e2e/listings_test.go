package e2e

import (
	"context"
	"net/http"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
)

// TestListings_applyDoesNotListAgain: a listing is the whole account (17
// minutes for a million links paged by 100 at the spec's read limit), and
// an apply does not list it again for new links whose slugs the plan
// checked. Terraform plans each change once more just before applying it;
// that plan skips the check. `terraform apply` lists once (its plan; twice
// before), the apply of a saved plan not at all (once before), new links
// without a slug too: their search for the leftovers of interrupted runs
// is made in the plan (it was made as each was created).
func TestListings_applyDoesNotListAgain(t *testing.T) {
	s := newService(t, instantFilter)
	allSlugs := func(int) bool { return true }
	w := s.workdir(t, "apply-lists-once", campaign(s.fx.DomainID, 6, allSlugs))
	ctx := context.Background()
	listings := func(command string, args ...string) int {
		t.Helper()
		before := s.srv.Count(http.MethodGet, "/api/links")
		if out, err := w.Terraform(ctx, runLimit, append([]string{command, "-input=false", "-no-color"}, args...)...); err != nil {
			t.Fatalf("terraform %s: %v\n%s", command, err, out)
		}
		return s.srv.Count(http.MethodGet, "/api/links") - before
	}

	if n := listings("apply", "-auto-approve"); n != 1 {
		t.Errorf("terraform apply of 6 new links with slugs listed the account %d times, want 1 (its plan)", n)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+(campaign(s.fx.DomainID, 10, allSlugs))); err != nil {
		t.Fatal(err)
	}
	if n := listings("plan", "-out=tfplan"); n != 1 {
		t.Errorf("the plan of 4 more links listed the account %d times, want 1 (refresh and checks share it)", n)
	}
	if n := listings("apply", "tfplan"); n != 0 {
		t.Errorf("the apply of the saved plan listed the account %d times, want 0", n)
	}
	if err := w.WriteFile("main.tf", clitest.RequiredProviders+(campaign(s.fx.DomainID, 12, func(i int) bool { return i < 10 }))); err != nil {
		t.Fatal(err)
	}
	listings("plan", "-out=tfplan")
	if n := listings("apply", "tfplan"); n != 0 {
		t.Errorf("the apply of 2 new links without slugs listed the account %d times, want 0", n)
	}
	if ids := s.linkIDs(); len(ids) != 12 {
		t.Errorf("the service holds %d links, want the 12 declared, each once", len(ids))
	}
}
