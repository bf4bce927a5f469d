package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// The data sources that read the export share their filter attributes, and
// with them the errors of a filter that cannot select anything: each is
// refused on the attribute at fault, with what to do about it.
func TestAccExportFilter_badInput(t *testing.T) {
	for _, dataSource := range []string{"shortlink_analytics_export", "shortlink_clicks"} {
		t.Run(dataSource, func(t *testing.T) {
			e := newTestEnv(t)
			step := func(filter string, expect ...string) resource.TestStep {
				return resource.TestStep{
					Config:      e.config(`data "` + dataSource + `" "bad" {` + "\n" + filter + "\n}\n"),
					ExpectError: expectErr(expect...),
				}
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps: []resource.TestStep{
					step(`link_id = "0b3d2c1a-0000-4000-8000-000000000000"`,
						"link_id", "No link with ID 0b3d2c1a-0000-4000-8000-000000000000", "404 not_found", "data.shortlink_links", "change or remove link_id", "terraform destroy -refresh=false"),
					step(`link_id = "not-a-link-id"`,
						"link_id", `"not-a-link-id" is not a UUID`),
					step(`since = "2027-03-02T00:00:00Z"`+"\n"+`until = "2027-03-01T00:00:00Z"`,
						"until", "until (2027-03-01T00:00:00Z) must be later than since (2027-03-02T00:00:00Z)", "would select nothing"),
					step(`since = "2027-03-01T00:00:00Z"`+"\n"+`until = "2027-03-01T01:00:00+01:00"`,
						"until", "must be later than since"),
					step(`since = "last monday"`,
						"Invalid time", `since is "last monday"`, "2027-01-05T23:59:59Z"),
				},
			})
		})
	}
}
