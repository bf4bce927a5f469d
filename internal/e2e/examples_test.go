package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestExamples_spreadsheet applies examples/spreadsheet as it is in the
// repository, with the real CLI: the sheet's stray spaces and blank cells
// make links with trimmed values and no empty UTM; a second plan is clean,
// with a byte order mark, capitals in the header and empty rows too; an
// edited sheet changes a destination in place; the example's import block
// adopts existing links without a write (Terraform or OpenTofu 1.7 and
// later); a removed row deletes its link; and a slug on two rows fails the
// plan.
func TestExamples_spreadsheet(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := exampleWorkdir(t, s, "spreadsheet")
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(ctx, w, args...)
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
		return out
	}

	run("apply", "-auto-approve")
	links := s.linksBySlug()
	if len(links) != 3 {
		t.Fatalf("the service holds %d links, want the sheet's 3", len(links))
	}
	if got := links["spring-webinar"].Destination; got != "https://events.example.com/spring-webinar" {
		t.Errorf("spring-webinar's destination is %q: the cell's trailing space was not trimmed", got)
	}
	if u := links["careers"].UTM; u != nil && *u != (emulator.UTM{}) {
		t.Errorf("careers, a row without UTM cells, has UTM parameters %+v", *u)
	}
	if u := links["spring-sale"].UTM; u == nil || *u != (emulator.UTM{Source: "newsletter", Medium: "email", Campaign: "spring-2027"}) {
		t.Errorf("spring-sale's UTM parameters are %+v", u)
	}
	if links["spring-sale"].ExpiresAt == nil || links["careers"].ExpiresAt != nil {
		t.Errorf("expiries: spring-sale %v (want set), careers %v (want none)", links["spring-sale"].ExpiresAt, links["careers"].ExpiresAt)
	}
	if _, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); clitest.ExitCode(err) != 0 {
		t.Fatalf("the plan after the apply is not clean (exit code %d)", clitest.ExitCode(err))
	}

	// The same sheet saved by Excel as "CSV UTF-8", with a byte order mark,
	// its columns named in capitals and formatted empty rows.
	sheet := readExample(t, "spreadsheet", "links.csv")
	header, body, _ := strings.Cut(sheet, "\n")
	if err := w.WriteFile("links.csv", "\uFEFF"+strings.ToUpper(header)+"\n"+body+",,,,,\n , ,,,,\n"); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); clitest.ExitCode(err) != 0 {
		t.Fatalf("the sheet as Excel saves it plans changes or fails (exit code %d):\n%s", clitest.ExitCode(err), out)
	}

	// Exported with semicolons, the guide says what Terraform answers.
	if err := w.WriteFile("links.csv", strings.ReplaceAll(sheet, ",", ";")); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(ctx, w, "plan"); err == nil || !strings.Contains(out, `This object does not have an attribute named "slug"`) {
		t.Fatalf("a sheet with semicolons: want the error the guide names; got %v:\n%s", err, out)
	}

	// The sheet edited: a new destination, and a cell given spaces.
	sheet = strings.Replace(sheet, "careers,https://jobs.example.com/,", "careers,https://jobs.example.com/open-roles,", 1)
	sheet = strings.Replace(sheet, ",linkedin,social,", ", linkedin ,social,", 1)
	if err := w.WriteFile("links.csv", sheet); err != nil {
		t.Fatal(err)
	}
	if out := run("plan"); !strings.Contains(out, "Plan: 0 to add, 1 to change, 0 to destroy.") {
		t.Fatalf("the edited sheet should change one link in place:\n%s", out)
	}
	run("apply", "-auto-approve")
	after := s.linksBySlug()
	if after["careers"].ID != links["careers"].ID || after["careers"].Destination != "https://jobs.example.com/open-roles" {
		t.Errorf("careers after the edit: %+v, want link %s at the new destination", after["careers"], links["careers"].ID)
	}

	// Rows whose links were made in the dashboard: imported with the block
	// the guide gives, with no write sent. Its for_each in an import block
	// needs Terraform or OpenTofu 1.7; on an older CLI the rest of the test
	// goes on with the sheet as it was.
	adopted := sheet
	if cliAtLeast(t, w, 7, 7) {
		adopted = importDashboardRows(t, s, w, sheet)
	} else {
		t.Log("for_each in import blocks needs Terraform or OpenTofu 1.7 or later: the example's import-existing.tf is not applied")
	}

	// A row removed from the sheet deletes its link.
	without := strings.Replace(adopted, "careers,https://jobs.example.com/open-roles,,,,\n", "", 1)
	if err := w.WriteFile("links.csv", without); err != nil {
		t.Fatal(err)
	}
	if out := run("plan"); !strings.Contains(out, `shortlink_link.sheet["careers"] will be destroyed`) || !strings.Contains(out, "Plan: 0 to add, 0 to change, 1 to destroy.") {
		t.Fatalf("a row removed: want its link, and only it, destroyed:\n%s", out)
	}

	// A row's slug renamed makes another row, as the guide says: the old
	// link deleted and a new one made, with no warning but the CLI's own of
	// the test's development overrides.
	renamed := strings.Replace(adopted, "careers,https://jobs.example.com/open-roles,", "jobs,https://jobs.example.com/open-roles,", 1)
	if err := w.WriteFile("links.csv", renamed); err != nil {
		t.Fatal(err)
	}
	if out := run("plan"); !strings.Contains(out, `shortlink_link.sheet["careers"] will be destroyed`) || !strings.Contains(out, `shortlink_link.sheet["jobs"] will be created`) ||
		!strings.Contains(out, "Plan: 1 to add, 0 to change, 1 to destroy.") || strings.Count(out, "Warning:") != strings.Count(out, "Warning: Provider development overrides") {
		t.Fatalf("a slug renamed: want the old link destroyed and a new one created, with no warning:\n%s", out)
	}

	// A slug on two rows fails the plan, naming it, before any request.
	if err := w.WriteFile("links.csv", sheet+"careers,https://jobs.example.com/other,,,,\n"); err != nil {
		t.Fatal(err)
	}
	s.srv.ResetCounts()
	out, err := runCLI(ctx, w, "plan")
	if err == nil || !strings.Contains(out, "Duplicate object key") || !strings.Contains(out, `row.slug is "careers"`) {
		t.Fatalf("a slug on two rows: want the plan to fail with Duplicate object key naming it; got %v:\n%s", err, out)
	}
	if n := s.srv.TotalRequests(); n != 0 {
		t.Errorf("the failed plan sent %d requests, want none", n)
	}
}

// importDashboardRows adds to sheet two rows whose links were made in the
// dashboard and applies the example's import-existing.tf, which must import
// them without a write; it returns the sheet with those rows.
func importDashboardRows(t *testing.T, s *service, w *clitest.Workdir, sheet string) string {
	t.Helper()
	run := func(args ...string) string {
		t.Helper()
		out, err := runCLI(context.Background(), w, args...)
		if err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
		return out
	}
	if _, err := s.srv.SeedLinks(s.fx.DomainID, "old", 2); err != nil {
		t.Fatal(err)
	}
	adopted := sheet + "old-0,https://example.com/old/0,,,,\nold-1,https://example.com/old/1,,,,\n"
	if err := w.WriteFile("links.csv", adopted); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("import-existing.tf", readExample(t, "spreadsheet", "import-existing.tf.txt")); err != nil {
		t.Fatal(err)
	}
	s.srv.ResetCounts()
	if out := run("apply", "-auto-approve"); !strings.Contains(out, "Apply complete! Resources: 2 imported, 0 added, 0 changed, 0 destroyed.") {
		t.Fatalf("want the two links imported and nothing else:\n%s", out)
	}
	if n := s.srv.Count("POST", "/api/links") + s.srv.Count("PATCH", "/api/links/{id}") + s.srv.Count("DELETE", "/api/links/{id}"); n != 0 {
		t.Errorf("the import sent %d writes, want none", n)
	}
	st, err := w.State()
	managed := 0 // besides the data source the import block reads
	for _, inst := range st {
		if strings.HasPrefix(inst.Address, "shortlink_link.") {
			managed++
		}
	}
	if err != nil || managed != 5 {
		t.Errorf("the state holds %d links (%v), want 5", managed, err)
	}
	return adopted
}

// exampleWorkdir is a working directory holding the files of
// examples/<name> as they are in the repository, configured for s.
func exampleWorkdir(t *testing.T, s *service, name string) *clitest.Workdir {
	t.Helper()
	dir := filepath.Join("..", "..", "examples", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		files[e.Name()] = readExample(t, name, e.Name())
	}
	w, err := cli(t).Workdir("example-"+name, files,
		"SHORTLINK_BASE_URL="+s.url, "SHORTLINK_API_KEY="+s.fx.APIKey, "TF_VAR_domain_id="+s.fx.DomainID)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func readExample(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "examples", name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// linksBySlug is the links the service holds, by slug.
func (s *service) linksBySlug() map[string]emulator.Link {
	out := map[string]emulator.Link{}
	for _, l := range s.srv.Links(s.fx.AccountID) {
		out[l.Slug] = l
	}
	return out
}

// TestExamples_spreadsheetImportsARowThatDiffers: a dashboard link whose
// row sets an expiry the link lacks is imported and then replaced, as the
// guide says, and the plan warns that the replacement loses its clicks.
func TestExamples_spreadsheetImportsARowThatDiffers(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := exampleWorkdir(t, s, "spreadsheet")
	skipBelow(t, w, 7, 7, "for_each in import blocks")
	c := s.client(t)
	if _, err := c.CreateLink(context.Background(), client.CreateLinkInput{DomainID: s.fx.DomainID, Slug: "spring-sale", Destination: "https://shop.example.com/spring"}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("import-existing.tf", readExample(t, "spreadsheet", "import-existing.tf.txt")); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(context.Background(), w, "plan")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{`shortlink_link.sheet["spring-sale"] must be replaced`, "Plan: 1 to import, 3 to add, 0 to change, 1 to destroy.", "Warning: Replacing the link loses its click history"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
}

// TestExamples_spreadsheetWithRowsFromTheDashboard: a sheet brought under
// Terraform while one of its rows is already a link made in the dashboard.
// The guide's import block, as it is in the example, imports that row and
// the apply creates the others: the first apply of a sheet, not a later one.
// The block's for_each needs Terraform or OpenTofu 1.7 or later.
func TestExamples_spreadsheetWithRowsFromTheDashboard(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := exampleWorkdir(t, s, "spreadsheet")
	skipBelow(t, w, 7, 7, "for_each in import blocks")
	c := s.client(t)
	made, err := c.CreateLink(context.Background(), client.CreateLinkInput{DomainID: s.fx.DomainID, Slug: "careers", Destination: "https://jobs.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("import-existing.tf", readExample(t, "spreadsheet", "import-existing.tf.txt")); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(context.Background(), w, "apply", "-auto-approve")
	if err != nil || !strings.Contains(out, "Apply complete! Resources: 1 imported, 2 added, 0 changed, 0 destroyed.") {
		t.Fatalf("want the dashboard's link imported and the other rows created: %v\n%s", err, out)
	}
	if got := s.linksBySlug()["careers"].ID; got != made.ID {
		t.Errorf("careers is link %s, want the dashboard's %s", got, made.ID)
	}
}

// TestExamples_campaignClickChangesOnlyOutputs is what the clicks data
// source's page says of a scheduled drift check, on examples/campaign as it
// is in the repository: a click on one of its links makes
// `plan -detailed-exitcode` exit 2 with nothing but Changes to Outputs (the
// output "clicks"), and the saved plan's resource_changes hold no change; a
// click on a link whose count it does not output changes nothing.
func TestExamples_campaignClickChangesOnlyOutputs(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := exampleWorkdir(t, s, "campaign")
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("terraform apply: %v\n%s", err, out)
	}
	planExitCode := func() (int, string) {
		t.Helper()
		out, err := runCLI(ctx, w, "plan", "-detailed-exitcode", "-out="+planFile)
		return clitest.ExitCode(err), out
	}
	if code, out := planExitCode(); code != 0 {
		t.Fatalf("the plan after the apply is not clean (exit code %d):\n%s", code, out)
	}

	outside, err := s.srv.SeedLinks(s.fx.DomainID, "outside", 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.srv.AddClicks(outside[0].ID, 1, "https://news.example.com/"); err != nil {
		t.Fatal(err)
	}
	if code, out := planExitCode(); code != 0 {
		t.Errorf("a click on a link outside the campaign: exit code %d, want 0:\n%s", code, out)
	}

	if err := s.srv.AddClicks(s.linksBySlug()["spring-sale"].ID, 1, "https://news.example.com/"); err != nil {
		t.Fatal(err)
	}
	code, out := planExitCode()
	if code != 2 {
		t.Fatalf("a click on spring-sale: exit code %d, want 2 (a change):\n%s", code, out)
	}
	if !strings.Contains(out, "Changes to Outputs:") || strings.Contains(out, "will perform the following actions") {
		t.Errorf("a click on spring-sale: want Changes to Outputs and no resource action:\n%s", out)
	}
	checkSavedPlan(t, w,
		plancheck.ExpectResourceAction(`shortlink_link.campaign["spring-sale"]`, plancheck.ResourceActionNoop),
		plancheck.ExpectResourceAction(`shortlink_link.campaign["newsletter"]`, plancheck.ResourceActionNoop),
		plancheck.ExpectResourceAction(`shortlink_link.campaign["webinar"]`, plancheck.ResourceActionNoop),
		onlyOutputsChange{"clicks"},
		plancheck.ExpectKnownOutputValue("clicks", knownvalue.MapExact(map[string]knownvalue.Check{
			"spring-sale": knownvalue.Int64Exact(1), "newsletter": knownvalue.Int64Exact(0), "webinar": knownvalue.Int64Exact(0),
		})),
	)
}

// checkSavedPlan runs checks on the plan saved in planFile, as
// `terraform show -json` gives it.
func checkSavedPlan(t *testing.T, w *clitest.Workdir, checks ...plancheck.PlanCheck) {
	t.Helper()
	out, err := w.Terraform(context.Background(), runLimit, "show", "-json", "-no-color", planFile)
	if err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	var plan tfjson.Plan
	// The JSON is on stdout; the output may start with warnings from stderr.
	start := strings.Index(out, "{")
	if start < 0 {
		t.Fatalf("terraform show -json printed no JSON:\n%s", out)
	}
	// Numbers as json.Number, as the knownvalue checks read them.
	plan.UseJSONNumber(true)
	if err := json.Unmarshal([]byte(out[start:]), &plan); err != nil {
		t.Fatalf("the plan's JSON: %v\n%s", err, out)
	}
	for _, check := range checks {
		var resp plancheck.CheckPlanResponse
		check.CheckPlan(context.Background(), plancheck.CheckPlanRequest{Plan: &plan}, &resp)
		if resp.Error != nil {
			t.Error(resp.Error)
		}
	}
}

// onlyOutputsChange is a plan check: no resource changes, and of the root
// module's outputs only these do.
type onlyOutputsChange []string

func (outputs onlyOutputsChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	var problems []error
	for _, rc := range req.Plan.ResourceChanges {
		if !rc.Change.Actions.NoOp() {
			problems = append(problems, fmt.Errorf("%s has planned actions %v, want none", rc.Address, rc.Change.Actions))
		}
	}
	for name, change := range req.Plan.OutputChanges {
		if changes := !change.Actions.NoOp(); changes != slices.Contains(outputs, name) {
			problems = append(problems, fmt.Errorf("output %q has planned actions %v, want only %v to change", name, change.Actions, []string(outputs)))
		}
	}
	for _, name := range outputs {
		if _, ok := req.Plan.OutputChanges[name]; !ok {
			problems = append(problems, fmt.Errorf("output %q does not change, want it to", name))
		}
	}
	resp.Error = errors.Join(problems...)
}

// TestExamples_retiringLinksKeepsAClickedLink applies examples/retiring-links
// as it is in the repository and retires links as its comment says: a link
// clicked in the last 14 days, listed in retire, fails the plan with the
// example's message and is kept; a link without clicks is deleted; with
// force_retire the clicked one is deleted too.
func TestExamples_retiringLinksKeepsAClickedLink(t *testing.T) {
	t.Parallel()
	s := newService(t, instantFilter)
	w := exampleWorkdir(t, s, "retiring-links")
	skipBelow(t, w, 5, 0, "plantimestamp() in a data source's postcondition")
	ctx := context.Background()
	if out, err := runCLI(ctx, w, "apply", "-auto-approve"); err != nil {
		t.Fatalf("terraform apply: %v\n%s", err, out)
	}
	if err := s.srv.AddClicks(s.linksBySlug()["webinar"].ID, 2, "https://news.example.com/"); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(ctx, w, "apply", "-auto-approve", `-var=retire=["webinar","newsletter"]`)
	if err == nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "Still in use, not deleted: webinar (clicks in the last 14 days: 2). Take them out of retire, or set force_retire = true.") {
		t.Fatalf("retiring a clicked link and a quiet one: %v; want the plan to fail, naming the clicked one\n%s", err, out)
	}
	if got := slices.Sorted(maps.Keys(s.linksBySlug())); !slices.Equal(got, []string{"newsletter", "spring-sale", "webinar"}) {
		t.Fatalf("the service holds %v after the failed plan; want every link kept", got)
	}
	if out, err := runCLI(ctx, w, "apply", "-auto-approve", `-var=retire=["newsletter"]`); err != nil {
		t.Fatalf("retiring a link without clicks: %v\n%s", err, out)
	}
	if out, err := runCLI(ctx, w, "apply", "-auto-approve", `-var=retire=["webinar","newsletter"]`, "-var=force_retire=true"); err != nil {
		t.Fatalf("retiring the clicked link with force_retire: %v\n%s", err, out)
	}
	if got := slices.Sorted(maps.Keys(s.linksBySlug())); !slices.Equal(got, []string{"spring-sale"}) {
		t.Fatalf("the service holds %v; want only spring-sale left", got)
	}
}
