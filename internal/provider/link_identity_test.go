package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// Resource identity needs Terraform 1.12 or OpenTofu 1.12; older CLIs skip
// these tests (the CI's Terraform 1.11.4 does; `make testacc-tofu` runs
// them).
var identityVersions = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)}

var uuidValue = knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`))

func TestAccLinkIdentity_lifecycleAndImport(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	link := func(dest string) string {
		return e.linkConfig(fmt.Sprintf(`
  destination = %q
  slug        = "spring"
  expires_at  = "2027-03-31T23:59:59Z"
  utm = {
    source = "newsletter"
  }`, dest))
	}
	identityChecks := func() []statecheck.StateCheck {
		return []statecheck.StateCheck{
			statecheck.ExpectIdentity(linkAddr, map[string]knownvalue.Check{"id": uuidValue}),
			statecheck.ExpectIdentityValueMatchesState(linkAddr, tfjsonpath.New("id")),
			sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   identityVersions,
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: link("https://example.com/sale"), ConfigStateChecks: identityChecks()},
			{
				// Changed in place: the identity stays.
				Config: link("https://example.com/sale-extended"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: identityChecks(),
			},
			{
				// import { to = shortlink_link.test  identity = { id = "…" } }
				// plans no change.
				ResourceName:    linkAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithResourceIdentity,
			},
		},
	})
}

// A link imported by identity into a resource block that the CLI generates
// (plan -generate-config-out) plans no change. The import is the test's
// only step: after a step that applied the link, the test framework's
// GenerateConfig imports it into a second resource beside the first, which
// the plan refuses (Link managed twice).
func TestAccLinkIdentity_generatedConfigPlansNoChange(t *testing.T) {
	e := newTestEnv(t)
	c := e.apiClient(t)
	ctx := context.Background()
	expires := time.Date(2027, 3, 31, 23, 59, 59, 0, time.UTC)
	link, err := c.CreateLink(ctx, client.CreateLinkInput{DomainID: e.fx.DomainID, Slug: "spring", Destination: "https://example.com/sale", ExpiresAt: &expires})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeDestination(ctx, link.ID, client.ChangeDestinationInput{Destination: link.Destination, UTM: &client.UTM{Source: "newsletter"}}); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   identityVersions,
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			ResourceName:           linkAddr,
			ImportState:            true,
			ImportStateKind:        resource.ImportBlockWithID, // the framework reads identities only from a step before; the block below imports by identity
			ImportStateId:          link.ID,
			ImportStateConfigExact: true,
			GenerateConfig:         true,
			Config:                 e.config(fmt.Sprintf("import {\n  to       = %s\n  identity = { id = %q }\n}\n", linkAddr, link.ID)),
			ImportPlanChecks: resource.ImportPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionNoop),
					plancheck.ExpectKnownValue(linkAddr, tfjsonpath.New("utm").AtMapKey("source"), knownvalue.StringExact("newsletter")),
					plancheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2027-03-31T23:59:59Z")),
				},
			},
		}},
	})
}

func TestAccLinkIdentity_importErrors(t *testing.T) {
	e := newTestEnv(t)
	importByIdentity := func(id string) string {
		return e.linkConfig(`  destination = "https://example.com/sale"`) + fmt.Sprintf(`
import {
  to       = shortlink_link.test
  identity = { id = %q }
}
`, id)
	}
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   identityVersions,
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      importByIdentity(e.fx.DomainID + "/spring"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`is\s+not\s+a\s+link\s+ID[\s\S]*write\s+` + "`" + `id\s+=\s+"<domain_id>/<slug>"`),
			},
			{
				Config:      importByIdentity("0b7c1f2e-0000-4000-8000-000000000000"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`no link with ID\s+0b7c1f2e-0000-4000-8000-000000000000\s+is\s+on\s+this\s+account`),
			},
		},
	})
}

// A refresh answers with the identity whatever the prior state holds: a
// state written by Terraform < 1.12 or an older provider has none, and the
// framework fails a refresh that returns none. That includes refreshes
// that keep the state (provider not configured) or drop it (link gone).
func TestLinkIdentity_refreshWithoutPriorIdentity(t *testing.T) {
	e := newTestEnv(t)
	seeded := seededIDs(t, e, e.fx.DomainID, "old", 2)
	c := newListClient(t)
	c.configure(e.url, e.fx.APIKey)
	gone := seeded[1]
	goneState := c.importedState(gone)
	if err := e.srv.DeleteLinkOutOfBand(gone); err != nil {
		t.Fatal(err)
	}
	// A fresh provider process: the first one's listing still holds the link.
	fresh := newListClient(t)
	fresh.configure(e.url, e.fx.APIKey)
	for name, tc := range map[string]struct {
		server  *listClient
		state   *tfprotov6.DynamicValue
		id      string
		warning string
		detail  string // a part of the warning's detail
	}{
		"refreshed":             {server: c, state: c.importedState(seeded[0]), id: seeded[0]},
		"deleted outside":       {server: fresh, state: goneState, id: gone, warning: "Link no longer exists", detail: "a new short URL unless slug is set"},
		"provider unconfigured": {server: newListClient(t), state: c.importedState(seeded[0]), id: seeded[0], warning: "Link not refreshed"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := tc.server.server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "shortlink_link", CurrentState: tc.state})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range resp.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError || (d.Summary != tc.warning) {
					t.Fatalf("unexpected diagnostics:\n%s", diagnosticsText(resp.Diagnostics))
				}
			}
			if tc.warning != "" && (len(resp.Diagnostics) != 1 || !strings.Contains(resp.Diagnostics[0].Detail, tc.detail)) {
				t.Fatalf("want the warning %q saying %q; got:\n%s", tc.warning, tc.detail, diagnosticsText(resp.Diagnostics))
			}
			if resp.NewIdentity == nil || c.attr(resp.NewIdentity.IdentityData, c.identity, "id") != tc.id {
				t.Fatalf("the refresh answered identity %+v, want id %s", resp.NewIdentity, tc.id)
			}
		})
	}
}

// importedState is the state of a link right after an import by ID (before
// the refresh), with the identity left out as an old state has none.
func (c *listClient) importedState(id string) *tfprotov6.DynamicValue {
	c.t.Helper()
	resp, err := c.server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "shortlink_link", ID: id})
	if err != nil || len(resp.Diagnostics) > 0 || len(resp.ImportedResources) != 1 {
		c.t.Fatalf("ImportResourceState(%s): %v %v", id, err, diagnosticsText(resp.Diagnostics))
	}
	if got := c.attr(resp.ImportedResources[0].Identity.IdentityData, c.identity, "id"); got != id {
		c.t.Fatalf("the import answered identity %q, want %q", got, id)
	}
	return resp.ImportedResources[0].State
}

// An import by identity is checked before anything is read: an identity
// without a UUID is an error that says how to import by slug instead.
func TestLinkIdentity_importByIdentityRPC(t *testing.T) {
	e := newTestEnv(t)
	seeded := seededIDs(t, e, e.fx.DomainID, "x", 1)
	c := newListClient(t)
	c.configure(e.url, e.fx.APIKey)
	identity := func(id string) *tfprotov6.ResourceIdentityData {
		dv, err := tfprotov6.NewDynamicValue(c.identity, tftypes.NewValue(c.identity, map[string]tftypes.Value{"id": str(id)}))
		if err != nil {
			t.Fatal(err)
		}
		return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
	}
	ok, err := c.server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "shortlink_link", Identity: identity(seeded[0])})
	if err != nil || len(ok.Diagnostics) > 0 || len(ok.ImportedResources) != 1 {
		t.Fatalf("import by identity: %v %s", err, diagnosticsText(ok.Diagnostics))
	}
	if got := c.attr(ok.ImportedResources[0].State, c.resource, "id"); got != seeded[0] {
		t.Fatalf("imported id %q, want %q", got, seeded[0])
	}
	bad, err := c.server.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{TypeName: "shortlink_link", Identity: identity("spring")})
	if err != nil || len(bad.Diagnostics) != 1 || !strings.Contains(bad.Diagnostics[0].Detail, `"spring" is not a link ID`) ||
		!strings.Contains(bad.Diagnostics[0].Detail, "on Terraform 1.14 and later, a result of `terraform query`") { // OpenTofu has no query
		t.Fatalf("want one error saying \"spring\" is not a link ID; got %v %s", err, diagnosticsText(bad.Diagnostics))
	}
}
