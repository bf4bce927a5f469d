package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
)

// exportColumns is the emulator's header row, as the columns attribute.
func exportColumns() knownvalue.Check {
	checks := make([]knownvalue.Check, len(emulator.ExportColumns))
	for i, c := range emulator.ExportColumns {
		checks[i] = knownvalue.StringExact(c)
	}
	return knownvalue.ListExact(checks)
}

func TestAccAnalyticsExport_allAndOneLink(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "export", 2)
	// A referrer with a comma and quotes: the CSV quotes it, the rows
	// attribute holds it verbatim.
	const tricky = `https://mail.example.net/inbox?a=1,2&q="spring"`
	e.addClicks(t, links[0].ID, 3, tricky)
	e.addClicks(t, links[1].ID, 2, "https://news.example.org/")
	expectState(t, e.config(allAndOneExport(links[0].ID)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("row_count"), knownvalue.Int64Exact(5)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("rows"), knownvalue.ListSizeExact(5)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("columns"), exportColumns()),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("rows").AtSliceIndex(4), knownvalue.MapPartial(map[string]knownvalue.Check{
			"link_id":  knownvalue.StringExact(links[1].ID),
			"referrer": knownvalue.StringExact("https://news.example.org/"),
		})),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("row_count"), knownvalue.Int64Exact(3)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("rows").AtSliceIndex(0), knownvalue.MapExact(map[string]knownvalue.Check{
			"clicked_at":  knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)),
			"link_id":     knownvalue.StringExact(links[0].ID),
			"slug":        knownvalue.StringExact("export-0"),
			"short_url":   knownvalue.StringExact("https://go.example.test/export-0"),
			"destination": knownvalue.StringExact("https://example.com/export/0"),
			"referrer":    knownvalue.StringExact(tricky),
			"user_agent":  knownvalue.StringExact(""),
		})),
		// The body as sent: CRLF line ends, the tricky field quoted.
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("csv"), knownvalue.StringRegexp(regexp.MustCompile(
			`^clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n`+
				`(?:[^\r\n]+,`+regexp.QuoteMeta(`"https://mail.example.net/inbox?a=1,2&q=""spring"""`)+`,\r\n){3}$`))),
	)
}

// A link ID written in capitals reads the clicks of the same link, as the
// shortlink_link data source finds it: the export is asked for with the
// service's spelling (the emulator reads only its own).
func TestAccAnalyticsExport_linkIDInCapitals(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "export", 2)
	e.addClicks(t, links[0].ID, 3, "https://news.example.org/")
	e.addClicks(t, links[1].ID, 1, "https://news.example.org/")
	expectState(t, e.config(fmt.Sprintf(`
data "shortlink_analytics_export" "one" {
  link_id = %q
}
`, strings.ToUpper(links[0].ID))),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("row_count"), knownvalue.Int64Exact(3)),
	)
}

func TestAccAnalyticsExport_empty(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "quiet", 1)
	expectState(t, e.config(allAndOneExport(links[0].ID)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("row_count"), knownvalue.Int64Exact(0)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("rows"), knownvalue.ListSizeExact(0)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("columns"), exportColumns()),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("row_count"), knownvalue.Int64Exact(0)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.one", tfjsonpath.New("csv"),
			knownvalue.StringExact(strings.Join(emulator.ExportColumns, ",")+"\r\n")),
	)
}

// An export of 10,000 clicks, many times the reader's read-ahead: the
// whole of it lands in the state.
func TestAccAnalyticsExport_large(t *testing.T) {
	const n = 10_000
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "popular", 1)
	e.addClicks(t, links[0].ID, n, "https://social.example.com/post/1")
	config := e.config(fmt.Sprintf(`
data "shortlink_analytics_export" "popular" {
  link_id = %q
}
`, links[0].ID))
	expectState(t, config,
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.popular", tfjsonpath.New("row_count"), knownvalue.Int64Exact(n)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.popular", tfjsonpath.New("rows"), knownvalue.ListSizeExact(n)),
		statecheck.ExpectKnownValue("data.shortlink_analytics_export.popular", tfjsonpath.New("rows").AtSliceIndex(n-1), knownvalue.MapPartial(map[string]knownvalue.Check{
			"link_id":  knownvalue.StringExact(links[0].ID),
			"referrer": knownvalue.StringExact("https://social.example.com/post/1"),
		})),
	)
}

// A range with more clicks than max_clicks fails, saying how many it holds
// and how to narrow it, unless neither csv nor rows is kept.
func TestAccAnalyticsExport_maxClicks(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "busy", 1)
	e.addClicks(t, links[0].ID, 5, "https://social.example.com/")
	const ds = "data.shortlink_analytics_export."
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				Config:      e.config(`data "shortlink_analytics_export" "capped" { max_clicks = 4 }`),
				ExpectError: expectErr("Too many clicks", "5 clicks are in the range, more than max_clicks (4)", "since and until", "shortlink_clicks"),
			},
			{
				Config:      e.config(`data "shortlink_analytics_export" "capped" { max_clicks = 4.5 }`),
				PlanOnly:    true,
				ExpectError: expectErr("Invalid max_clicks", "must be a whole number, at least 1; got 4.5"),
			},
			{
				Config: e.config(`
data "shortlink_analytics_export" "capped" { max_clicks = 5 }

data "shortlink_analytics_export" "count_only" {
  max_clicks   = 1
  include_csv  = false
  include_rows = false
}`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(ds+"capped", tfjsonpath.New("rows"), knownvalue.ListSizeExact(5)),
					statecheck.ExpectKnownValue(ds+"count_only", tfjsonpath.New("row_count"), knownvalue.Int64Exact(5)),
				},
			},
		},
	})
}

// Without max_clicks, the bound is defaultMaxClicks: a range of one click
// more fails, saying so; include_csv and include_rows false still count it.
func TestAccAnalyticsExport_defaultMaxClicks(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "busier", 1)
	e.addClicks(t, links[0].ID, defaultMaxClicks+1, "https://social.example.com/")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{{
			Config:      e.config(`data "shortlink_analytics_export" "all" {}`),
			ExpectError: expectErr("Too many clicks", "100001 clicks are in the range, more than max_clicks (100000)"),
		}, {
			Config: e.config(`data "shortlink_analytics_export" "all" {
  include_csv  = false
  include_rows = false
}`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("data.shortlink_analytics_export.all", tfjsonpath.New("row_count"), knownvalue.Int64Exact(defaultMaxClicks+1)),
			},
		}},
	})
}

// A data source cannot be read while the provider's settings are unknown:
// a clear error, not a crash.
func TestAccAnalyticsExport_unconfiguredProvider(t *testing.T) {
	e := newTestEnv(t)
	block, expr := knownAtApply(t, "url", e.url)
	expectFailure(t, testConfig(t, "analytics_export_unconfigured_provider.tf.tmpl", block, expr, e.fx.APIKey), "Provider not configured", "base_url or api_key is not known yet", "-target")
}

// since and until keep the clicks of a range, the CSV holds their records
// as sent, and include_csv and include_rows leave out what is not wanted.
func TestAccAnalyticsExport_rangeAndIncludes(t *testing.T) {
	e := newTestEnv(t)
	links := e.seedLinks(t, e.fx.DomainID, "ranged", 1)
	id := links[0].ID
	for _, c := range []struct{ at, referrer string }{
		{"2027-02-28T23:59:59.999Z", "before"},
		{"2027-03-01T00:00:00.000Z", "at since"},
		{"2027-03-02T12:00:00.000Z", "inside, \"quoted\""},
		{"2027-03-03T00:00:00.000Z", "at until"},
	} {
		e.addClickAt(t, id, testclock.Parse(t, c.at), c.referrer)
	}
	const ds = "data.shortlink_analytics_export."
	expectState(t, e.config(testConfig(t, "analytics_export_range_and_includes.tf.tmpl", id)),
		statecheck.ExpectKnownValue(ds+"march", tfjsonpath.New("row_count"), knownvalue.Int64Exact(2)),
		statecheck.ExpectKnownValue(ds+"march", tfjsonpath.New("rows"), knownvalue.ListExact([]knownvalue.Check{
			knownvalue.MapPartial(map[string]knownvalue.Check{"referrer": knownvalue.StringExact("at since")}),
			knownvalue.MapPartial(map[string]knownvalue.Check{"referrer": knownvalue.StringExact(`inside, "quoted"`)}),
		})),
		statecheck.ExpectKnownValue(ds+"march", tfjsonpath.New("csv"), knownvalue.StringRegexp(regexp.MustCompile(
			`^`+regexp.QuoteMeta(strings.Join(emulator.ExportColumns, ",")+"\r\n")+
				`2027-03-01T00:00:00\.000Z,[^\r\n]+,at since,\r\n`+
				`2027-03-02T12:00:00\.000Z,[^\r\n]+,`+regexp.QuoteMeta(`"inside, ""quoted"""`)+`,\r\n$`))),
		statecheck.ExpectKnownValue(ds+"rows_only", tfjsonpath.New("row_count"), knownvalue.Int64Exact(3)),
		statecheck.ExpectKnownValue(ds+"rows_only", tfjsonpath.New("rows"), knownvalue.ListSizeExact(3)),
		statecheck.ExpectKnownValue(ds+"rows_only", tfjsonpath.New("csv"), knownvalue.Null()),
		statecheck.ExpectKnownValue(ds+"csv_only", tfjsonpath.New("row_count"), knownvalue.Int64Exact(1)),
		statecheck.ExpectKnownValue(ds+"csv_only", tfjsonpath.New("rows"), knownvalue.Null()),
		statecheck.ExpectKnownValue(ds+"csv_only", tfjsonpath.New("csv"), knownvalue.StringRegexp(regexp.MustCompile(`\r\n2027-02-28T23:59:59\.999Z,[^\r\n]+,before,\r\n$`))),
		statecheck.ExpectKnownValue(ds+"nothing", tfjsonpath.New("row_count"), knownvalue.Int64Exact(0)),
		statecheck.ExpectKnownValue(ds+"nothing", tfjsonpath.New("rows"), knownvalue.ListSizeExact(0)),
		statecheck.ExpectKnownValue(ds+"nothing", tfjsonpath.New("columns"), exportColumns()),
		statecheck.ExpectKnownValue(ds+"nothing", tfjsonpath.New("csv"), knownvalue.StringExact(strings.Join(emulator.ExportColumns, ",")+"\r\n")),
	)
}

// allAndOneExport declares the export of every link ("all") and of the
// link linkID ("one").
func allAndOneExport(linkID string) string {
	return fmt.Sprintf(`
data "shortlink_analytics_export" "all" {}

data "shortlink_analytics_export" "one" {
  link_id = %q
}
`, linkID)
}
