package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// TestAccValidation_badInputAtPlanTime: every rule on the resource's input
// answers at plan time, on the attribute it concerns, before any request.
// The messages are the ones documented in the troubleshooting table.
func TestAccValidation_badInputAtPlanTime(t *testing.T) {
	e := newTestEnv(t)
	cases := []struct {
		attrs string
		want  *regexp.Regexp
	}{
		{`domain_id = "marketing"` + "\n" + `destination = "https://example.com/a"`, expectErr(`domain_id "marketing" is not a UUID`)},
		{`destination = "ftp://example.com/a"`, expectErr(`destination "ftp://example.com/a" must start with http:// or https://`)},
		{`destination = "/sale"`, expectErr(`destination "/sale" must start with http://`)},
		{`destination = "https:///sale"`, expectErr(`has no host`)},
		{`destination = "https://example.com/` + strings.Repeat("a", 2100) + `"`, expectErr(`at most 2048 are allowed`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "a/b"`, expectErr(`slug "a/b" contains '/'`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "spring sale"`, expectErr(`contains ' '`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "` + strings.Repeat("s", 65) + `"`, expectErr(`must be 1 to 64 characters long`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "next friday"`, expectErr(`Invalid RFC3339 String Value`, `expires_at`, `next friday`)},
		{`destination = "https://example.com/a"` + "\n" + `utm = {}`, expectErr(`Empty utm`, `set at least one`)},
		{`destination = "https://example.com/a"` + "\n" + `utm = { source = "" }`, expectErr(`utm.source`, `length must be at least 1`)},
		{`destination = "https://example.com/a"` + "\n" + `timeouts = { create = "ten minutes" }`, expectErr(`Invalid Attribute Value Time Duration`, `"ten minutes" must be a string containing a sequence of decimal numbers`)},
	}
	steps := make([]resource.TestStep, 0, len(cases))
	for _, c := range cases {
		attrs := c.attrs
		if !strings.Contains(attrs, "domain_id") {
			attrs = fmt.Sprintf("domain_id = %q\n", e.fx.DomainID) + attrs
		}
		steps = append(steps, resource.TestStep{
			Config:      e.config("resource \"shortlink_link\" \"test\" {\n" + attrs + "\n}\n"),
			PlanOnly:    true,
			ExpectError: c.want,
		})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Providers, Steps: steps})
	if n := e.srv.TotalRequests(); n != 0 {
		t.Fatalf("bad input reached the service: %d requests", n)
	}
}

func TestAccValidation_badProviderSettings(t *testing.T) {
	body := linkBody("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "https://example.com/a")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_retries = 500\n}\n" + body,
				ExpectError: expectErr(`max_retries`, `must be between 0 and 100`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"https://api.example.com\"\n api_key = \"k\"\n max_rate_limit_percent = 0\n}\n" + body,
				ExpectError: expectErr(`max_rate_limit_percent`, `must be between 1 and 100`),
			},
			{
				Config:      "provider \"shortlink\" {\n base_url = \"api.example.com\"\n api_key = \"k\"\n}\n" + body,
				ExpectError: expectErr(`Invalid base_url`, `must be an absolute URL`),
			},
		},
	})
}
