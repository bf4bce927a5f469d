package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
)

// Referrers the CSV export has to quote.
const (
	refComma   = "https://mail.example.net/inbox?a=1,2"
	refQuotes  = `https://news.example.org/?q="spring"`
	refNewline = "https://forum.example.com/t/1\nsecond line"
)

// topReferrersExact checks top_referrers, in order.
func topReferrersExact(want ...analytics.ReferrerClicks) knownvalue.Check {
	checks := make([]knownvalue.Check, len(want))
	for i, r := range want {
		checks[i] = knownvalue.ObjectExact(map[string]knownvalue.Check{
			"referrer": knownvalue.StringExact(r.Referrer),
			"clicks":   knownvalue.Int64Exact(r.Clicks),
		})
	}
	return knownvalue.ListExact(checks)
}

func referrerClicks(referrer string, clicks int64) analytics.ReferrerClicks {
	return analytics.ReferrerClicks{Referrer: referrer, Clicks: clicks}
}

// countsExact checks a map of counts.
func countsExact(m map[string]int64) knownvalue.Check {
	checks := make(map[string]knownvalue.Check, len(m))
	for k, n := range m {
		checks[k] = knownvalue.Int64Exact(n)
	}
	return knownvalue.MapExact(checks)
}

func TestAccClicks_countsAndRanges(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "counted", 3)
	a, b, quiet := links[0].ID, links[1].ID, links[2].ID
	for _, c := range []struct{ link, at, referrer string }{
		{a, "2027-02-28T23:59:59.999Z", refComma},
		{a, "2027-03-01T00:00:00.000Z", refComma}, // == since: counted
		{a, "2027-03-01T10:00:00.000Z", refQuotes},
		{b, "2027-03-01T23:59:59.000Z", refNewline},
		{b, "2027-03-02T00:00:00.000Z", ""},
		{a, "2027-03-03T00:00:00.000Z", refComma}, // == until: not counted
		{b, "2027-03-03T12:00:00.000Z", refQuotes},
	} {
		e.addClickAt(t, c.link, testclock.Parse(t, c.at), c.referrer)
	}
	const ds = "data.shortlink_clicks."
	expectState(t, e.config(testConfig(t, "clicks_counts_and_ranges.tf.tmpl", a, b, quiet)),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("total"), knownvalue.Int64Exact(7)),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("by_link"), countsExact(map[string]int64{a: 4, b: 3})),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("by_day"), countsExact(map[string]int64{"2027-02-28": 1, "2027-03-01": 3, "2027-03-02": 1, "2027-03-03": 2})),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("first_click_at"), knownvalue.StringExact("2027-02-28T23:59:59.999Z")),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("last_click_at"), knownvalue.StringExact("2027-03-03T12:00:00Z")),
		// Most clicks first; ties in byte order ("" < "https://f…").
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("top_referrers"), topReferrersExact(referrerClicks(refComma, 3), referrerClicks(refQuotes, 2), referrerClicks("", 1), referrerClicks(refNewline, 1))),
		statecheck.ExpectKnownValue(ds+"all", tfjsonpath.New("top_referrers_exact"), knownvalue.Bool(true)),

		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("total"), knownvalue.Int64Exact(4)),
		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("by_link"), countsExact(map[string]int64{a: 2, b: 2})),
		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("by_day"), countsExact(map[string]int64{"2027-03-01": 3, "2027-03-02": 1})),
		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("first_click_at"), knownvalue.StringExact("2027-03-01T00:00:00Z")),
		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("last_click_at"), knownvalue.StringExact("2027-03-02T00:00:00Z")),
		statecheck.ExpectKnownValue(ds+"range", tfjsonpath.New("top_referrers"), topReferrersExact(referrerClicks("", 1), referrerClicks(refNewline, 1), referrerClicks(refComma, 1), referrerClicks(refQuotes, 1))),
		statecheck.ExpectKnownValue(ds+"offsets", tfjsonpath.New("total"), knownvalue.Int64Exact(4)),
		statecheck.ExpectKnownValue(ds+"offsets", tfjsonpath.New("by_day"), countsExact(map[string]int64{"2027-03-01": 3, "2027-03-02": 1})),

		statecheck.ExpectKnownValue(ds+"widest", tfjsonpath.New("total"), knownvalue.Int64Exact(7)),

		statecheck.ExpectKnownValue(ds+"b_since", tfjsonpath.New("total"), knownvalue.Int64Exact(3)),
		statecheck.ExpectKnownValue(ds+"b_since", tfjsonpath.New("by_link"), countsExact(map[string]int64{b: 3})),
		statecheck.ExpectKnownValue(ds+"b_capitals", tfjsonpath.New("by_link"), countsExact(map[string]int64{strings.ToUpper(b): 3})),

		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("total"), knownvalue.Int64Exact(0)),
		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("by_link"), knownvalue.MapSizeExact(0)),
		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("by_day"), knownvalue.MapSizeExact(0)),
		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("first_click_at"), knownvalue.Null()),
		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("last_click_at"), knownvalue.Null()),
		statecheck.ExpectKnownValue(ds+"empty_range", tfjsonpath.New("top_referrers"), knownvalue.ListSizeExact(0)),
		statecheck.ExpectKnownValue(ds+"quiet", tfjsonpath.New("total"), knownvalue.Int64Exact(0)),

		statecheck.ExpectKnownOutputValue("clicks_per_link", knownvalue.ObjectExact(map[string]knownvalue.Check{
			"a": knownvalue.Int64Exact(2), "b": knownvalue.Int64Exact(2), "quiet": knownvalue.Int64Exact(0),
		})),
	)
}

// The state holds counts: 20,000 clicks over three days and two referrers
// take as little room as three.
func TestAccClicks_stateDoesNotGrowWithClicks(t *testing.T) {
	const n = 20_000
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "busy", 1)
	start := testclock.Parse(t, "2027-03-01T00:00:00Z")
	perDay := map[string]int64{}
	for i := range n {
		at := start.Add(time.Duration(i) * (72 * time.Hour / n))
		perDay[at.Format(time.DateOnly)]++
		e.addClickAt(t, links[0].ID, at, fmt.Sprintf("https://ref%d.example/", i%2))
	}
	if len(perDay) != 3 {
		t.Fatalf("the clicks span %d days, want 3", len(perDay))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config: e.config(`
data "shortlink_clicks" "busy" {}
`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_clicks.busy", tfjsonpath.New("total"), knownvalue.Int64Exact(n)),
				statecheck.ExpectKnownValue("data.shortlink_clicks.busy", tfjsonpath.New("by_day"), countsExact(perDay)),
				stateSizeBelow("data.shortlink_clicks.busy", 1024),
			},
		}},
	})
}

// stateSizeBelow checks that a resource's attributes take less than limit
// bytes of JSON in the state.
func stateSizeBelow(address string, limit int) statecheck.StateCheck {
	return stateSize{address, limit}
}

type stateSize struct {
	address string
	limit   int
}

func (c stateSize) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil || req.State.Values == nil || req.State.Values.RootModule == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address != c.address {
			continue
		}
		b, err := json.Marshal(r.AttributeValues)
		if err != nil {
			resp.Error = err
		} else if len(b) >= c.limit {
			resp.Error = fmt.Errorf("%s takes %d bytes of state, want less than %d", c.address, len(b), c.limit)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the state", c.address)
}

// serviceHolds checks that the service holds links with exactly these
// slugs, in any order.
func (e *testEnv) serviceHolds(slugs ...string) statecheck.StateCheck { return serviceLinks{e, slugs} }

type serviceLinks struct {
	e     *testEnv
	slugs []string
}

func (c serviceLinks) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	var got []string
	for _, l := range c.e.srv.Links(c.e.fx.AccountID) {
		got = append(got, l.Slug)
	}
	slices.Sort(got)
	if !slices.Equal(got, c.slugs) {
		resp.Error = fmt.Errorf("the service holds the links %q, want %q", got, c.slugs)
	}
}

// serviceCounts checks that the fixture account holds n links.
func (e *testEnv) serviceCounts(n int) statecheck.StateCheck { return serviceLinkCount{e, n} }

type serviceLinkCount struct {
	e *testEnv
	n int
}

func (c serviceLinkCount) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if got := c.e.srv.LinkCount(c.e.fx.AccountID); got != c.n {
		resp.Error = fmt.Errorf("the service holds %d links, want %d", got, c.n)
	}
}

// guardedCampaign is the pattern of examples/retiring-links
// (testdata/clicks_guarded_campaign.tf.tmpl): a link is deleted by listing
// its slug in retire, and the plan fails instead while the link got clicks
// in the last 14 days. (The example declares the links with for_each,
// which the test harness's state cannot address.)
func guardedCampaign(t *testing.T, e *testEnv, retire string) string {
	return e.config(testConfig(t, "clicks_guarded_campaign.tf.tmpl", retire, e.fx.DomainID))
}

func TestAccClicks_guardsTheDeletionOfALinkInUse(t *testing.T) {
	skipBelowTerraform(t, 5, "plantimestamp() in a data source's postcondition")
	e := newTestEnv(t)
	const busy, quiet = "shortlink_link.busy[0]", "shortlink_link.quiet[0]"
	e.testLink(t, []resource.TestStep{
		{Config: guardedCampaign(t, e, "[]")},
		{
			PreConfig: func() {
				for _, l := range e.srv.Links(e.fx.AccountID) {
					if l.Slug == "busy" {
						e.addClickAt(t, l.ID, time.Now().Add(-time.Hour), "https://mail.example.net/")
					}
				}
			},
			Config:      guardedCampaign(t, e, `["busy"]`),
			ExpectError: expectErr("Still in use, not deleted: busy (clicks in the last 14 days: 1)"),
		},
		{
			// The failed plan deleted nothing.
			Config:            guardedCampaign(t, e, "[]"),
			ConfigStateChecks: []statecheck.StateCheck{e.serviceHolds("busy", "quiet")},
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
		},
		{
			Config: guardedCampaign(t, e, `["quiet"]`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(quiet, plancheck.ResourceActionDestroy),
				plancheck.ExpectResourceAction(busy, plancheck.ResourceActionNoop),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_clicks.last_14_days", tfjsonpath.New("total"), knownvalue.Int64Exact(1)),
				e.serviceHolds("busy"),
			},
		},
	})
}
