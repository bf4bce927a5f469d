package provider

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestAccResilience_sixtyLinksThroughFaults applies 60 links while a fifth of
// all requests fail (500, 502, 503, delays, connections closed after the
// service committed the change) and 429 bursts come and go: the apply
// succeeds, the service holds exactly 60 links, the next plan is empty and
// destroy leaves nothing.
func TestAccResilience_sixtyLinksThroughFaults(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Filter.Delay = emulator.Duration(20 * time.Millisecond) })
	faults := emulator.FaultPlan{Rate: 0.2, Seed: 20261121}
	// Scripted first, so that every hard case happens whatever the draw:
	// creates committed but unanswered, creates refused before commit,
	// and a burst of 429s.
	for range 4 {
		faults.Script = append(faults.Script, emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPost})
	}
	faults.Script = append(faults.Script,
		emulator.Fault{Kind: emulator.FaultStatus, Status: 503, Method: http.MethodPost},
		emulator.Fault{Kind: emulator.FaultStatus, Status: 500, Method: http.MethodPost},
		emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPatch},
		emulator.Fault{Kind: emulator.FaultStatus, Status: 502, Method: http.MethodGet},
	)
	for range 6 {
		faults.Script = append(faults.Script, emulator.Fault{Kind: emulator.FaultStatus, Status: 429, RetryAfter: 1})
	}
	config := e.providerBlock(e.fx.APIKey) + `
` + fmt.Sprintf(`
locals {
  domain = %q
}

resource "shortlink_link" "slugged" {
  count       = 50
  domain_id   = local.domain
  slug        = "chaos-${count.index}"
  destination = "https://example.com/chaos/${count.index}"
}

resource "shortlink_link" "tagged" {
  count       = 8
  domain_id   = local.domain
  destination = "https://example.com/tagged/${count.index}"
  utm         = { source = "chaos", campaign = "c${count.index}" }
}

# Two links alike in everything the service is told: only the provider's
# bookkeeping tells them apart after an ambiguous create.
resource "shortlink_link" "twin_a" {
  domain_id   = local.domain
  destination = "https://example.com/twins"
}

resource "shortlink_link" "twin_b" {
  domain_id   = local.domain
  destination = "https://example.com/twins"
}
`, e.fx.DomainID)
	config = replaceMaxRetries(config, 12)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{
				PreConfig: func() { e.srv.SetFaults(faults) },
				Config:    config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("shortlink_link.tagged[7]", tfjsonpath.New("utm").AtMapKey("campaign"), knownvalue.StringExact("c7")),
				},
				Check: func(*terraform.State) error { return e.checkLinkCount(60) },
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error { return e.checkLinkCount(60) },
			},
		},
	})
	if n := e.srv.Count(http.MethodPost, "/api/links", 0); n < 4 {
		t.Errorf("only %d creates were closed after commit; the test did not exercise adoption", n)
	}
	t.Logf("requests: %d in all, %d answered 429, %d closed, %d answered 5xx",
		e.srv.TotalRequests(), e.srv.CountStatus(429), e.srv.CountStatus(0),
		e.srv.CountStatus(500)+e.srv.CountStatus(502)+e.srv.CountStatus(503))
}

func (e *testEnv) checkLinkCount(want int) error {
	links := e.srv.Links(e.fx.AccountID)
	if len(links) != want {
		return fmt.Errorf("the service holds %d links, want exactly %d", len(links), want)
	}
	twins := 0
	for _, l := range links {
		if l.Destination == "https://example.com/twins" {
			twins++
		}
	}
	if twins != 2 {
		return fmt.Errorf("the service holds %d links to the twins' destination, want 2", twins)
	}
	return nil
}

// replaceMaxRetries raises the provider's retries for tests that inject
// many faults.
func replaceMaxRetries(config string, n int) string {
	return replaceOnce(config, "max_retries = 2", fmt.Sprintf("max_retries = %d", n))
}
