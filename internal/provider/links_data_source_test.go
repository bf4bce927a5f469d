package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

func TestAccLinksDataSource(t *testing.T) {
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", 2)
	other, err := e.srv.AddDomain(e.fx.AccountID, "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	e.seedLinks(t, other, "elsewhere", 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
data "shortlink_links" "all" {}

data "shortlink_links" "one_domain" {
  domain_id = %q
}
`, e.fx.DomainID)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_links.all", tfjsonpath.New("links"), knownvalue.ListSizeExact(3)),
				statecheck.ExpectKnownValue("data.shortlink_links.one_domain", tfjsonpath.New("links"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{
						"id":          knownvalue.StringExact(seeded[0].ID),
						"domain_id":   knownvalue.StringExact(e.fx.DomainID),
						"destination": knownvalue.StringExact("https://example.com/seeded/0"),
						"slug":        knownvalue.StringExact("seeded-0"),
						"expires_at":  knownvalue.Null(),
						"utm":         knownvalue.Null(),
						"short_url":   knownvalue.StringExact("https://go.example.test/seeded-0"),
						"qr_code_url": knownvalue.StringExact("https://go.example.test/qr/seeded-0.png"),
						"created_at":  knownvalue.NotNull(),
					}),
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"id": knownvalue.StringExact(seeded[1].ID)}),
				})),
			},
		}},
	})
}
