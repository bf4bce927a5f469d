package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
)

// The two recipes of docs/guides/adopting-links.md, run as a user would:
// links made in the dashboard are brought under Terraform without a single
// write to the service, and the configuration then plans no change.

// EnvTerraformQuery names a terraform of version 1.14 or later, for the
// test of the `terraform query` recipe; the CI's Terraform is older.
const EnvTerraformQuery = "SHORTLINK_TERRAFORM_QUERY"

// dashboardLinks are links a marketing team made outside Terraform.
type dashboardLinks struct {
	spring  []string // spring-0…2, on the fixture's domain
	webinar string   // spring-webinar: UTM parameters and an expiry
	expired string   // spring-2020: expired
	other   string   // on another domain
}

func seedDashboardLinks(t *testing.T, s *service) dashboardLinks {
	t.Helper()
	var d dashboardLinks
	seeded, err := s.srv.SeedLinks(s.fx.DomainID, "spring", 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range seeded {
		d.spring = append(d.spring, l.ID)
	}
	c := s.client(t)
	ctx := context.Background()
	create := func(domainID, slug, dest string, expires time.Time) string {
		t.Helper()
		l, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: domainID, Slug: slug, Destination: dest, ExpiresAt: &expires})
		if err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	d.webinar = create(s.fx.DomainID, "spring-webinar", "https://example.com/webinar", time.Date(2099, 3, 31, 23, 59, 59, 0, time.UTC))
	utm := &client.UTM{Source: "newsletter", Campaign: "spring"}
	if _, err := c.ChangeDestination(ctx, d.webinar, client.ChangeDestinationInput{Destination: "https://example.com/webinar", UTM: utm}); err != nil {
		t.Fatal(err)
	}
	d.expired = create(s.fx.DomainID, "spring-2020", "https://example.com/old", time.Date(2020, 3, 31, 23, 59, 59, 0, time.UTC))
	otherDomain, err := s.srv.AddDomain(s.fx.AccountID, "promo.example.test")
	if err != nil {
		t.Fatal(err)
	}
	d.other = create(otherDomain, "spring-promo", "https://example.com/promo", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	return d
}

// adoptService is an emulator with instant writes; adoption must not
// write, which expectNoWrites checks.
func adoptService(t *testing.T) *service {
	return newService(t, instantFilter)
}

func writes(s *service) int {
	inFlight, answered := s.writes.Counts()
	return inFlight + answered
}

// expectNoWrites checks that the service received no write since the
// count before.
func expectNoWrites(t *testing.T, s *service, before int) {
	t.Helper()
	if n := writes(s) - before; n != 0 {
		t.Fatalf("adopting the links sent %d writes to the service; it must send none", n)
	}
}

// expectAdopted checks that the state holds exactly ids and that the
// configuration plans no change.
func expectAdopted(t *testing.T, w *clitest.Workdir, ids []string) {
	t.Helper()
	if got, want := stateIDs(t, w), slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
		t.Fatalf("the state holds %v, want %v", got, want)
	}
	out, err := runCLI(context.Background(), w, "plan", "-detailed-exitcode")
	if err != nil {
		t.Fatalf("the plan after adopting the links is not empty (%v):\n%s", err, out)
	}
}

// applyAdoption applies the configuration that adopts the links ids: it
// must import each of them and change nothing, and leave them adopted
// (expectAdopted).
func applyAdoption(ctx context.Context, t *testing.T, w *clitest.Workdir, ids []string) {
	t.Helper()
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d imported, 0 added, 0 changed, 0 destroyed", len(ids)); !strings.Contains(out, want) {
		t.Fatalf("the apply did not say %q:\n%s", want, out)
	}
	expectAdopted(t, w, ids)
}

// TestAdopt_importBlocks is recipe (b), for every CLI (the CI's Terraform
// 1.11.4 among them): import blocks by link ID and by <domain_id>/<slug>,
// `plan -generate-config-out`, apply, with a key of the scope links:read
// alone, as the guide says is enough. A CLI that supports resource identity
// (Terraform or OpenTofu 1.12 and later) also imports one link by identity.
func TestAdopt_importBlocks(t *testing.T) {
	t.Parallel()
	s := adoptService(t)
	d := seedDashboardLinks(t, s)
	seeded := writes(s)
	w := s.workdir(t, "adopt-import-blocks", fmt.Sprintf("provider \"shortlink\" {\n  api_key = %q\n}\n", s.fx.ReadKey))
	skipBelow(t, w, 5, 6, "an import block")
	imports := fmt.Sprintf(`
import {
  to = shortlink_link.webinar
  id = %q
}

import {
  to = shortlink_link.spring_0
  id = "%s/spring-0"
}
`, d.webinar, s.fx.DomainID)
	adopted := []string{d.webinar, d.spring[0]}
	if identitySupported(t, w) {
		imports += fmt.Sprintf("\nimport {\n  to       = shortlink_link.spring_1\n  identity = { id = %q }\n}\n", d.spring[1])
		adopted = append(adopted, d.spring[1])
	}
	if err := w.WriteFile("imports.tf", imports); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "plan", "-generate-config-out=generated.tf"); err != nil {
		t.Fatalf("plan -generate-config-out: %v\n%s", err, out)
	}
	generated := readFile(t, filepath.Join(w.Dir, "generated.tf"))
	for _, want := range []string{`resource "shortlink_link" "webinar"`, `slug        = "spring-webinar"`, `source   = "newsletter"`, `expires_at  = "2099-03-31T23:59:59Z"`, `resource "shortlink_link" "spring_0"`} {
		if !strings.Contains(generated, want) {
			t.Fatalf("generated.tf lacks %q:\n%s", want, generated)
		}
	}
	applyAdoption(ctx, t, w, adopted)
	expectNoWrites(t, s, seeded)
}

// TestAdopt_linksTheProviderWouldNotCreate: links made outside Terraform
// that a configuration could not declare, as the adopting guide lists them
// (a destination with a password before its host; a query that sets a UTM
// parameter utm sets too), fail the plan of their generated blocks with the
// error any configuration would get, and their blocks are written for the
// user to edit.
func TestAdopt_linksTheProviderWouldNotCreate(t *testing.T) {
	t.Parallel()
	s := adoptService(t)
	c := s.client(t)
	ctx := context.Background()
	withCredentials, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: s.fx.DomainID, Slug: "partner", Destination: "https://user:pw@partner.example.com/offer"})
	if err != nil {
		t.Fatal(err)
	}
	utmTwice, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: s.fx.DomainID, Slug: "print", Destination: "https://shop.example.com/print?utm_source=print"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeDestination(ctx, utmTwice.ID, client.ChangeDestinationInput{Destination: "https://shop.example.com/print?utm_source=print", UTM: &client.UTM{Source: "news"}}); err != nil {
		t.Fatal(err)
	}
	seeded := writes(s)
	w := s.workdir(t, "adopt-not-creatable", "provider \"shortlink\" {}\n")
	skipBelow(t, w, 5, 6, "an import block")
	imports := fmt.Sprintf("import {\n  to = shortlink_link.partner\n  id = %q\n}\nimport {\n  to = shortlink_link.print\n  id = %q\n}\n", withCredentials.ID, utmTwice.ID)
	if err := w.WriteFile("imports.tf", imports); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(ctx, w, "plan", "-generate-config-out=generated.tf")
	for _, want := range []string{"Error: Invalid destination", "Error: UTM parameter set twice"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("the plan of the generated blocks: %v; want %q\n%s", err, want, out)
		}
	}
	generated := readFile(t, filepath.Join(w.Dir, "generated.tf"))
	for _, want := range []string{`resource "shortlink_link" "partner"`, `resource "shortlink_link" "print"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("generated.tf lacks %q, the block to edit:\n%s", want, generated)
		}
	}
	if strings.Contains(out, "pw@") || strings.Contains(out, "user:pw") {
		t.Errorf("the plan's output repeats the destination's password:\n%s", out)
	}
	expectNoWrites(t, s, seeded)
}

// TestAdopt_afterTheImport is what the adopting guide says around recipe
// (b): an ID that names no link fails the plan, naming it, while the other
// blocks' configuration is still written; a block given a timeouts block
// by hand counts as changed, and sends nothing; a removed block with
// destroy = false lets a link go without deleting it (Terraform 1.7 or
// OpenTofu 1.10 and later: on an older CLI the test skips there).
func TestAdopt_afterTheImport(t *testing.T) {
	t.Parallel()
	s := adoptService(t)
	d := seedDashboardLinks(t, s)
	seeded := writes(s)
	w := s.workdir(t, "adopt-after-the-import", "provider \"shortlink\" {}\n")
	skipBelow(t, w, 5, 6, "an import block")
	const unknownID = "0b9d4a52-6d7e-4c1a-8f2e-3a4b5c6d7e8f"
	block := func(name, id string) string {
		return fmt.Sprintf("import {\n  to = shortlink_link.%s\n  id = %q\n}\n", name, id)
	}
	if err := w.WriteFile("imports.tf", block("webinar", d.webinar)+block("mistaken", unknownID)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := runCLI(ctx, w, "plan", "-generate-config-out=generated.tf")
	if err == nil || !strings.Contains(out, unknownID) {
		t.Fatalf("the plan of an ID that names no link did not fail naming it: %v\n%s", err, out)
	}
	generated := readFile(t, filepath.Join(w.Dir, "generated.tf"))
	if !strings.Contains(generated, `resource "shortlink_link" "webinar"`) {
		t.Fatalf("generated.tf lacks the block of the link that exists:\n%s", generated)
	}
	// Without the mistaken block, and with timeouts written by hand.
	withTimeouts := regexp.MustCompile(`timeouts\s*=\s*null`).ReplaceAllString(generated, `timeouts = { create = "30m" }`)
	if withTimeouts == generated {
		t.Fatalf("generated.tf has no timeouts = null to replace:\n%s", generated)
	}
	if err := errors.Join(w.WriteFile("imports.tf", block("webinar", d.webinar)), w.WriteFile("generated.tf", withTimeouts)); err != nil {
		t.Fatal(err)
	}
	out, err = runCLI(ctx, w, "apply", "-auto-approve")
	if err != nil || !strings.Contains(out, "1 imported, 0 added, 1 changed, 0 destroyed") {
		t.Fatalf("the apply with timeouts written by hand: %v\n%s", err, out)
	}
	expectAdopted(t, w, []string{d.webinar})
	expectNoWrites(t, s, seeded)

	// A removed block lets the link go, and the service keeps it.
	skipBelow(t, w, 7, 10, "a removed block with a lifecycle block")
	removed := "removed {\n  from = shortlink_link.webinar\n  lifecycle {\n    destroy = false\n  }\n}\n"
	if err := errors.Join(w.WriteFile("imports.tf", removed), os.Remove(filepath.Join(w.Dir, "generated.tf"))); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("the apply of the removed block: %v\n%s", err, out)
	}
	if ids := stateIDs(t, w); len(ids) != 0 {
		t.Fatalf("the state still holds %v", ids)
	}
	if !slices.Contains(s.linkIDs(), d.webinar) {
		t.Fatalf("the removed block deleted link %s", d.webinar)
	}
	expectNoWrites(t, s, seeded)
}

// TestAdopt_query is recipe (a): a list block, `terraform query
// -generate-config-out`, apply. It needs Terraform 1.14 or later, named by
// SHORTLINK_TERRAFORM_QUERY.
func TestAdopt_query(t *testing.T) {
	s := adoptService(t)
	w := queryWorkdir(t, s, "adopt-query", listBlock("spring", s.fx.DomainID, "spring-"))
	d := seedDashboardLinks(t, s)
	seeded := writes(s)
	ctx := context.Background()
	out, err := w.Terraform(ctx, runLimit, "query", "-generate-config-out=links.tf", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	// Expired links and other domains' are left out; each listed link shows
	// its short URL and destination.
	want := append(slices.Clone(d.spring), d.webinar)
	for _, id := range want {
		if !regexp.MustCompile(`id=` + id + `\s+https://go\.example\.test/spring-\S+ \(→ https://example\.com/`).MatchString(out) {
			t.Fatalf("the query did not list %s with its short URL and destination:\n%s", id, out)
		}
	}
	for _, id := range []string{d.expired, d.other} {
		if strings.Contains(out, id) {
			t.Fatalf("the query listed %s, which its filters exclude:\n%s", id, out)
		}
	}
	generated := readFile(t, filepath.Join(w.Dir, "links.tf"))
	if n := strings.Count(generated, "identity = {"); n != len(want) {
		t.Fatalf("links.tf imports %d links by identity, want %d:\n%s", n, len(want), generated)
	}
	applyAdoption(ctx, t, w, want)
	expectNoWrites(t, s, seeded)
}

// TestAdopt_queryOfTwoListBlocksThatOverlap: two list blocks whose filters
// both match a link generate two resources that import it; the plan of
// that configuration fails with "Link managed twice", before the apply
// writes anything or brings the link into two resources.
func TestAdopt_queryOfTwoListBlocksThatOverlap(t *testing.T) {
	s := adoptService(t)
	w := queryWorkdir(t, s, "adopt-query-twice", listBlock("spring", s.fx.DomainID, "spring-")+listBlock("webinars", s.fx.DomainID, "spring-web"))
	d := seedDashboardLinks(t, s)
	seeded := writes(s)
	ctx := context.Background()
	if out, err := w.Terraform(ctx, runLimit, "query", "-generate-config-out=links.tf", "-no-color"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	generated := readFile(t, filepath.Join(w.Dir, "links.tf"))
	if n := strings.Count(generated, d.webinar); n != 2 {
		t.Fatalf("links.tf imports link %s %d times, want twice (one per list block):\n%s", d.webinar, n, generated)
	}
	out, err := runCLI(ctx, w, "apply", "-auto-approve")
	if err == nil || !strings.Contains(out, "Link managed twice") {
		t.Fatalf("apply of two imports of one link: %v; want it to fail with Link managed twice\n%s", err, out)
	}
	if ids := stateIDs(t, w); len(ids) != 0 {
		t.Fatalf("the state holds %v; want nothing imported", ids)
	}
	expectNoWrites(t, s, seeded)
}

// queryWorkdir is a working directory for the CLI that
// SHORTLINK_TERRAFORM_QUERY names (the test is skipped without one), with
// the provider configured for s and the list blocks lists in
// links.tfquery.hcl.
func queryWorkdir(t *testing.T, s *service, name, lists string) *clitest.Workdir {
	t.Helper()
	path := os.Getenv(EnvTerraformQuery)
	if path == "" {
		t.Skipf("terraform query needs Terraform 1.14 or later; set %s=/path/to/terraform to run this test", EnvTerraformQuery)
	}
	t.Parallel()
	c := *buildProvider(t)
	c.Path = path
	w, err := c.Workdir(name, map[string]string{
		"main.tf":           clitest.RequiredProviders + "provider \"shortlink\" {}\n",
		"links.tfquery.hcl": lists,
	}, "SHORTLINK_BASE_URL="+s.url, "SHORTLINK_API_KEY="+s.fx.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	if major, minor := cliVersion(t, w); major == 1 && minor < 14 {
		t.Fatalf("%s=%s is version 1.%d; terraform query needs 1.14 or later", EnvTerraformQuery, path, minor)
	}
	return w
}

// listBlock is a list block of shortlink_link named name: the links on
// domainID whose slug starts with slugPrefix, with their resources.
func listBlock(name, domainID, slugPrefix string) string {
	return fmt.Sprintf(`
list "shortlink_link" %q {
  provider         = shortlink
  include_resource = true

  config {
    domain_id   = %q
    slug_prefix = %q
  }
}
`, name, domainID, slugPrefix)
}

// identitySupported reports whether the CLI takes `identity` in import
// blocks: Terraform and OpenTofu 1.12 and later.
func identitySupported(t *testing.T, w *clitest.Workdir) bool {
	major, minor := cliVersion(t, w)
	return major > 1 || minor >= 12
}

// cliAtLeast reports whether the CLI is Terraform 1.<terraform> or later,
// or OpenTofu 1.<tofu> or later: the first versions of each that have what
// a test needs.
func cliAtLeast(t *testing.T, w *clitest.Workdir, terraform, tofu int) bool {
	t.Helper()
	want := terraform
	if isOpenTofu(t, w) {
		want = tofu
	}
	major, minor := cliVersion(t, w)
	return major > 1 || minor >= want
}

// skipBelow skips the test on a CLI older than Terraform 1.<terraform> or
// OpenTofu 1.<tofu>, which lack what (such as "for_each in import blocks"),
// from where it is called: the checks before it have run.
func skipBelow(t *testing.T, w *clitest.Workdir, terraform, tofu int, what string) {
	t.Helper()
	if !cliAtLeast(t, w, terraform, tofu) {
		major, minor := cliVersion(t, w)
		t.Skipf("%s needs Terraform 1.%d or OpenTofu 1.%d or later; this CLI is %d.%d: skipping the test from here", what, terraform, tofu, major, minor)
	}
}

// knownAtApply declares a string that a plan does not know and an apply
// does: the block to add to the configuration and the expression that
// reads the value. The value comes from terraform_data (Terraform 1.4 and
// later, OpenTofu), unknown at a plan that creates or changes it; an older
// CLI has no terraform_data, and there the value is built on timestamp(),
// which Terraform leaves unknown at every plan and knows at apply. value
// goes into HCL as it stands: no quotes, backslashes, $ or %.
func knownAtApply(t *testing.T, w *clitest.Workdir, name, value string) (block, expr string) {
	t.Helper()
	if strings.ContainsAny(value, `"\$%`) {
		t.Fatalf("knownAtApply writes %q into HCL as it stands", value)
	}
	if !cliAtLeast(t, w, 4, 6) {
		return "", fmt.Sprintf(`"${substr(timestamp(), 0, 0)}%s"`, value)
	}
	return fmt.Sprintf("\nresource \"terraform_data\" %q {\n  input = %q\n}\n", name, value), "terraform_data." + name + ".output"
}

// cliVersion is the CLI's version (Terraform and OpenTofu alike answer
// `version -json` with terraform_version).
func cliVersion(t *testing.T, w *clitest.Workdir) (major, minor int) {
	t.Helper()
	out, err := w.Terraform(context.Background(), time.Minute, "version", "-json")
	if err != nil {
		t.Fatal(err)
	}
	major, minor, err = clitest.Version(out)
	if err != nil {
		t.Fatal(err)
	}
	return major, minor
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
