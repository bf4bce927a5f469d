package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

const linkAddr = "shortlink_link.test"

// plannedStep applies config, checking that the plan takes action on
// shortlink_link.test, then checks the state.
func plannedStep(config string, action plancheck.ResourceActionType, checks ...statecheck.StateCheck) resource.TestStep {
	return resource.TestStep{Config: config, ConfigPlanChecks: expectAction(action), ConfigStateChecks: checks}
}

// expectAction checks that the plan takes action on shortlink_link.test.
func expectAction(action plancheck.ResourceActionType) resource.ConfigPlanChecks {
	return resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, action)}}
}

func (e *testEnv) linkConfig(attrs string) string {
	return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id = %q
%s
}
`, e.fx.DomainID, attrs))
}

// springLink is a provider block with key, and shortlink_link.test to
// destination with every other attribute set: slug spring, an expiry and
// three UTM parameters (testdata/link_spring.tf.tmpl).
func (e *testEnv) springLink(t *testing.T, key, destination string) string {
	return e.providerBlock(key) + testConfig(t, "link_spring.tf.tmpl", e.fx.DomainID, destination)
}

// springUTM is the utm of springLink as the state holds it.
func springUTM() knownvalue.Check {
	return knownvalue.ObjectExact(map[string]knownvalue.Check{
		"source": knownvalue.StringExact("newsletter"), "medium": knownvalue.StringExact("email"),
		"campaign": knownvalue.StringExact("spring"), "term": knownvalue.Null(), "content": knownvalue.Null(),
	})
}

func TestAccLink_createImportAndDestroy(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	config := e.springLink(t, e.fx.APIKey, "https://example.com/sale")
	e.testLink(t, []resource.TestStep{
		{
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionCreate)},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("id"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f-]{36}$`))),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("short_url"), knownvalue.StringExact("https://go.example.test/spring")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("qr_code_url"), knownvalue.StringExact("https://go.example.test/qr/spring.png")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2027-03-31T23:59:59Z")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("created_at"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("utm"), springUTM()),
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
			// The link's UUID in capitals names the same link; the state
			// holds the service's spelling.
			ResourceName: linkAddr,
			ImportState:  true,
			ImportStateIdFunc: func(s *terraform.State) (string, error) {
				return strings.ToUpper(s.RootModule().Resources[linkAddr].Primary.ID), nil
			},
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts"},
		},
		{
			// By the short URL a marketer has at hand, pasted with its host
			// in capitals, a trailing slash and UTM parameters.
			ResourceName:            linkAddr,
			ImportState:             true,
			ImportStateId:           "https://" + strings.ToUpper(e.fx.DomainHost) + "/spring/?utm_source=mail",
			ImportStateVerify:       true,
			ImportStateVerifyIgnore: []string{"timeouts"},
		},
		{
			// After the imports, the configuration still plans nothing.
			Config:   config,
			PlanOnly: true,
		},
	})
}

func TestAccLink_importBlock(t *testing.T) {
	skipBelowTerraform(t, 5, "an import block")
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", 1)
	body := fmt.Sprintf(`
import {
  to = shortlink_link.test
  id = %q
}
`, e.fx.DomainID+"/seeded-0")
	e.testLink(t, []resource.TestStep{{
		Config: e.linkConfig(`
  destination = "https://example.com/seeded/0"
  slug        = "seeded-0"`) + body,
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionNoop)},
		},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("id"), knownvalue.StringExact(seeded[0].ID)),
		},
	}})
}

// An account whose listing is larger than the client's old 32 MiB cap on a
// body: import by ID and by slug, a plan, an in-place change and a create
// all work from streamed listings. The imports are `terraform import`
// steps, not import blocks, so that the test runs on every Terraform the
// provider is tested on: the listing does not depend on the CLI.
func TestAccLink_accountLargerThanAnyBodyCap(t *testing.T) {
	const seededLinks = 100_000
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "large", seededLinks)
	if size := e.listingBytes(t); size <= 32<<20 {
		t.Fatalf("the listing is %d bytes, not larger than 32 MiB", size)
	}
	first, middle, last := seeded[0], seeded[seededLinks/2], seeded[seededLinks-1]
	config := func(middleDestination string) string {
		return e.config(testConfig(t, "link_large_account.tf.tmpl", e.fx.DomainID,
			first.Destination, middleDestination, last.Destination))
	}
	imported := func(name string) string { return "shortlink_link." + name }
	// importInto imports the link importID names into shortlink_link.name,
	// kept in the state for the steps after it.
	importInto := func(name, importID string) resource.TestStep {
		return resource.TestStep{
			Config:             config(middle.Destination),
			ResourceName:       imported(name),
			ImportState:        true,
			ImportStateId:      importID,
			ImportStatePersist: true,
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy: func(*terraform.State) error {
			if n := e.srv.LinkCount(e.fx.AccountID); n != seededLinks-3 {
				return fmt.Errorf("the account holds %d links after destroy, want %d (the three imported and the new one gone)", n, seededLinks-3)
			}
			return nil
		},
		Steps: []resource.TestStep{
			importInto("first", first.ID),
			importInto("middle", e.fx.DomainID+"/"+middle.Slug),
			importInto("last", last.ID),
			{
				Config: config(middle.Destination),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(imported("first"), plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(imported("middle"), plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction(imported("last"), plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("shortlink_link.new", plancheck.ResourceActionCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(imported("first"), tfjsonpath.New("slug"), knownvalue.StringExact(first.Slug)),
					statecheck.ExpectKnownValue(imported("middle"), tfjsonpath.New("id"), knownvalue.StringExact(middle.ID)),
					statecheck.ExpectKnownValue(imported("last"), tfjsonpath.New("slug"), knownvalue.StringExact(last.Slug)),
					e.serviceCounts(seededLinks + 1),
				},
			}, {
				Config: config("https://example.com/middle-moved"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(imported("middle"), plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("shortlink_link.new", plancheck.ResourceActionNoop),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(imported("middle"), tfjsonpath.New("id"), knownvalue.StringExact(middle.ID)),
				},
			},
		},
	})
}

func TestAccLink_changeDestinationInPlace(t *testing.T) {
	e := newTestEnv(t)
	sameID := statecheck.CompareValue(compare.ValuesSame())
	sameShortURL := statecheck.CompareValue(compare.ValuesSame())
	step := func(dest string, action plancheck.ResourceActionType) resource.TestStep {
		return resource.TestStep{
			Config:           e.linkConfig(`  destination = "` + dest + `"`),
			ConfigPlanChecks: expectAction(action),
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
	e.testLink(t, []resource.TestStep{
		step("https://example.com/one", plancheck.ResourceActionCreate),
		step("https://example.com/two", plancheck.ResourceActionUpdate),
	})
	e.expectRequests(t, "PATCH", "/api/links/{id}", 1, "one change in place")
	e.expectRequests(t, "POST", "/api/links", 1, "an update must not recreate")
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
	e.testLink(t, []resource.TestStep{
		first,
		withUTM(`  utm = { source = "ads", term = "shoes" }`, knownvalue.ObjectExact(map[string]knownvalue.Check{
			"source": knownvalue.StringExact("ads"), "term": knownvalue.StringExact("shoes"),
			"medium": knownvalue.Null(), "campaign": knownvalue.Null(), "content": knownvalue.Null(),
		})),
		withUTM("", knownvalue.Null()),
	})
	e.expectRequests(t, "POST", "/api/links", 1, "UTM changes in place")
}

func TestAccLink_changeSlugReplaces(t *testing.T) {
	e := newTestEnv(t)
	differentID := statecheck.CompareValue(compare.ValuesDiffer())
	step := func(slug string, action plancheck.ResourceActionType) resource.TestStep {
		return plannedStep(e.linkConfig(`
  destination = "https://example.com/x"
  slug        = "`+slug+`"`), action,
			differentID.AddStateValue(linkAddr, tfjsonpath.New("id")),
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("short_url"), knownvalue.StringExact("https://go.example.test/"+slug)))
	}
	e.testLink(t, []resource.TestStep{
		step("first", plancheck.ResourceActionCreate),
		step("second", plancheck.ResourceActionDestroyBeforeCreate),
	})
}

// idOfAStretch is a statecheck.CompareValue: the steps it is added to hold
// one link ID.
type idOfAStretch interface {
	AddStateValue(resourceAddress string, attributePath tfjsonpath.Path) statecheck.StateCheck
}

func TestAccLink_expiresAtComparedByInstant(t *testing.T) {
	e := newTestEnv(t)
	// One link ID for each stretch of steps between replacements.
	first, second, third := statecheck.CompareValue(compare.ValuesSame()), statecheck.CompareValue(compare.ValuesSame()), statecheck.CompareValue(compare.ValuesSame())
	stepTo := func(sameID idOfAStretch, destination, expires string, action plancheck.ResourceActionType) resource.TestStep {
		return plannedStep(e.linkConfig(`
  destination = "`+destination+`"
  expires_at  = "`+expires+`"`), action,
			sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact(expires)))
	}
	step := func(sameID idOfAStretch, expires string, action plancheck.ResourceActionType) resource.TestStep {
		return stepTo(sameID, "https://example.com/exp", expires, action)
	}
	e.testLink(t, []resource.TestStep{
		// The service stores and answers 2027-03-31T21:59:59.500Z.
		step(first, "2027-03-31T23:59:59.5+02:00", plancheck.ResourceActionCreate),
		// A new spelling of the same instant changes only the state.
		step(first, "2027-03-31T21:59:59.500Z", plancheck.ResourceActionUpdate),
		// So do digits beyond the millisecond, which is all that is sent.
		step(first, "2027-03-31T21:59:59.500999Z", plancheck.ResourceActionUpdate),
		// A whole second is not the .500 the service keeps: it would keep
		// the whole second, so the link is replaced (the new one at :00).
		step(second, "2027-03-31T22:00:00Z", plancheck.ResourceActionDestroyBeforeCreate),
		// A time rounding to that second (or within it) is taken for it, as
		// a service keeping whole seconds would keep it: nothing is sent,
		// and the refresh, reading :00.000 back, agrees with the plan.
		step(second, "2027-03-31T21:59:59.750Z", plancheck.ResourceActionUpdate),
		// A change of destination then sends one PATCH, whose answer
		// carries the service's :00.000, and succeeds.
		stepTo(second, "https://example.com/exp2", "2027-03-31T21:59:59.750Z", plancheck.ResourceActionUpdate),
		// .400 past the :00 the service keeps (the refresh read it back):
		// the plan compares with what the service holds, not with the .750
		// the state took from the configuration, so it is that second too
		// and nothing is sent.
		stepTo(second, "https://example.com/exp2", "2027-03-31T22:00:00.400Z", plancheck.ResourceActionUpdate),
		// Back to the whole second the link has held all along: not a
		// replacement, though the state held a fraction.
		stepTo(second, "https://example.com/exp2", "2027-03-31T22:00:00Z", plancheck.ResourceActionUpdate),
		// .400 before it is another second than the service's :00, whatever
		// the state held before: the link is replaced, so that no chain of
		// such steps drifts a second from what the service keeps.
		stepTo(third, "https://example.com/exp2", "2027-03-31T21:59:59.400Z", plancheck.ResourceActionDestroyBeforeCreate),
	})
	if l := e.onlyLinkOrNone(); l != nil {
		t.Fatalf("link left after destroy: %v", l)
	}
	e.expectRequests(t, "PATCH", "/api/links/{id}", 1, "a new spelling of the same instant changes only the state; the destination, one PATCH")
	e.expectRequests(t, "POST", "/api/links", 3, "a new spelling must not recreate; the two other instants do")
}

// expires_at goes to the service as the contract says, in UTC with
// milliseconds and a Z, whatever RFC 3339 spelling the configuration uses:
// the test reads the create's body as it arrived.
func TestAccLink_expiresAtSentAsUTCMillis(t *testing.T) {
	var mu sync.Mutex
	var sent []string // expiresAt of each create, as sent
	svc := testsupport.Start(t, testsupport.Options{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.URL.Path == "/api/links" {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				var create struct {
					ExpiresAt *string `json:"expiresAt"`
				}
				if json.Unmarshal(body, &create) == nil && create.ExpiresAt != nil {
					mu.Lock()
					sent = append(sent, *create.ExpiresAt)
					mu.Unlock()
				}
			}
			next.ServeHTTP(w, r)
		})
	}})
	e := &testEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
	sentAs := func(want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(sent, want) {
				return fmt.Errorf("creates sent expiresAt %q, want %q", sent, want)
			}
			return nil
		}
	}
	e.testLink(t, []resource.TestStep{{
		Config: e.linkConfig(`
  destination = "https://example.com/exp"
  expires_at  = "2027-04-01T01:59:59+02:00"`),
		Check: sentAs("2027-03-31T23:59:59.000Z"),
	}, {
		Config: e.linkConfig(`
  destination = "https://example.com/exp"
  expires_at  = "2027-05-01T00:00:00Z"`),
		ConfigPlanChecks: resource.ConfigPlanChecks{
			PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionDestroyBeforeCreate)},
		},
		Check: sentAs("2027-03-31T23:59:59.000Z", "2027-05-01T00:00:00.000Z"),
	}})
}

func TestAccLink_driftDeletedOutsideTerraform(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.linkConfig(`  destination = "https://example.com/drift"`)
	e.testLink(t, []resource.TestStep{
		{Config: cfg},
		{
			PreConfig: func() {
				// Its domain holds another link, as an account's domains do: a
				// refresh that finds none on it stops instead (below).
				managed := e.onlyLink(t)
				e.seedLinks(t, e.fx.DomainID, "other", 1)
				if err := e.srv.DeleteLinkOutOfBand(managed.ID); err != nil {
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
		{
			PreConfig: func() { e.deleteSeeded(t, "other-0") }, // the account holds only the managed link again
			Config:    cfg,
		},
	})
}

// A refresh whose look at the link's domain fails keeps the link: a
// listing that failed cannot say it is gone. Here with another account's
// key and bulk_refresh off, where that look is a listing of its own, and
// a drop would have the next run with the right key create the link again.
func TestRead_aFailedLookAtTheDomainKeepsTheLink(t *testing.T) {
	e := newTestEnv(t)
	other, err := e.srv.SeedFixture("other", "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	mine := seededIDs(t, e, e.fx.DomainID, "mine", 1)[0]
	right := newListClient(t)
	right.configure(e.url, e.fx.APIKey)
	read := func(c *listClient, state *tfprotov6.DynamicValue) *tfprotov6.ReadResourceResponse {
		t.Helper()
		resp, err := c.server.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "shortlink_link", CurrentState: state})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	state := read(right, right.importedState(mine)).NewState // with its domain, as a refresh records it
	wrong := func() *listClient {
		c := newListClient(t)
		c.configureWith(e.url, other.APIKey, map[string]tftypes.Value{"bulk_refresh": tftypes.NewValue(tftypes.Bool, false)})
		return c
	}
	before := e.srv.Count(http.MethodGet, "/api/links")
	if resp := read(wrong(), state); len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Summary != "No link on the link's domain" {
		t.Fatalf("with another account's key: %s", diagnosticsText(resp.Diagnostics))
	}
	looks := e.srv.Count(http.MethodGet, "/api/links") - before // the last is the look at the domain
	delay := emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Millisecond), Method: http.MethodGet, Path: "/api/links"}
	script := slices.Repeat([]emulator.Fault{delay}, looks-1)
	e.srv.SetFaults(emulator.FaultPlan{Script: append(script, emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusInternalServerError, Method: http.MethodGet, Path: "/api/links"})})
	resp := read(wrong(), state)
	if !slices.ContainsFunc(resp.Diagnostics, func(d *tfprotov6.Diagnostic) bool { return d.Severity == tfprotov6.DiagnosticSeverityError }) || resp.NewState == nil || resp.NewState.MsgPack == nil {
		t.Fatalf("the look at the domain failed: want an error and the link kept; got state %v and:\n%s", resp.NewState, diagnosticsText(resp.Diagnostics))
	}
	if !strings.Contains(diagnosticsText(resp.Diagnostics), "500") {
		t.Fatalf("the error does not say what failed:\n%s", diagnosticsText(resp.Diagnostics))
	}
	// A link taken out of the state is a null state, not a missing one.
	if kept, err := resp.NewState.Unmarshal(right.resource); err != nil || kept.IsNull() {
		t.Fatalf("the look at the domain failed: the link left the state (%v, %v)", kept, err)
	}
}

// deleteSeeded deletes, behind the provider's back, the link holding slug.
func (e *testEnv) deleteSeeded(t *testing.T, slug string) {
	t.Helper()
	for _, l := range e.srv.Links(e.fx.AccountID) {
		if l.Slug == slug {
			if err := e.srv.DeleteLinkOutOfBand(l.ID); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no link holds the slug %q", slug)
}

// A plan with another account's key (a CI variable of the staging
// account, say) lists none of the state's links, nor any other link on
// their domain. Read as deleted, the links would leave the state, and the
// next run with the right key would make them again beside the originals:
// a second link for each without a slug. The refresh stops the plan
// instead, explains once, and keeps the state; the right key then finds
// everything as it was. The same holds whether the other account has links.
func TestAccLink_anotherAccountsKeyKeepsTheState(t *testing.T) {
	for name, otherLinks := range map[string]int{"an empty account": 0, "an account with links": 3} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			other, err := e.srv.SeedFixture("other", "other.example.test")
			if err != nil {
				t.Fatal(err)
			}
			e.seedLinks(t, other.DomainID, "theirs", otherLinks)
			body := fmt.Sprintf(`
resource "shortlink_link" "named" {
  domain_id   = %[1]q
  slug        = "named"
  destination = "https://example.com/named"
}

resource "shortlink_link" "anonymous" {
  domain_id   = %[1]q
  destination = "https://example.com/anonymous"
}
`, e.fx.DomainID)
			sameIDs := statecheck.CompareValue(compare.ValuesSame())
			e.testLink(t, []resource.TestStep{
				{Config: e.config(body), ConfigStateChecks: []statecheck.StateCheck{sameIDs.AddStateValue("shortlink_link.anonymous", tfjsonpath.New("id"))}},
				{
					Config: e.providerBlock(other.APIKey) + body,
					ExpectError: expectErr("No link on the link's domain", "and neither is any other link on its domain "+e.fx.DomainID,
						"is another account's", "keeps the link in the state and stops the plan", "terraform state rm"),
				},

				{
					Config: e.config(body),
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{sameIDs.AddStateValue("shortlink_link.anonymous", tfjsonpath.New("id")), e.serviceCounts(2)},
				},
			})
		})
	}
}

// A destination changed outside Terraform shows in the plan and is set
// back, a trailing slash taken away too: "/mine/" and "/mine" are two paths.
func TestAccLink_driftDestinationChangedOutsideTerraform(t *testing.T) {
	for mine, theirs := range map[string]string{
		"https://example.com/mine":  "https://example.com/theirs",
		"https://example.com/mine/": "https://example.com/mine",
	} {
		t.Run(theirs, func(t *testing.T) {
			e := newTestEnv(t)
			sameID := statecheck.CompareValue(compare.ValuesSame())
			cfg := e.linkConfig(`  destination = "` + mine + `"`)
			e.testLink(t, []resource.TestStep{
				{Config: cfg, ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))}},
				{
					PreConfig: func() {
						if err := e.srv.ChangeLinkOutOfBand(e.onlyLink(t).ID, theirs); err != nil {
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
						statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("destination"), knownvalue.StringExact(mine)),
					},
					Check: func(*terraform.State) error {
						if got := e.onlyLink(t).Destination; got != mine {
							return fmt.Errorf("service destination %q after apply", got)
						}
						return nil
					},
				},
			})
		})
	}
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
// (On a CLI without terraform_data the URL is unknown at every plan, the
// one after each apply too: see knownAtApply.)
func TestAccLink_providerConfiguredOnlyAtApply(t *testing.T) {
	e := newTestEnv(t)
	cfg := func(url string) string {
		block, expr := knownAtApply(t, "endpoint", url)
		return testConfig(t, "link_provider_configured_only_at_apply.tf.tmpl", block, expr, e.fx.APIKey, e.fx.DomainID)
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	e.testLink(t, []resource.TestStep{
		{Config: cfg(e.url), ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))}},
		{
			Config: cfg(e.url + "/"),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(linkAddr, plancheck.ResourceActionNoop)},
			},
			ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))},
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

// TestAccLink_refreshWhileABulkDeleteRuns: another client deletes two of
// its links before every page of every listing, so each listing shifts past
// the same links of ours, the second as the first did. A refresh keeps
// looking until a listing shows no deletes under way, or keeps the link as
// recorded with a warning; it never plans to make again a link that is
// there (one without a slug would then be made twice).
func TestAccLink_refreshWhileABulkDeleteRuns(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = "offset", 5 })
	others := func(n int) func() {
		return func() {
			if err := e.srv.AddOtherClientLinks(e.fx.AccountID, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	link := func(name string) string {
		return fmt.Sprintf(`
resource "shortlink_link" %q {
  domain_id   = %q
  destination = "https://example.com/%s"
}
`, name, e.fx.DomainID, name)
	}
	one, both := e.config(link("m12")), e.config(link("m12")+link("m14"))
	made := func(name string) int {
		n := 0
		for _, l := range e.srv.Links(e.fx.AccountID) {
			if l.Destination == "https://example.com/"+name {
				n++
			}
		}
		return n
	}
	others(12)()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: one},                        // the 13th link
			{PreConfig: others(1), Config: both}, // the 15th
			{
				PreConfig: func() {
					others(8)()
					if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = emulator.Churn{Delete: 2} }); err != nil {
						t.Fatal(err)
					}
				},
				Config: both,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				PreConfig: func() {
					if m12, m14 := made("m12"), made("m14"); m12 != 1 || m14 != 1 {
						t.Errorf("the account holds %d links to m12 and %d to m14, want one each", m12, m14)
					}
					if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = emulator.Churn{} }); err != nil {
						t.Fatal(err)
					}
				},
				Config: both,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}

// TestAccLink_refreshKeepsALinkNoListingCanSettle: a link deleted outside
// Terraform while another client's bulk delete shifts every listing cannot
// be told from one every listing skipped: the refresh keeps it as recorded
// (with a warning) rather than plan to make it again. Once the deletes end,
// a refresh finds it gone and the plan makes it anew.
func TestAccLink_refreshKeepsALinkNoListingCanSettle(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = "offset", 25 })
	const others = 1500 // 59 deleted in each listing: enough for every listing of the plan to shift
	if err := e.srv.AddOtherClientLinks(e.fx.AccountID, others); err != nil {
		t.Fatal(err)
	}
	config := e.config(fmt.Sprintf(`
resource "shortlink_link" "doomed" {
  domain_id   = %q
  destination = "https://example.com/doomed"
}
`, e.fx.DomainID))
	churn := func(c emulator.Churn) {
		if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = c }); err != nil {
			t.Fatal(err)
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					for _, l := range e.srv.Links(e.fx.AccountID) {
						if l.Destination == "https://example.com/doomed" {
							if err := e.srv.DeleteLinkOutOfBand(l.ID); err != nil {
								t.Fatal(err)
							}
						}
					}
					churn(emulator.Churn{Delete: 1})
				},
				Config:   config,
				PlanOnly: true, // fails on any planned change: here, making the link again
			},
			{
				PreConfig: func() {
					if n := e.srv.LinkCount(e.fx.AccountID); n > others-snapshot.MaxLooks*50 {
						t.Errorf("the account still holds %d links: the other client's deletes did not shift every listing, so this test proved nothing", n)
					}
					churn(emulator.Churn{})
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("shortlink_link.doomed", plancheck.ResourceActionCreate)},
				},
			},
		},
	})
}

// leftoverConfig declares the link left (its domain, destination and
// slug) as a resource, with the attributes in extra besides.
func (e *testEnv) leftoverConfig(left emulator.Link, extra string) string {
	return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = %q
  slug        = %q
  %s
}
`, left.DomainID, left.Destination, left.Slug, extra))
}

// TestAccLink_takesOverLeftoverOfInterruptedRun: the service holds the
// link a killed run created (its POST was carried out, its state never
// written); the next apply meets 409 on the slug and takes that link over,
// then gives it its UTM parameters, instead of failing.
func TestAccLink_takesOverLeftoverOfInterruptedRun(t *testing.T) {
	e := newTestEnv(t)
	left := e.seedLinks(t, e.fx.DomainID, "left", 1)
	e.testLink(t, []resource.TestStep{{
		Config: e.leftoverConfig(left[0], `utm = { source = "newsletter" }`),
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
	}})
}

// TestAccLink_copyPlannedBeforeTheLinkItWantsFailsThePlan: a resource
// copied with its slug, destination and all, declares the link another
// resource of the configuration manages. Planned before that resource
// (depends_on orders them here), its create finds the link free to take
// over as a leftover; the apply, another process, would take it, and two
// resources would manage one link. The other resource's plan, which keeps
// the link, then fails, and nothing is sent.
func TestAccLink_copyPlannedBeforeTheLinkItWantsFailsThePlan(t *testing.T) {
	e := newTestEnv(t)
	block := func(name, dependsOn string) string {
		return fmt.Sprintf(`
resource "shortlink_link" %q {
  domain_id   = %q
  destination = "https://example.com/spring"
  slug        = "spring"
  depends_on  = [%s]
}
`, name, e.fx.DomainID, dependsOn)
	}
	kept := e.config(block("kept", ""))
	e.testLink(t, []resource.TestStep{
		{Config: kept},
		{
			Config:      e.config(block("kept", "shortlink_link.copy") + block("copy", "")),
			ExpectError: expectErr("Slug held by this resource's link", `holds the slug "spring"`, "would take this link over", "moved block"),
		},
		{
			Config:           kept,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			Check: func(*terraform.State) error {
				if n := e.srv.Count(http.MethodPost, "/api/links"); n != 1 {
					return fmt.Errorf("%d creates sent, want 1: the copy's create went", n)
				}
				return nil
			},
		},
	})
}

// TestAccLink_swappedSlugsPlanEveryTime: two links to one page swap
// slugs, so each is replaced at the other's slug. Planned in either order
// (depends_on fixes one here), the plan passes: a resource being replaced
// does not keep the link a create of the plan found free to take over.
func TestAccLink_swappedSlugsPlanEveryTime(t *testing.T) {
	e := newTestEnv(t)
	links := func(slugA, slugB string) string {
		return e.config(fmt.Sprintf(`
resource "shortlink_link" "a" {
  domain_id   = %[1]q
  destination = "https://example.com/page"
  slug        = %[2]q
}
resource "shortlink_link" "b" {
  domain_id   = %[1]q
  destination = "https://example.com/page"
  slug        = %[3]q
  depends_on  = [shortlink_link.a]
}
`, e.fx.DomainID, slugA, slugB))
	}
	e.testLink(t, []resource.TestStep{
		{Config: links("x", "y")},
		{Config: links("y", "x"), PlanOnly: true, ExpectNonEmptyPlan: true},
	})
}

// TestAccLink_taintedWithCreateBeforeDestroyKeepsItsLink: replacing a
// link with a fixed slug create-before-destroy (here after a taint, as an
// interrupted create leaves one) meets its own old link on the slug and
// takes it over; the old object, destroyed next, must leave the link on
// the service rather than delete the link the new object names.
func TestAccLink_taintedWithCreateBeforeDestroyKeepsItsLink(t *testing.T) {
	for name, firstAnswer := range map[string]int{
		"the create answered 409":                        0,
		"the create's first answer lost (502), then 409": http.StatusBadGateway,
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			config := e.linkConfig(`
  destination = "https://example.com/sale"
  slug        = "sale"
  lifecycle {
    create_before_destroy = true
  }`)
			var id string
			e.testLink(t, []resource.TestStep{
				{Config: config, Check: func(*terraform.State) error { id = e.onlyLink(t).ID; return nil }},
				{
					PreConfig: func() {
						if firstAnswer != 0 {
							e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: firstAnswer, Method: http.MethodPost, Path: "/api/links"})
						}
					},
					Config: config,
					Taint:  []string{linkAddr},
					Check: func(s *terraform.State) error {
						l := e.onlyLink(t)
						if l.ID != id || s.RootModule().Resources[linkAddr].Primary.ID != id {
							return fmt.Errorf("the service holds link %s and the state names %s; want both the link %s, kept", l.ID, s.RootModule().Resources[linkAddr].Primary.ID, id)
						}
						if n := e.srv.Count(http.MethodDelete, "/api/links/{id}"); n != 0 {
							return fmt.Errorf("%d deletes sent, want none", n)
						}
						return nil
					},
				},
				{Config: config, PlanOnly: true},
			})
		})
	}
}

// slowListings makes the next n listings take a second each, as a large
// account's do: answers that come while one is on its way wait for the
// next, which they share. A second, not less: on a loaded machine the
// answers of one apply come seconds apart, and listings much shorter than
// that spread are shared by few.
func (e *testEnv) slowListings(n int) {
	for range n {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultDelay, Delay: emulator.Duration(time.Second), Method: http.MethodGet, Path: "/api/links"})
	}
}

// countedLinks is a configuration of n links with slugs <name>-<i> and
// destinations https://example.com/<path>/<i>.
func (e *testEnv) countedLinks(n int, name, path string) string {
	return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  count       = %d
  domain_id   = %q
  slug        = "%s-${count.index}"
  destination = "https://example.com/%s/${count.index}"
}
`, n, e.fx.DomainID, name, path))
}

// listingsShared fails unless n answers of an apply, beside its plan's
// listing, took at most about half as many listings as answers (each its
// own would be n+1).
func (e *testEnv) listingsShared(n int, answers string) error {
	if got := e.srv.Count(http.MethodGet, "/api/links"); got > n/2+2 {
		return fmt.Errorf("%d listings for %d %s, want them shared (each its own: %d)", got, n, answers, n+1)
	}
	return nil
}

// TestAccLink_leftoversOfAKilledRunShareTheirListings: a killed run
// leaves every link it sent; the next apply meets a 409 on each slug. The
// 409s share the listings that find their holders, which on a large
// account would otherwise cost a listing of the whole account each.
func TestAccLink_leftoversOfAKilledRunShareTheirListings(t *testing.T) {
	e := newTestEnv(t)
	const n = 20
	left := e.seedLinks(t, e.fx.DomainID, "left", n)
	e.srv.ResetCounts()
	e.slowListings(2 * n)
	e.testLink(t, []resource.TestStep{{
		Config: e.countedLinks(n, "left", "left"),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("shortlink_link.test[0]", tfjsonpath.New("id"), knownvalue.StringExact(left[0].ID)),
			statecheck.ExpectKnownValue(fmt.Sprintf("shortlink_link.test[%d]", n-1), tfjsonpath.New("id"), knownvalue.StringExact(left[n-1].ID)),
		},
		Check: func(*terraform.State) error {
			if got := e.srv.Count(http.MethodPost, "/api/links", http.StatusConflict); got != n {
				return fmt.Errorf("%d creates answered 409, want %d", got, n)
			}
			return e.listingsShared(n, "409s") // one in flight when a later 409 came does not do
		},
	}})
}

// TestAccLink_createsLeftUnansweredShareTheirSearch: creates the service
// made but whose answers were lost each search the account for their link;
// concurrent searches share the listings, and each finds its own link.
func TestAccLink_createsLeftUnansweredShareTheirSearch(t *testing.T) {
	e := newTestEnv(t)
	const n = 20
	for range n {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultCloseAfterCommit, Method: http.MethodPost, Path: "/api/links"})
	}
	e.slowListings(2 * n)
	e.testLink(t, []resource.TestStep{{
		PreConfig: e.srv.ResetCounts,
		Config:    e.countedLinks(n, "lost", "lost"),
		Check: func(*terraform.State) error {
			if got := len(e.srv.Links(e.fx.AccountID)); got != n {
				return fmt.Errorf("the service holds %d links, want %d", got, n)
			}
			return e.listingsShared(n, "searches")
		},
	}})
}

// TestAccLink_changesAnsweredWithoutTheLinkShareTheirListings: a service
// that answers a change 204, without the link, has it read back from a
// listing started after the answer; the changes of one apply share those
// listings rather than list the account once each.
func TestAccLink_changesAnsweredWithoutTheLinkShareTheirListings(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.ChangeStatus = 204 })
	const n = 20
	e.testLink(t, []resource.TestStep{
		{Config: e.countedLinks(n, "page", "v1")},
		{
			PreConfig: func() { e.srv.ResetCounts(); e.slowListings(2 * n) },
			Config:    e.countedLinks(n, "page", "v2"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("shortlink_link.test[0]", tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/v2/0")),
			},
			Check: func(*terraform.State) error {
				if got := e.srv.Count(http.MethodPatch, "/api/links/{id}"); got != n {
					return fmt.Errorf("%d changes sent, want %d", got, n)
				}
				return e.listingsShared(n, "changes answered 204")
			},
		},
	})
}

// TestAccLink_expiresAtInLowerCase: RFC 3339 lets the T and Z be written
// in lower case (section 5.6); such an expiry is sent as the instant it
// names, kept as written, and plans nothing after.
func TestAccLink_expiresAtInLowerCase(t *testing.T) {
	e := newTestEnv(t)
	const expires = "2030-01-01t00:00:00.250z"
	config := e.linkConfig(`
  destination = "https://example.com/a"
  expires_at  = "` + expires + `"`)
	e.testLink(t, []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact(expires)),
			},
			Check: func(*terraform.State) error {
				if l := e.onlyLink(t); l.ExpiresAt == nil || !l.ExpiresAt.Equal(time.Date(2030, 1, 1, 0, 0, 0, 250e6, time.UTC)) {
					return fmt.Errorf("the service holds expiry %v", l.ExpiresAt)
				}
				return nil
			},
		},
		{Config: config, PlanOnly: true},
	})
}

// TestAccLink_domainIDInOtherCaseKeepsTheLink: a UUID names its domain in
// any letter case, so writing domain_id in capitals (as the dashboard
// shows it, or after an import stored the service's lower case) changes
// only its spelling in the state: no replacement, no request.
func TestAccLink_domainIDInOtherCaseKeepsTheLink(t *testing.T) {
	e := newTestEnv(t)
	config := func(domainID string) string {
		return e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/a"
  slug        = "case"
}
`, domainID))
	}
	sameID := statecheck.CompareValue(compare.ValuesSame())
	e.testLink(t, []resource.TestStep{
		{
			Config:            config(strings.ToLower(e.fx.DomainID)),
			ConfigStateChecks: []statecheck.StateCheck{sameID.AddStateValue(linkAddr, tfjsonpath.New("id"))},
		},
		{
			Config:           config(strings.ToUpper(e.fx.DomainID)),
			ConfigPlanChecks: expectAction(plancheck.ResourceActionUpdate),
			ConfigStateChecks: []statecheck.StateCheck{
				sameID.AddStateValue(linkAddr, tfjsonpath.New("id")),
				statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("domain_id"), knownvalue.StringExact(strings.ToUpper(e.fx.DomainID))),
			},
		},
	})
	e.expectRequests(t, http.MethodPost, "/api/links", 1, "a domain ID in other case is the same domain")
	e.expectRequests(t, http.MethodPatch, "/api/links/{id}", 0, "only the spelling changed")
}

// TestAccLink_leavesASlugHolderWithOtherUTMParameters: a link that holds
// the slug with UTM parameters the resource does not declare is not what
// an interrupted create of it leaves (none yet, or its own), so it is
// another configuration's: the apply fails on the 409, saying so, and
// neither takes the link over nor changes it.
func TestAccLink_leavesASlugHolderWithOtherUTMParameters(t *testing.T) {
	e := newTestEnv(t)
	left := e.seedLinks(t, e.fx.DomainID, "left", 1)[0]
	c := e.apiClient(t)
	if _, err := c.ChangeDestination(context.Background(), left.ID, client.ChangeDestinationInput{Destination: left.Destination, UTM: &client.UTM{Source: "old"}}); err != nil {
		t.Fatal(err)
	}
	e.testLink(t, []resource.TestStep{{
		Config:      e.leftoverConfig(left, ""),
		ExpectError: expectErr("slug_taken", "its UTM parameters differ from this resource's"),
	}})
	if l := e.onlyLink(t); l.ID != left.ID || l.UTM == nil || l.UTM.Source != "old" {
		t.Fatalf("the service holds %+v; want the holder unchanged", l)
	}
}

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
		{`destination = ""`, expectErr(`destination is empty; write an absolute URL such as https://example.com/sale`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = ""`, expectErr(`slug is empty: to give none, leave it out or set it to null`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = ""`, expectErr(`Invalid time`, `expires_at is empty, which is not a time. To set none, leave it out or set it to null`)},
		{`destination = "ftp://example.com/a"`, expectErr(`destination "ftp://example.com/a" must start with http:// or https://`)},
		{`destination = "/sale"`, expectErr(`destination "/sale" must start with http://`)},
		{`destination = "https:///sale"`, expectErr(`has no host`)},
		{`destination = "https://example.com/sale "`, expectErr(`destination "https://example.com/sale " starts or ends with white space; remove it (from a CSV cell, with trimspace())`)},
		{`destination = "https://example.com/spring sale"`, expectErr(`contains white space at character 27; a URL holds none: write a space as %20`)},
		{`destination = "https://example.com/` + strings.Repeat("a", 2100) + `"`, expectErr(`at most 2048 are allowed`)},
		{`destination = "https://ops:hunter2@example.com/a"`, expectErr(`destination holds a user name or password before its host (…@example.com); a short link is public`)},
		{`destination = "https://example.com:99999/a"`, expectErr(`has port 99999; a port is 1 to 65535`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "a/b"`, expectErr(`slug "a/b" contains '/'`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "spring sale"`, expectErr(`contains ' '`)},
		{`destination = "https://example.com/a"` + "\n" + `slug = "` + strings.Repeat("s", 65) + `"`, expectErr(`must be 1 to 64 characters long`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "next friday"`, expectErr(`Invalid time`, `expires_at is "next friday"`, `for example 2027-01-05T23:59:59Z`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "2027-13-01T00:00:00Z"`, expectErr(`Invalid time`, `expires_at is "2027-13-01T00:00:00Z", which is not an RFC 3339 time. Its month is out of range.`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "2027-02-30T00:00:00Z"`, expectErr(`Its day is out of range.`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "2027-02-01T00:00:00+24:00"`, expectErr(`Its time zone offset is out of range.`)},
		{`destination = "https://example.com/a"` + "\n" + `utm = {}`, expectErr(`Empty utm`, `set at least one of campaign, content, medium, source, term`)},
		// Terraform drops the misspelt name: the provider sees an empty utm.
		{`destination = "https://example.com/a"` + "\n" + `utm = { utm_campaign = "spring" }`, expectErr(`Empty utm`, `set at least one of campaign, content, medium, source, term (a name spelt otherwise is dropped by Terraform)`)},
		{`destination = "https://example.com/\u200bsale"`, expectErr(`contains the invisible character U+200B at character 21`)},
		{`destination = "https://example.com/a"` + "\n" + `utm = { source = "news\nletter" }`, expectErr(`Invalid utm.source`, `control or invisible character U+000A`)},
		// On the utm line, which Terraform shows, not the resource's first.
		{`destination = "https://example.com/a"` + "\n" + `utm = { source = "" }`, expectErr(`Invalid utm.source`, `utm = { source = "" }`, `utm.source is empty: for a link without this parameter, leave it out or set it to null`)},
		{`destination = "https://example.com/a"` + "\n" + `utm = { campaign = "spring " }`, expectErr(`utm.campaign "spring " starts or ends with white space; remove it (from a CSV cell, with trimspace())`)},
		{`destination = "https://example.com/a?utm_source=print"` + "\n" + `utm = { source = "newsletter" }`, expectErr(`UTM parameter set twice`, `utm = { source = "newsletter" }`, `utm.source is "newsletter", but the destination's query sets utm_source=print`)},
		{`destination = "https://example.com/a"` + "\n" + `expires_at = "9999-12-31T23:59:59-01:00"`, expectErr(`Invalid expires_at`, `which is 10000-01-01T00:59:59Z in UTC: the service takes times in UTC, from the year 0000 to 9999`)},
		// On the timeouts line, as for utm.
		{`destination = "https://example.com/a"` + "\n" + `timeouts = { create = "0s" }`, expectErr(`Invalid timeouts.create`, `timeouts = { create = "0s" }`, `timeouts.create is "0s": the create would fail before its first request. Remove it for the default (1h0m0s)`)},
		{`destination = "https://example.com/a"` + "\n" + `timeouts = { delete = "-5m" }`, expectErr(`timeouts = { delete = "-5m" }`, `timeouts.delete is "-5m": the delete would fail`)},
		{`destination = "https://example.com/a"` + "\n" + `timeouts = { create = "ten minutes" }`, expectErr(`Invalid timeouts.create`, `timeouts = { create = "ten minutes" }`, `timeouts.create "ten minutes" is not a duration; write a number and a unit, such as "30s"`)},
		{`destination = "https://example.com/a"` + "\n" + `timeouts = { update = "1d" }`, expectErr(`Invalid timeouts.update`, `timeouts = { update = "1d" }`, `timeouts.update "1d" is not a duration: durations have no unit for days; write it in hours, "24h"`)},
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

func TestAccLink_deleteOfAlreadyGoneLinkSucceeds(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		// The DELETE was answered 404 (the fault), so the link is still
		// stored, and destroy must have succeeded all the same.
		CheckDestroy: func(*terraform.State) error {
			if n := e.srv.Count("DELETE", "/api/links/{id}", 404); n != 1 {
				return fmt.Errorf("DELETE answered 404 %d times, want 1", n)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: e.config(linkBody(e.fx.DomainID, "https://example.com/a")),
			Check: func(*terraform.State) error {
				e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 404, Method: "DELETE"})
				return nil
			},
		}},
	})
}

// TestAccLinkImport_mistakenIDs: an import ID that names no link on the
// account, or is of neither form, is an error at import that says which.
func TestAccLinkImport_mistakenIDs(t *testing.T) {
	e := newTestEnv(t)
	config := e.config(linkBody(e.fx.DomainID, "https://example.com/a"))
	e.seedLinks(t, e.fx.DomainID, "seeded", 1) // the domain has a link, not the slug
	for name, tc := range map[string]struct {
		id   string
		want []string
	}{
		"unknown ID":           {"0b7c1f2e-0000-4000-8000-000000000000", []string{"no link with ID", "0b7c1f2e-0000-4000-8000-000000000000", "is on this account"}},
		"unknown slug":         {e.fx.DomainID + "/nope", []string{"no link with slug", `"nope"`, e.fx.DomainID, "list the account's links"}},
		"domain without links": {"9d0e8f6a-1b2c-4d3e-8f4a-5b6c7d8e9f00/nope", []string{"no link with slug", "this account has no link on that domain at all", "Check the domain ID"}},
		"neither form":         {"spring", []string{`The import ID "spring" is none of a link ID`, "<domain_id>/<slug>", "a short URL"}},
		"domain not a UUID":    {"my-domain/spring", []string{`"my-domain/spring" is none of`}},
		"unknown short URL":    {"https://" + e.fx.DomainHost + "/nope", []string{"no link of this account has the short URL", "/nope"}},
	} {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps: []resource.TestStep{{
					Config:        config,
					ResourceName:  "shortlink_link.test",
					ImportState:   true,
					ImportStateId: tc.id,
					ExpectError:   expectErr(append([]string{"Could not import the link"}, tc.want...)...),
				}},
			})
		})
	}
}

// TestAccResilience_sixtyLinksThroughFaults applies 60 links while a fifth of
// all requests fail (500, 502, 503, delays, connections closed after the
// service committed the change) and 429 bursts come and go: the apply
// succeeds, the service holds exactly 60 links, the next plan is empty and
// destroy leaves nothing. It is Create's exactly-once promise under load:
// a create whose answer was lost is looked for and adopted, never sent
// blindly again.
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
	config := e.config(testConfig(t, "link_sixty_through_faults.tf.tmpl", e.fx.DomainID))
	config = replaceMaxRetries(config, 12)

	e.testLink(t, []resource.TestStep{
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
	})
	if n := e.srv.Count(http.MethodPost, "/api/links", 0); n < 4 {
		t.Errorf("only %d creates were closed after commit; the test did not exercise adoption", n)
	}
	t.Logf("requests: %d in all, %d answered 429, %d closed, %d answered 5xx",
		e.srv.TotalRequests(), e.srv.CountStatus(429), e.srv.CountStatus(0),
		e.srv.CountStatus(500)+e.srv.CountStatus(502)+e.srv.CountStatus(503))
}

// TestAccResilience_refusalsOutlastMaxRetries: a create refused for the
// rate limit more times in a row than max_retries (2 in the tests) allows
// still succeeds, as a write of a run sharing a small allowance with many
// others can be: a 429 within an operation's timeout is waited out, not
// counted as a failure. One link is created, once.
func TestAccResilience_refusalsOutlastMaxRetries(t *testing.T) {
	const refusals = 5
	e := newTestEnv(t)
	for range refusals {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: 1, Method: http.MethodPost})
	}
	e.testLink(t, []resource.TestStep{{
		Config: e.config(linkBody(e.fx.DomainID, "https://example.com/refused")),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("shortlink_link.test", tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/refused")),
		},
		Check: func(*terraform.State) error {
			if n := e.srv.CountStatus(http.StatusTooManyRequests); n != refusals {
				return fmt.Errorf("the service answered %d requests 429, want %d", n, refusals)
			}
			if n := e.srv.LinkCount(e.fx.AccountID); n != 1 {
				return fmt.Errorf("the service holds %d links, want 1", n)
			}
			return nil
		},
	}})
}

// TestAccResilience_secondsRoundedDown applies twelve links on a service
// that truncates the seconds of its X-RateLimit-Reset and Retry-After (4
// writes per 2 s): the spec says "seconds", not which way. The provider
// learns it from the first wait of 0 and waits a second more from then
// on: the apply succeeds, and no more than a few requests are refused
// (read as rounded up, every retry went at once and was refused).
func TestAccResilience_secondsRoundedDown(t *testing.T) {
	const links = 12
	e := newTestEnv(t, func(s *emulator.Settings) {
		s.Filter.Delay = 0
		s.Limits = emulator.Limits{Write: 4, Read: 1000, Window: emulator.Duration(2 * time.Second), Rounding: emulator.RoundDown}
	})
	e.testLink(t, []resource.TestStep{{
		Config: e.config(testConfig(t, "link_count_of_links.tf.tmpl", links, e.fx.DomainID)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue("shortlink_link.paced[11]", tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/paced/11")),
		},
		Check: func(*terraform.State) error {
			if n := len(e.srv.Links(e.fx.AccountID)); n != links {
				return fmt.Errorf("the service holds %d links, want %d", n, links)
			}
			if n := e.srv.CountStatus(http.StatusTooManyRequests); n > 3 {
				return fmt.Errorf("the service answered %d requests 429, want at most 3", n)
			}
			return nil
		},
	}})
}

// checkLinkCount checks that the service holds exactly want links, both
// twins of testdata/link_sixty_through_faults.tf.tmpl among them.
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

// An operation without a timeouts block gets the default of its kind
// (internal/defaults, which the pacing matrix holds long enough); one the
// block sets gets that, and the others keep their defaults.
func TestLinkTimeoutDefaults(t *testing.T) {
	ctx := context.Background()
	set := func(create string) linkResourceModel {
		m := linkResourceModel{Timeouts: nullTimeouts(ctx)}
		if create != "" {
			attrTypes := m.Timeouts.AttributeTypes(ctx)
			values := map[string]attr.Value{}
			for name := range attrTypes {
				values[name] = types.StringNull()
			}
			values["create"] = types.StringValue(create)
			m.Timeouts = timeouts.Value{Object: types.ObjectValueMust(attrTypes, values)}
		}
		return m
	}
	for _, c := range []struct {
		model linkResourceModel
		kind  operationKind
		want  time.Duration
	}{
		{set(""), creating, defaults.CreateTimeout},
		{set(""), updating, defaults.UpdateTimeout},
		{set(""), deleting, defaults.DeleteTimeout},
		{set("15m"), creating, 15 * time.Minute},
		{set("15m"), updating, defaults.UpdateTimeout},
	} {
		got, diags := c.model.timeout(ctx, c.kind)
		if diags.HasError() || got != c.want {
			t.Errorf("operation %d with timeouts %s: %s (%v), want %s", c.kind, c.model.Timeouts, got, diags, c.want)
		}
	}
}

// A domain ID written in capitals names the same domain: the create sends
// the service's spelling, which the account's links show, or on an account
// without links the ID in lower case, as RFC 9562 writes UUIDs (the
// emulator reads only its own spelling); the state keeps the
// configuration's, so the next plan is empty.
func TestAccLink_domainIDInCapitals(t *testing.T) {
	t.Run("links on the domain", func(t *testing.T) { testDomainIDInCapitals(t, 1) })
	t.Run("an account without links", func(t *testing.T) { testDomainIDInCapitals(t, 0) })
}

func testDomainIDInCapitals(t *testing.T, seeded int) {
	e := newTestEnv(t)
	if seeded > 0 {
		e.seedLinks(t, e.fx.DomainID, "seeded", seeded)
	}
	upper := strings.ToUpper(e.fx.DomainID)
	config := e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/capitals"
}
`, upper))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("domain_id"), knownvalue.StringExact(upper)),
				},
				Check: func(*terraform.State) error {
					for _, l := range e.srv.Links(e.fx.AccountID) {
						if l.Destination == "https://example.com/capitals" && l.DomainID != e.fx.DomainID {
							return fmt.Errorf("the service holds the link on domain %q, want %q", l.DomainID, e.fx.DomainID)
						}
					}
					return nil
				},
			},
			{Config: config, PlanOnly: true},
		},
	})
}

// Removing slug from the configuration keeps the link and the slug it has
// (the docs say so): the slug is the service's now, as a generated one is.
func TestAccLink_slugRemovedKeepsTheLink(t *testing.T) {
	e := newTestEnv(t)
	e.testLink(t, []resource.TestStep{{
		Config: e.linkConfig(`
  destination = "https://example.com/keep"
  slug        = "keep-me"`),
	}, {
		Config: e.linkConfig(`
  destination = "https://example.com/keep"`),
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("slug"), knownvalue.StringExact("keep-me")),
		},
	}})
	e.expectRequests(t, "POST", "/api/links", 1, "removing the slug must not recreate the link")
}

// A create that outlasts timeouts.create fails at its timeout, saying that
// the service may still create the link, and the service does (it carries
// out a write it received); the next apply, with a longer timeout, takes
// that link over by its slug instead of making a second. Changing timeouts
// afterwards sends nothing.
func TestAccLink_createTimeoutEnds(t *testing.T) {
	// The timeout leaves time to send the create on a loaded machine; the
	// filter outlasts it.
	e := newTestEnv(t, func(s *emulator.Settings) { s.Filter.Delay = emulator.Duration(6 * time.Second) })
	link := func(create string) string {
		return e.linkConfig(fmt.Sprintf(`
  destination = "https://example.com/slow"
  slug        = "slow"
  timeouts    = { create = %q }`, create))
	}
	var leftover string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config:      link("3s"),
			ExpectError: expectErr("Could not create the link", "ran out of time while the service was still creating the link", "If it did"),
		}, {
			PreConfig: func() {
				// The service finishes the create it received.
				deadline := time.Now().Add(20 * time.Second)
				for e.onlyLinkOrNone() == nil && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				if l := e.onlyLinkOrNone(); l != nil {
					leftover = l.(emulator.Link).ID
				}
			},
			Config: link("30s"),
			Check: func(s *terraform.State) error {
				if got := s.RootModule().Resources[linkAddr].Primary.ID; leftover == "" || got != leftover {
					return fmt.Errorf("the state holds link %s, want the one the timed-out create made (%q)", got, leftover)
				}
				return nil
			},
		}, {
			Config: link("45s"),
		}},
	})
	e.expectRequests(t, "POST", "/api/links", 2, "the timed-out create, then the one answered 409 whose link is taken over")
	e.expectRequests(t, "PATCH", "/api/links/{id}", 0, "a new timeout changes only the state")
}

// A change the service accepts with 204 and no link is read back from a
// fresh listing; when that listing fails, the error says the change was
// made, and the next plan, which reads the link, has nothing left to do.
func TestAccLink_changeAcceptedButNotReadBack(t *testing.T) {
	var failLists atomic.Bool
	svc := testsupport.Start(t, testsupport.Options{
		Settings: func(s *emulator.Settings) { s.Variants.ChangeStatus = http.StatusNoContent },
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet && r.URL.Path == "/api/links" && failLists.Load() {
					http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
					return
				}
				next.ServeHTTP(w, r)
				if r.Method == http.MethodPatch {
					failLists.Store(true) // from the change on, until the next step
				}
			})
		},
	})
	e := &testEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
	link := func(dest string) string { return e.linkConfig(fmt.Sprintf("  destination = %q", dest)) }
	e.testLink(t, []resource.TestStep{
		{Config: link("https://example.com/before")},
		{
			Config:      link("https://example.com/after"),
			ExpectError: expectErr("Could not change the link's destination", "the service accepted the change but answered without the link, and reading the link back failed", "503"),
		},
		{
			PreConfig: func() {
				failLists.Store(false)
				if got := e.onlyLink(t).Destination; got != "https://example.com/after" {
					t.Fatalf("the service holds destination %q, want the change made", got)
				}
			},
			Config:           link("https://example.com/after"),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
	})
}

// rewriteWrites is the emulator behind a service that changes what writes
// of method ask before carrying them out: change edits the JSON body.
func (e *testEnv) rewriteWrites(t *testing.T, method string, change func(body map[string]any)) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == method {
			var body map[string]any
			raw, err := io.ReadAll(r.Body)
			if err == nil && json.Unmarshal(raw, &body) == nil {
				change(body)
				raw, _ = json.Marshal(body)
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		}
		e.srv.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	e.url = ts.URL
}

// A service that keeps a write otherwise than asked (here a slug in lower
// case, a destination with a path of its own) gets an error that says what
// it kept, on the create and on the change, rather than Terraform's
// "Provider produced inconsistent result"; the state records the link as
// the service keeps it, so it is destroyed with the rest.
func TestAccLink_serviceKeptOtherwiseThanPlanned(t *testing.T) {
	t.Run("create", func(t *testing.T) {
		e := newTestEnv(t)
		e.rewriteWrites(t, http.MethodPost, func(body map[string]any) {
			if slug, ok := body["slug"].(string); ok {
				body["slug"] = strings.ToLower(slug)
			}
		})
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Providers,
			CheckDestroy:             e.checkNoLinks,
			Steps: []resource.TestStep{{
				Config:      e.linkConfig("destination = \"https://example.com/a\"\nslug = \"Spring-Sale\""),
				ExpectError: expectErr("Service kept link", "otherwise than planned", `slug: planned "Spring-Sale", the service kept "spring-sale"`, "terraform untaint"),
			}},
		})
	})
	t.Run("change", func(t *testing.T) {
		e := newTestEnv(t)
		e.rewriteWrites(t, http.MethodPatch, func(body map[string]any) {
			if dest, ok := body["destination"].(string); ok {
				body["destination"] = dest + "/kept"
			}
		})
		resource.Test(t, resource.TestCase{
			ProtoV6ProviderFactories: protoV6Providers,
			CheckDestroy:             e.checkNoLinks,
			Steps: []resource.TestStep{
				{Config: e.linkConfig(`destination = "https://example.com/a"`)},
				{
					Config:      e.linkConfig(`destination = "https://example.com/b"`),
					ExpectError: expectErr("Service kept link", `destination: planned "https://example.com/b", the service kept "https://example.com/b/kept"`, "sends the same change"),
				},
			},
		})
	})
	// From its first change on, the service keeps one value its own way
	// (a slug in upper case, another expiry or domain): one written in
	// the configuration is then replaced by the next plan, one left to
	// the service is taken as it is.
	const replaces = "the next plan replaces the link"
	// Upper case, and a mark: a slug the service picked may hold no
	// lower-case letter (1 in 38), and upper case alone would then keep it
	// as planned.
	upperSlug := func(slug string) string { return strings.ToUpper(slug) + "-K" }
	for name, tc := range map[string]struct {
		attrs, field, attr, next string
		keep                     func(string) string
		after                    []resource.TestStep
	}{
		"change that kept a written slug otherwise": {attrs: `slug = "spring"`, field: "slug", attr: "slug", keep: upperSlug, next: "A change cannot set slug again: " + replaces, after: []resource.TestStep{{
			PlanOnly: true, ExpectNonEmptyPlan: true, // the next plan: the replacement
		}}},
		"change that kept the service's slug otherwise": {field: "slug", attr: "slug", keep: upperSlug, next: "the next plan takes them as they are", after: []resource.TestStep{{
			PlanOnly: true, // the next plan: nothing to do
		}}},
		"change that kept a written expiry otherwise": {attrs: `expires_at = "2031-01-01T00:00:00Z"`, field: "expiresAt", attr: "expires_at", keep: func(string) string { return "2031-06-30T00:00:00Z" }, next: "A change cannot set expires_at again: " + replaces, after: []resource.TestStep{{
			PlanOnly: true, ExpectNonEmptyPlan: true,
		}}},
		"change that kept a written domain otherwise": {field: "domainId", attr: "domain_id", keep: func(string) string { return "6f0c3e1a-2b4d-4c8e-9a7f-0d1e2f3a4b5c" }, next: "A change cannot set domain_id again: " + replaces, after: []resource.TestStep{{
			PlanOnly: true, ExpectNonEmptyPlan: true,
		}}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			var raised atomic.Bool
			values := regexp.MustCompile(`"` + tc.field + `":"[^"]*"`)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch {
					raised.Store(true)
				}
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				if raised.Load() {
					body = values.ReplaceAllFunc(body, func(m []byte) []byte {
						value := string(m[len(tc.field)+4 : len(m)-1])
						return fmt.Appendf(nil, `"%s":%q`, tc.field, tc.keep(value))
					})
				}
				maps.Copy(w.Header(), rec.Header())
				w.Header().Del("Content-Length")
				w.WriteHeader(rec.Code)
				_, _ = w.Write(body)
			}))
			t.Cleanup(ts.Close)
			e.url = ts.URL
			changed := e.linkConfig("destination = \"https://example.com/b\"\n" + tc.attrs)
			steps := []resource.TestStep{
				{Config: e.linkConfig("destination = \"https://example.com/a\"\n" + tc.attrs)},
				{Config: changed, ExpectError: expectErr("Service kept link", tc.attr+`: planned "`, `", the service kept "`, tc.next)},
			}
			for _, s := range tc.after {
				s.Config = changed
				steps = append(steps, s)
			}
			resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: protoV6Providers, CheckDestroy: e.checkNoLinks, Steps: steps})
		})
	}
}

// lagPartialCreates puts the emulator behind a service that answers a
// create with only its id and short URL (partialAnswers) and whose list,
// right after a create, does not show the new link yet.
func (e *testEnv) lagPartialCreates(t *testing.T) {
	t.Helper()
	var lagging atomic.Bool
	partial := partialAnswers(e.srv)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/links":
			lagging.Store(true)
			partial.ServeHTTP(w, r)
		case r.Method == http.MethodGet && r.URL.Path == "/api/links" && lagging.CompareAndSwap(true, false):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`[]`))
		default:
			e.srv.ServeHTTP(w, r)
		}
	})
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	e.url = ts.URL
}

// A create whose answer and list say nothing of the expiry keeps the one
// it sent, with or without the UTM step after it, rather than record none
// and fail the create that succeeded.
func TestAccLink_createAnsweredWithoutItsExpiryKeepsIt(t *testing.T) {
	for name, utm := range map[string]string{"without utm": "", "with utm": `utm = { source = "news" }`} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			e.lagPartialCreates(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				CheckDestroy:             e.checkNoLinks,
				Steps: []resource.TestStep{{
					Config: e.linkConfig("destination = \"https://example.com/a\"\nslug = \"lagging\"\nexpires_at = \"2030-01-05T23:59:59Z\"\n" + utm),
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectKnownValue(linkAddr, tfjsonpath.New("expires_at"), knownvalue.StringExact("2030-01-05T23:59:59Z")),
					},
				}},
			})
			e.expectRequests(t, http.MethodPost, "/api/links", 1, "one create")
		})
	}
}

// A link edited outside Terraform between the plan and the apply (here the
// dashboard adds utm_campaign just before the change arrives) ends as the
// plan showed: a resource that declares UTM parameters sends them with the
// change, changed or not; one that declares none clears those the answer
// shows.
func TestAccLink_changeMakesTheLinkWhatThePlanShowed(t *testing.T) {
	for name, tc := range map[string]struct {
		config, utmStyle string // utmStyle: how answers show UTM parameters
		want             *emulator.UTM
	}{
		"parameters declared":                     {config: `utm = { source = "news" }`, utmStyle: "object", want: &emulator.UTM{Source: "news"}},
		"none declared":                           {utmStyle: "object"},
		"none declared, merged into destinations": {utmStyle: "merged"},
		"parameters declared, merged":             {config: `utm = { source = "news" }`, utmStyle: "merged", want: &emulator.UTM{Source: "news"}},
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.UTMStyle = tc.utmStyle })
			// armed: the change's step has begun, so the edit lands between
			// its plan and its PATCH, not before the create's utm PATCH.
			var armed, edited atomic.Bool
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch && armed.Load() && !edited.Swap(true) {
					l := e.onlyLink(t)
					body := fmt.Sprintf(`{"destination":%q,"utm":{"source":"news","campaign":"teamB"}}`, l.Destination)
					edit := httptest.NewRequest(http.MethodPatch, "/api/links/"+l.ID, strings.NewReader(body))
					edit.Header.Set("Authorization", "Bearer "+e.fx.APIKey)
					edit.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					if e.srv.ServeHTTP(rec, edit); rec.Code != http.StatusOK {
						t.Errorf("the dashboard's edit: %d %s", rec.Code, rec.Body)
					}
				}
				e.srv.ServeHTTP(w, r)
			}))
			t.Cleanup(ts.Close)
			e.url = ts.URL
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				CheckDestroy:             e.checkNoLinks,
				Steps: []resource.TestStep{
					{Config: e.linkConfig("destination = \"https://example.com/a\"\n" + tc.config)},
					{
						PreConfig: func() { armed.Store(true) },
						Config:    e.linkConfig("destination = \"https://example.com/b\"\n" + tc.config),
						ConfigStateChecks: []statecheck.StateCheck{
							statecheck.ExpectKnownValue("shortlink_link.test", tfjsonpath.New("destination"), knownvalue.StringExact("https://example.com/b")),
						},
						Check: func(*terraform.State) error {
							if !edited.Load() {
								return errors.New("no change reached the service")
							}
							if got := e.onlyLink(t).UTM; !reflect.DeepEqual(got, tc.want) {
								return fmt.Errorf("the service keeps UTM %+v, want %+v", got, tc.want)
							}
							return nil
						},
					},
					{Config: e.linkConfig("destination = \"https://example.com/b\"\n" + tc.config), PlanOnly: true},
				},
			})
		})
	}
}

// A service that leaves utm out of its answers (the contract allows it)
// keeps the UTM parameters set in its dashboard when a resource that
// declares none changes its destination: no plan showed them, and the
// change does not clear them unseen.
func TestAccLink_changeKeepsParametersTheServiceDoesNotShow(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.UTMStyle = "absent" })
	dashboard := func() {
		l := e.onlyLink(t)
		edit := httptest.NewRequest(http.MethodPatch, "/api/links/"+l.ID, strings.NewReader(fmt.Sprintf(`{"destination":%q,"utm":{"source":"dashboard"}}`, l.Destination)))
		edit.Header.Set("Authorization", "Bearer "+e.fx.APIKey)
		edit.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		if e.srv.ServeHTTP(rec, edit); rec.Code != http.StatusOK {
			t.Fatalf("the dashboard's edit: %d %s", rec.Code, rec.Body)
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: e.linkConfig(`destination = "https://example.com/a"`)},
			{
				PreConfig: dashboard,
				Config:    e.linkConfig(`destination = "https://example.com/b"`),
				Check: func(*terraform.State) error {
					if l := e.onlyLink(t); l.Destination != "https://example.com/b" || !reflect.DeepEqual(l.UTM, &emulator.UTM{Source: "dashboard"}) {
						return fmt.Errorf("the service keeps %s with UTM %+v, want the new destination and the dashboard's UTM", l.Destination, l.UTM)
					}
					return nil
				},
			},
		},
	})
}
