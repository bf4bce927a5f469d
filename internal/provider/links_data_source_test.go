package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

func TestAccLinksDataSource(t *testing.T) {
	e := newTestEnv(t)
	seeded := e.seedLinks(t, e.fx.DomainID, "seeded", 2)
	other, err := e.srv.AddDomain(e.fx.AccountID, "other.example.test")
	if err != nil {
		t.Fatal(err)
	}
	e.seedLinks(t, other, "elsewhere", 1)
	// An expired link is listed too (the list resource leaves it out by default).
	c := e.apiClient(t)
	expired, err := c.CreateLink(context.Background(), client.CreateLinkInput{DomainID: e.fx.DomainID, Slug: "spring-2020",
		Destination: "https://example.com/old", ExpiresAt: new(time.Date(2020, 3, 31, 23, 59, 59, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
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
				statecheck.ExpectKnownValue("data.shortlink_links.all", tfjsonpath.New("links"), knownvalue.ListSizeExact(4)),
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
					knownvalue.ObjectPartial(map[string]knownvalue.Check{"id": knownvalue.StringExact(expired.ID), "expires_at": knownvalue.StringExact("2020-03-31T23:59:59Z")}),
				})),
			},
		}},
	})
}

// TestAccLinksDataSource_olderFirstWhateverTheServiceOrder: the
// specification does not say in which order the service lists links; one
// that lists the newest first still gives links[0] as the oldest.
func TestAccLinksDataSource_olderFirstWhateverTheServiceOrder(t *testing.T) {
	var mu sync.Mutex
	clock := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	svc := testsupport.Start(t, testsupport.Options{
		Now:  func() time.Time { mu.Lock(); defer mu.Unlock(); return clock },
		Wrap: newestFirst,
	})
	e := &testEnv{srv: svc.Server, url: svc.URL, fx: svc.Fixture}
	var ids []knownvalue.Check
	for _, prefix := range []string{"a", "b", "c"} {
		l := e.seedLinks(t, e.fx.DomainID, prefix, 1)[0]
		ids = append(ids, knownvalue.ObjectPartial(map[string]knownvalue.Check{"id": knownvalue.StringExact(l.ID)}))
		mu.Lock()
		clock = clock.Add(time.Minute)
		mu.Unlock()
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(`data "shortlink_links" "all" {}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_links.all", tfjsonpath.New("links"), knownvalue.ListExact(ids)),
			},
		}},
	})
}

// newestFirst answers the list (a bare array) in reverse.
func newestFirst(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/links" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var links []json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &links); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		slices.Reverse(links)
		body, _ := json.Marshal(links)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// The filters shortlink_links shares with the list resource, and the bound
// on what it returns: more links matching than max_links is an error that
// says how many did, before any is held in the plan.
func TestAccLinksDataSource_filtersAndBound(t *testing.T) {
	e := newTestEnv(t)
	e.seedLinks(t, e.fx.DomainID, "spring", 2) // destinations on example.com
	e.seedLinks(t, e.fx.DomainID, "summer", 1)
	shop := `
resource "shortlink_link" "shop" {
  domain_id   = %q
  destination = "https://shop.example.com/sale"
  slug        = "spring-shop"
}
`
	slugs := func(want ...string) knownvalue.Check {
		checks := make([]knownvalue.Check, len(want))
		for i, slug := range want {
			checks[i] = knownvalue.ObjectPartial(map[string]knownvalue.Check{"slug": knownvalue.StringExact(slug)})
		}
		return knownvalue.ListExact(checks)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "shortlink_links" "none" { max_links = 0 }`),
				PlanOnly:    true,
				ExpectError: expectErr("max_links", "must be a whole number, at least 1; got 0"),
			},
			{
				Config:      e.config(`data "shortlink_links" "half" { max_links = 2.5 }`),
				PlanOnly:    true,
				ExpectError: expectErr("Invalid max_links", "must be a whole number, at least 1; got 2.5"),
			},
			{
				// "No limit" written as a huge number meets "at least 1": the bound it passes is named.
				Config:      e.config(`data "shortlink_links" "all" { max_links = 1e30 }`),
				PlanOnly:    true,
				ExpectError: expectErr("Invalid max_links", "must be a whole number from 1 to 9223372036854775807; got 1e+30"),
			},
			{
				Config: e.config(fmt.Sprintf(shop+`
data "shortlink_links" "spring" {
  slug_prefix = "spring-"
  depends_on  = [shortlink_link.shop]
}

data "shortlink_links" "shop" {
  domain_id        = %[1]q
  destination_host = "Shop.Example.com."
  depends_on       = [shortlink_link.shop]
}

data "shortlink_links" "exactly_enough" {
  max_links  = 4
  depends_on = [shortlink_link.shop]
}
`, e.fx.DomainID)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("data.shortlink_links.spring", tfjsonpath.New("links"), slugs("spring-0", "spring-1", "spring-shop")),
					statecheck.ExpectKnownValue("data.shortlink_links.shop", tfjsonpath.New("links"), slugs("spring-shop")),
					statecheck.ExpectKnownValue("data.shortlink_links.exactly_enough", tfjsonpath.New("links"), knownvalue.ListSizeExact(4)),
				},
			},
			{
				Config: e.config(fmt.Sprintf(shop+`
data "shortlink_links" "bounded" {
  max_links  = 3
  depends_on = [shortlink_link.shop]
}
`, e.fx.DomainID)),
				ExpectError: expectErr("Too many links", "4 links match, more than max_links (3)", "Narrow it with domain_id, slug_prefix or destination_host, or raise max_links"),
			},
			{
				// The link stays managed, for the destroy that ends the test.
				Config: e.config(fmt.Sprintf(shop, e.fx.DomainID)),
			},
		},
	})
}

// Without max_links, the bound is defaultMaxLinks: an account one link
// larger fails fast, saying how many matched.
func TestAccLinksDataSource_defaultBound(t *testing.T) {
	e := newTestEnv(t)
	e.seedLinks(t, e.fx.DomainID, "seeded", defaultMaxLinks+1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(`data "shortlink_links" "all" {}`),
			PlanOnly:    true,
			ExpectError: expectErr("Too many links", fmt.Sprintf("%d links match, more than max_links (%d)", defaultMaxLinks+1, defaultMaxLinks)),
		}},
	})
}

// A data source's read refused for the rate limit more times than
// max_retries (2 in the tests) still succeeds, as a write's does: a 429 is
// waited out within the read's deadline (defaults.ReadTimeout), not
// counted as a failure. Reads of runs that share a key with many others
// can be refused several times in a row.
func TestAccLinksDataSource_refusalsOutlastMaxRetries(t *testing.T) {
	const refusals = 5
	e := newTestEnv(t)
	e.seedLinks(t, e.fx.DomainID, "seeded", 2)
	for range refusals {
		e.srv.InjectFaults(emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusTooManyRequests, RetryAfter: 1, Method: http.MethodGet})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(`data "shortlink_links" "all" {}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_links.all", tfjsonpath.New("links"), knownvalue.ListSizeExact(2)),
			},
			Check: func(*terraform.State) error {
				if n := e.srv.CountStatus(http.StatusTooManyRequests); n != refusals {
					return fmt.Errorf("the service answered %d requests 429, want %d", n, refusals)
				}
				return nil
			},
		}},
	})
}

// A destination on an IP address is found by its host in any spelling:
// with or without the brackets of an IPv6 literal, zeros shortened or not.
func TestAccLinksDataSource_hostIsAnIPAddress(t *testing.T) {
	e := newTestEnv(t)
	c := e.apiClient(t)
	for _, destination := range []string{"https://[2001:db8::1]/d", "https://192.0.2.1/x", "https://example.com/y"} {
		if _, err := c.CreateLink(context.Background(), client.CreateLinkInput{DomainID: e.fx.DomainID, Destination: destination}); err != nil {
			t.Fatal(err)
		}
	}
	found := func(destination string) knownvalue.Check {
		return knownvalue.ListExact([]knownvalue.Check{knownvalue.ObjectPartial(map[string]knownvalue.Check{"destination": knownvalue.StringExact(destination)})})
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(`
data "shortlink_links" "bracketed" { destination_host = "[2001:DB8::1]" }
data "shortlink_links" "bare" { destination_host = "2001:db8:0::1" }
data "shortlink_links" "ipv4" { destination_host = "192.0.2.1" }
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_links.bracketed", tfjsonpath.New("links"), found("https://[2001:db8::1]/d")),
				statecheck.ExpectKnownValue("data.shortlink_links.bare", tfjsonpath.New("links"), found("https://[2001:db8::1]/d")),
				statecheck.ExpectKnownValue("data.shortlink_links.ipv4", tfjsonpath.New("links"), found("https://192.0.2.1/x")),
			},
		}},
	})
}
