package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Each error of the service surfaces as a diagnostic that says what happened
// and what to do.

func TestAccLinkErrors_unknownKey(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.providerBlock("sl_test_not_a_key") + linkBody(e.fx.DomainID, "https://example.com/a"),
			ExpectError: expectErr("401 invalid_api_key", "Check that api_key", "plan still includes the API"),
		}},
	})
}

func TestAccLinkErrors_planWithoutAPI(t *testing.T) {
	e := newTestEnv(t)
	if err := e.srv.SetAPIEnabled(e.fx.AccountID, false); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(linkBody(e.fx.DomainID, "https://example.com/a")),
			ExpectError: expectErr("401 invalid_api_key", "plan still includes the API"),
		}},
	})
}

func TestAccLinkErrors_readOnlyKeyCannotCreate(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.providerBlock(e.fx.ReadKey) + linkBody(e.fx.DomainID, "https://example.com/a"),
			ExpectError: expectErr("403 insufficient_scope", "needs links:write", "both links:read"),
		}},
	})
}

func TestAccLinkErrors_writeOnlyKeyCannotRefresh(t *testing.T) {
	e := newTestEnv(t)
	body := linkBody(e.fx.DomainID, "https://example.com/a")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: e.config(body)},
			{
				Config:      e.providerBlock(e.fx.WriteKey) + body,
				ExpectError: expectErr("403 insufficient_scope", "GET /api/links needs links:read", "every refresh"),
			},
			{Config: e.config(body)}, // back to a full key, so destroy can refresh
		},
	})
}

func TestAccLinkErrors_blockedDestination(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{
				Config:      e.config(linkBody(e.fx.DomainID, "https://blocked.example/win")),
				ExpectError: expectErr("with shortlink_link.test,", "destination", "422 blocked_by_filter", "Choose another destination"),
			},
			{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/fine"))},
			{
				Config:      e.config(linkBody(e.fx.DomainID, "https://www.blocked.example/")),
				ExpectError: expectErr("fraud filter rejected the destination"),
			},
			{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/fine"))},
		},
	})
}

func TestAccLinkErrors_quotaExhausted(t *testing.T) {
	e := newTestEnv(t)
	if err := e.srv.SetMonthlyQuota(e.fx.AccountID, 1); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  count       = 2
  domain_id   = %q
  destination = "https://example.com/${count.index}"
}
`, e.fx.DomainID)),
			ExpectError: expectErr("402 link_quota", "next month"),
		}},
	})
}

func TestAccLinkErrors_slugTaken(t *testing.T) {
	e := newTestEnv(t)
	if _, err := e.srv.SeedLinks(e.fx.DomainID, "taken", 1); err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/a"
  slug        = "taken-0"
}
`, e.fx.DomainID)),
			ExpectError: expectErr("with shortlink_link.test,", "slug", "409 slug_taken", "destination", "differs", "import it", e.fx.DomainID+"/taken-0"),
		}},
	})
}

// TestAccLinkErrors_slugHeldByAnotherResource: two resources of one
// configuration declare the same link; the second is refused, not merged.
func TestAccLinkErrors_slugHeldByAnotherResource(t *testing.T) {
	e := newTestEnv(t)
	twin := func(name string) string {
		return fmt.Sprintf(`
resource "shortlink_link" %q {
  domain_id   = %q
  destination = "https://example.com/twin"
  slug        = "twin"
}
`, name, e.fx.DomainID)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(twin("a") + twin("b")),
			ExpectError: expectErr("409 slug_taken", "another resource of this configuration already manages it", "import it", e.fx.DomainID+"/twin"),
		}},
	})
}

func TestAccLinkErrors_domainOfAnotherAccount(t *testing.T) {
	e := newTestEnv(t)
	other, err := e.srv.SeedFixture("other", "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(linkBody(other.DomainID, "https://example.com/a")),
			ExpectError: expectErr("with shortlink_link.test,", "domain_id", "400 invalid_request", "no such domain on this account"),
		}},
	})
}

func TestAccLinkErrors_rateLimitedAfterRetries(t *testing.T) {
	e := newTestEnv(t)
	e.srv.Burst429(20, 0)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(linkBody(e.fx.DomainID, "https://example.com/a")),
			ExpectError: expectErr("429 rate_limited after every retry", "-parallelism"),
		}},
	})
}

func TestAccLinkErrors_deletedBetweenRefreshAndUpdate(t *testing.T) {
	e := newTestEnv(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		CheckDestroy:             e.checkNoLinks,
		Steps: []resource.TestStep{
			{Config: e.config(linkBody(e.fx.DomainID, "https://example.com/a"))},
			{
				// The service answers the PATCH as if the link had been
				// deleted after the refresh.
				PreConfig: func() {
					e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: 404, Method: "PATCH"})
				},
				Config:      e.config(linkBody(e.fx.DomainID, "https://example.com/b")),
				ExpectError: expectErr("was deleted outside Terraform", "terraform apply"),
			},
		},
	})
}

// TestAccLinkErrors_slugTheServiceRefuses: the service's slug rule is not
// known to the provider, so a slug that is one path segment passes the
// plan; the service's refusal comes at apply, on the slug attribute, and
// nothing is created.
func TestAccLinkErrors_slugTheServiceRefuses(t *testing.T) {
	for _, slug := range []string{"spring.sale", "café"} {
		t.Run(slug, func(t *testing.T) {
			e := newTestEnv(t)
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps: []resource.TestStep{{
					Config: e.config(fmt.Sprintf(`
resource "shortlink_link" "test" {
  domain_id   = %q
  destination = "https://example.com/a"
  slug        = %q
}
`, e.fx.DomainID, slug)),
					ExpectError: expectErr("with shortlink_link.test,", "slug", "400 invalid_request", "slug: must be 1 to 64 characters"),
				}},
				CheckDestroy: e.checkNoLinks,
			})
		})
	}
}

// TestAccLinkErrors_createBeforeDestroyKeepsTheSlug: a replacement with
// create_before_destroy and a fixed slug cannot succeed (the old link holds
// the slug until it is destroyed); the 409 says so instead of suggesting to
// import the link being replaced.
func TestAccLinkErrors_createBeforeDestroyKeepsTheSlug(t *testing.T) {
	e := newTestEnv(t)
	link := func(expires string) string {
		return e.config(testConfig(t, "link_create_before_destroy_fixed_slug.tf.tmpl", e.fx.DomainID, expires))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{Config: link("2030-01-01T00:00:00Z")},
			{
				Config:      link("2031-01-01T00:00:00Z"),
				ExpectError: expectErr("409 slug_taken", "expiry differs", "replaced with create_before_destroy", "cannot be replaced create-before-destroy"),
			},
		},
	})
}

// A list answer the provider cannot read says what came back and that the
// configuration is not the cause; base_url is not the advice, since the
// service answered.
func TestAccLinkErrors_unreadableListing(t *testing.T) {
	huge := `[{"id":"x","slug":"x","destination":"https://example.com/` + strings.Repeat("a", 70<<10) + `"}]`
	for name, c := range map[string]struct {
		rewrite func([]byte) []byte
		want    string
	}{
		"cut short":             {func(b []byte) []byte { return b[:len(b)/2] }, "it was cut short"},
		"a link over the bound": {func([]byte) []byte { return []byte(huge) }, "item 0 of the list is larger than 64 KiB"},
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t)
			if _, err := e.srv.SeedLinks(e.fx.DomainID, "seeded", 50); err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.Path != "/api/links" {
					e.srv.ServeHTTP(w, r)
					return
				}
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, r)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(c.rewrite(rec.Body.Bytes()))
			}))
			t.Cleanup(ts.Close)
			e.url = ts.URL
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6Providers,
				Steps: []resource.TestStep{{
					Config: e.linkConfig(`  destination = "https://example.com/seeded/0"`) +
						fmt.Sprintf("import {\n  to = %s\n  id = %q\n}\n", linkAddr, e.fx.DomainID+"/seeded-0"),
					ExpectError: expectErr(c.want, "the configuration is not the cause", "report it"),
				}},
			})
		})
	}
}
