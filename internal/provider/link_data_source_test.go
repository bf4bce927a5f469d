package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccLinkDataSource_lookups(t *testing.T) {
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", 2)
	seededLink := func(i int, domainID string) knownvalue.Check {
		return knownvalue.ObjectExact(map[string]knownvalue.Check{
			"id":          knownvalue.StringExact(seeded[i].ID),
			"domain_id":   knownvalue.StringExact(domainID),
			"destination": knownvalue.StringExact(fmt.Sprintf("https://example.com/seeded/%d", i)),
			"slug":        knownvalue.StringExact(fmt.Sprintf("seeded-%d", i)),
			"expires_at":  knownvalue.Null(),
			"utm":         knownvalue.Null(),
			"short_url":   knownvalue.StringExact(fmt.Sprintf("https://go.example.test/seeded-%d", i)),
			"qr_code_url": knownvalue.StringExact(fmt.Sprintf("https://go.example.test/qr/seeded-%d.png", i)),
			"created_at":  knownvalue.NotNull(),
		})
	}
	// Every attribute the resource has, the data source reads the same.
	sameAsResource := func(attr string) statecheck.StateCheck {
		return statecheck.CompareValuePairs("shortlink_link.test", tfjsonpath.New(attr),
			"data.shortlink_link.managed", tfjsonpath.New(attr), compare.ValuesSame())
	}
	upperDomain := strings.ToUpper(e.fx.DomainID)
	upperID := strings.ToUpper(seeded[0].ID)
	expectState(t, e.config(testConfig(t, "link_data_source_lookups.tf.tmpl", seeded[0].ID, upperID, upperDomain, e.fx.DomainID)),
		statecheck.ExpectKnownValue("data.shortlink_link.by_id", tfjsonpath.Path{}, seededLink(0, e.fx.DomainID)),
		statecheck.ExpectKnownValue("data.shortlink_link.by_id_upper", tfjsonpath.New("id"), knownvalue.StringExact(upperID)),
		statecheck.ExpectKnownValue("data.shortlink_link.by_id_upper", tfjsonpath.New("slug"), knownvalue.StringExact("seeded-0")),
		statecheck.ExpectKnownValue("data.shortlink_link.by_slug", tfjsonpath.Path{}, seededLink(1, upperDomain)),
		statecheck.ExpectKnownValue("data.shortlink_link.managed", tfjsonpath.New("utm"), knownvalue.ObjectExact(map[string]knownvalue.Check{
			"source": knownvalue.StringExact("newsletter"), "campaign": knownvalue.StringExact("spring"),
			"medium": knownvalue.Null(), "term": knownvalue.Null(), "content": knownvalue.Null(),
		})),
		sameAsResource("id"), sameAsResource("domain_id"), sameAsResource("destination"), sameAsResource("slug"),
		sameAsResource("expires_at"), sameAsResource("utm"), sameAsResource("short_url"), sameAsResource("qr_code_url"),
		sameAsResource("created_at"),
	)
}

// An account is as many pages as the service makes of it: the listing
// follows them all, past a thousand (an account of a million links is ten
// thousand pages of a hundred), and finds a link on the last.
func TestAccLinkDataSource_accountOfManyPages(t *testing.T) {
	const pages = 1001
	e := newTestEnv(t, withPaging("cursor"))
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", pages*variantPageSize)
	last := seeded[len(seeded)-1]
	expectState(t, e.config(fmt.Sprintf(`
data "shortlink_link" "last" {
  domain_id = %q
  slug      = %q
}`, e.fx.DomainID, last.Slug)),
		statecheck.ExpectKnownValue("data.shortlink_link.last", tfjsonpath.New("id"), knownvalue.StringExact(last.ID)),
	)
}

func TestAccLinkDataSource_errors(t *testing.T) {
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", 1)
	step := func(body string, want ...string) resource.TestStep {
		return resource.TestStep{Config: e.config(body), ExpectError: expectErr(want...)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			step(`
data "shortlink_link" "gone" {
  id = "0b3d2c1a-0000-4000-8000-000000000000"
}
`, "No such link", `No link with ID "0b3d2c1a-0000-4000-8000-000000000000"`, "data.shortlink_links"),
			step(fmt.Sprintf(`
data "shortlink_link" "gone" {
  domain_id = %q
  slug      = "no-such-slug"
}
`, e.fx.DomainID), "No such link", `no link with slug "no-such-slug" on domain `+e.fx.DomainID),
			// Exactly one of the two forms.
			step(`
data "shortlink_link" "none" {}
`, "Missing Attribute Configuration", "Exactly one of these attributes must be configured: [id,domain_id]"),
			step(fmt.Sprintf(`
data "shortlink_link" "both" {
  id        = %q
  domain_id = %q
  slug      = "seeded-0"
}
`, seeded[0].ID, e.fx.DomainID), "Invalid Attribute Combination", "Exactly one of these attributes must be configured: [id,domain_id]"),
			step(fmt.Sprintf(`
data "shortlink_link" "no_slug" {
  domain_id = %q
}
`, e.fx.DomainID), "Invalid Attribute Combination", "These attributes must be configured together: [domain_id,slug]"),
			step(fmt.Sprintf(`
data "shortlink_link" "id_and_slug" {
  id   = %q
  slug = "seeded-0"
}
`, seeded[0].ID), "Invalid Attribute Combination", "These attributes must be configured together: [domain_id,slug]"),
			step(`
data "shortlink_link" "bad_domain" {
  domain_id = "my-domain"
  slug      = "seeded-0"
}
`, "domain_id", `"my-domain" is not a UUID`),
		},
	})
}

// TestAccLinkDataSource_idNotAUUID: every lookup by link ID says the same
// thing of an ID that cannot be one, at plan time.
func TestAccLinkDataSource_idNotAUUID(t *testing.T) {
	e := newTestEnv(t)
	expectFailure(t, e.config(`data "shortlink_link" "x" { id = "nope" }`), `"nope" is not a UUID`)
	if n := e.srv.TotalRequests(); n != 0 {
		t.Fatalf("%d requests reached the service; the ID is refused at plan time", n)
	}
}
