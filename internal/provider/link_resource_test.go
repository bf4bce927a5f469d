package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

const linkAddr = "shortlink_link.test"

func (e *testEnv) linkConfig(attrs string) string {
	return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id = %q
%s
}
`, e.fx.DomainID, attrs))
}

func TestAccLink_createImportAndDestroy(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{
				Config: e.linkConfig(`
  destination = "https://example.com/sale"
  slug        = "spring"
  expires_at  = "2027-03-31T23:59:59Z"
  utm = {
    source   = "newsletter"
    medium   = "email"
    campaign = "spring"
  }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f-]{36}$`))),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("short_url"), knownvalue.StringExact("https://go.example.test/spring")),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("qr_code_url"), knownvalue.StringExact("https://go.example.test/qr/spring.png")),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2027-03-31T23:59:59Z")),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("created_at"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("utm"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"source": knownvalue.StringExact("newsletter"), "medium": knownvalue.StringExact("email"),
						"campaign": knownvalue.StringExact("spring"), "term": knownvalue.Null(), "content": knownvalue.Null(),
					})),
					sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				},
				Check: func(*terraform.State) error {
					l := e.onlyLink(t)
					if l.UTM == nil || l.UTM.Source != "newsletter" || l.ExpiresAt == nil {
						return fmt.Errorf("the service holds %+v, want UTM and expiry set", l)
					}
					return nil
				},
			},
			{
				ResourceName:            linkAddr,
				ImportState:             true,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				ResourceName:            linkAddr,
				ImportState:             true,
				ImportStateId:           e.fx.DomainID + "/spring",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"timeouts"},
			},
			{
				// After both imports, the configuration still plans nothing.
				Config: e.linkConfig(`
  destination = "https://example.com/sale"
  slug        = "spring"
  expires_at  = "2027-03-31T23:59:59Z"
  utm = {
    source   = "newsletter"
    medium   = "email"
    campaign = "spring"
  }`),
				PlanOnly: true,
			},
		},
	})
}

func TestAccLink_importBlock(t *testing.T) {
	e := newTestEnv(t)
	seeded, err := e.srv.SeedLinks(e.fx.DomainID, "seeded", 1)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`
import {
  to = shortlink_link.test
  id = %q
}
`, e.fx.DomainID+"/seeded-0")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config: e.linkConfig(`
  destination = "https://example.com/seeded/0"
  slug        = "seeded-0"`) + body,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionNoop)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("id"), knownvalue.StringExact(seeded[0].ID)),
			},
		}},
	})
}

func TestAccLink_changeDestinationInPlace(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	sameShortURL := statecheck.CompareValue(compare.ValuesSame())
	step := func(dest string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config: e.linkConfig(`  destination = "` + dest + `"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, action)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				sameShortURL.AddStateValue(linkAddr, tfjsonpath.New("short_url")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("destination"), knownvalue.StringExact(dest)),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("slug"), knownvalue.StringRegexp(regexp.MustCompile(`^[A-Za-z0-9]{7}$`))),
			},
			Check: func(*terraform.State) error {
				if got := e.onlyLink(t).Destination; got != dest {
					return fmt.Errorf("service destination %q, want %q", got, dest)
				}
				return nil
			},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			step("https://example.com/one", plancheck.ResourceActionCreate),
			step("https://example.com/two", plancheck.ResourceActionUpdate),
		},
	})
	if n := e.srv.Count("PATCH", "/api/links/{id}"); n != 1 {
		t.Errorf("PATCH requests: %d, want exactly 1", n)
	}
	if n := e.srv.Count("POST", "/api/links"); n != 1 {
		t.Errorf("POST requests: %d, want exactly 1 (an update must not recreate)", n)
	}
}

func TestAccLink_setAndClearUTM(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	withUTM := func(utm string, expect knownvalue.Check) resource.TestStep {
		return resource.TestStep{
			Config: e.linkConfig(`  destination = "https://example.com/utm"` + "\n" + utm),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionUpdate)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("utm"), expect),
			},
		}
	}
	first := withUTM("", knownvalue.Null())
	first.ConfigPlanChecks.PreApply = []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionCreate)}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			first,
			withUTM(`  utm = { source = "ads", term = "shoes" }`, knownvalue.ObjectExact(map[string]knownvalue.Check{
				"source": knownvalue.StringExact("ads"), "term": knownvalue.StringExact("shoes"),
				"medium": knownvalue.Null(), "campaign": knownvalue.Null(), "content": knownvalue.Null(),
			})),
			withUTM("", knownvalue.Null()),
		},
	})
	if n := e.srv.Count("POST", "/api/links"); n != 1 {
		t.Errorf("POST requests: %d, want 1", n)
	}
}

func TestAccLink_changeSlugReplaces(t *testing.T) {
	e := newTestEnv(t)
	differentID := statecheck.CompareValue(compare.ValuesDiffer())
	step := func(slug string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config: e.linkConfig(`
  destination = "https://example.com/x"
  slug        = "` + slug + `"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, action)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				differentID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("short_url"), knownvalue.StringExact("https://go.example.test/"+slug)),
			},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			step("first", plancheck.ResourceActionCreate),
			step("second", plancheck.ResourceActionDestroyBeforeCreate),
		},
	})
}

func TestAccLink_expiresAtComparedByInstant(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	step := func(expires string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config: e.linkConfig(`
  destination = "https://example.com/exp"
  expires_at  = "` + expires + `"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, action)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact(expires)),
			},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			// The service stores and answers 2027-03-31T21:59:59.500Z.
			step("2027-03-31T23:59:59.5+02:00", plancheck.ResourceActionCreate),
			// A new spelling of the same instant changes only the state.
			step("2027-03-31T21:59:59.500Z", plancheck.ResourceActionUpdate),
		},
	})
	if l := e.onlyLinkOrNone(); l != nil {
		t.Fatalf("link left after destroy: %v", l)
	}
	if n := e.srv.Count("PATCH", "/api/links/{id}"); n != 0 {
		t.Errorf("PATCH requests: %d, want 0 for a new spelling of the same instant", n)
	}
	if n := e.srv.Count("POST", "/api/links"); n != 1 {
		t.Errorf("POST requests: %d, want 1", n)
	}
}

func TestAccLink_expiresAtSentAsUTCMillis(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config: e.linkConfig(`
  destination = "https://example.com/exp"
  expires_at  = "2027-04-01T01:59:59+02:00"`),
			Check: func(*terraform.State) error {
				got := e.onlyLink(t).ExpiresAt.Format("2006-01-02T15:04:05.000Z07:00")
				if got != "2027-03-31T23:59:59.000Z" {
					return fmt.Errorf("service expiry %s", got)
				}
				return nil
			},
		}, {
			Config: e.linkConfig(`
  destination = "https://example.com/exp"
  expires_at  = "2027-05-01T00:00:00Z"`),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionDestroyBeforeCreate)},
			},
		}},
	})
}

func TestAccLink_driftDeletedOutsideTerraform(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.linkConfig(`  destination = "https://example.com/drift"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: cfg},
			{
				PreConfig: func() {
					if err := e.srv.DeleteLinkOutOfBand(e.onlyLink(t).ID); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/drift")),
				},
			},
		},
	})
}

func TestAccLink_driftDestinationChangedOutsideTerraform(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	cfg := e.linkConfig(`  destination = "https://example.com/mine"`)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))}},
			{
				PreConfig: func() {
					if err := e.srv.ChangeLinkOutOfBand(e.onlyLink(t).ID, "https://example.com/theirs"); err != nil {
						t.Fatal(err)
					}
				},
				Config: cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionUpdate),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/mine")),
				},
				Check: func(*terraform.State) error {
					if got := e.onlyLink(t).Destination; got != "https://example.com/mine" {
						return fmt.Errorf("service destination %q after apply", got)
					}
					return nil
				},
			},
		},
	})
}

// onlyLinkOrNone returns a link left on the account, or nil.
func (e *testEnv) onlyLinkOrNone() any {
	if links := e.srv.Links(e.fx.AccountID); len(links) > 0 {
		return links[0]
	}
	return nil
}

// TestAccLink_providerConfiguredOnlyAtApply: base_url comes from a resource,
// so it is unknown while planning. The link is then planned from its state
// (not refreshed) instead of failing, and applies once the URL is known.
func TestAccLink_providerConfiguredOnlyAtApply(t *testing.T) {
	e := newTestEnv(t)
	cfg := func(url string) string {
		return fmt.Sprintf(`
resource "terraform_data" "endpoint" {
  input = %q
}

provider "shortlink" {
  base_url = terraform_data.endpoint.output
  api_key  = %q
}

resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/late"
}
`, url, e.fx.APIKey, e.fx.DomainID)
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: cfg(e.url), ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))}},
			{
				Config: cfg(e.url + "/"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionNoop)},
				},
				ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))},
			},
		},
	})
}

// TestAccLink_refreshWhileAnotherClientDeletes: the service pages the list
// by offset, and another client deletes its own links while Terraform lists
// them, so pages shift and some of our links fall between two pages. A
// refresh must not take them for deleted: the plan stays empty.
func TestAccLink_refreshWhileAnotherClientDeletes(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = "offset", 25 })
	const others = 30
	if err := e.srv.AddOtherClientLinks(e.fx.AccountID, others); err != nil {
		t.Fatal(err)
	}
	config := e.config(fmt.Sprintf(`
resource "shortlink_link" "many" {
  count       = 120
  domain_id   = %q
  slug        = "many-${count.index}"
  destination = "https://example.com/many/${count.index}"
}
`, e.fx.DomainID))
	otherClientLinks := func() int {
		n := 0
		for _, l := range e.srv.Links(e.fx.AccountID) {
			if strings.Contains(l.Destination, emulator.OtherClientHost) {
				n++
			}
		}
		return n
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = emulator.Churn{Delete: 1} }); err != nil {
						t.Fatal(err)
					}
				},
				Config:             config,
				PlanOnly:           true, // fails on any planned change, such as re-creating a "deleted" link
				ExpectNonEmptyPlan: false,
			},
			{
				PreConfig: func() {
					if n := otherClientLinks(); n >= others {
						t.Errorf("the other client still holds %d of its %d links: no listing was shifted, so this test proved nothing", n, others)
					}
					if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = emulator.Churn{} }); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// TestAccLink_takesOverLeftoverOfInterruptedRun: the service holds the
// link a killed run created (its POST was carried out, its state never
// written); the next apply meets 409 on the slug and takes that link over,
// then gives it its UTM parameters, instead of failing.
func TestAccLink_takesOverLeftoverOfInterruptedRun(t *testing.T) {
	e := newTestEnv(t)
	left, err := e.srv.SeedLinks(e.fx.DomainID, "left", 1)
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = %q
  slug        = "left-0"
  utm         = { source = "newsletter" }
}
`, e.fx.DomainID, left[0].Destination)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("shortlink_link.test", tfjsonpath.New("id"), knownvalue.StringExact(left[0].ID)),
			},
			Check: func(*terraform.State) error {
				l := e.onlyLink(t)
				if l.UTM == nil || l.UTM.Source != "newsletter" {
					return fmt.Errorf("the taken-over link has UTM %+v, want source newsletter", l.UTM)
				}
				if n := e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict); n != 1 {
					return fmt.Errorf("%d POSTs answered 409, want 1", n)
				}
				return nil
			},
		}},
	})
}
