package provider

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

// NewAnalyticsExportDataSource is shortlink_analytics_export.
func NewAnalyticsExportDataSource() datasource.DataSource {
	return &exportDataSource[analyticsExportModel, *analyticsExportModel]{
		typeSuffix: "_analytics_export",
		description: "The clicks of the account, or of one link, from the service's CSV analytics export: as sent and as rows, optionally only those of a time range. " +
			"Needs the scope `links:read`. The export is read again on every plan, and every click in the range is kept in the state; how far back the export reaches depends on the account's plan. " +
			"For counts (per link, per day, per referrer) use `shortlink_clicks`, whose state does not grow with the clicks. A link's click history survives a change of its destination.",
		attributes: analyticsExportAttributes,
		keep:       keepExport,
	}
}

type analyticsExportModel struct {
	exportFilterModel
	IncludeCSV  types.Bool   `tfsdk:"include_csv"`
	IncludeRows types.Bool   `tfsdk:"include_rows"`
	MaxClicks   types.Number `tfsdk:"max_clicks"`
	CSV         types.String `tfsdk:"csv"`
	Columns     types.List   `tfsdk:"columns"`
	Rows        types.List   `tfsdk:"rows"`
	RowCount    types.Int64  `tfsdk:"row_count"`
}

var exportRowType = types.MapType{ElemType: types.StringType}

// defaultMaxClicks bounds the clicks kept in csv and rows unless max_clicks
// says otherwise. Every click kept is held in the plan and the state:
// 100,000 took 14 s, 0.6 GB and a state of 58 MB, and at about 600,000 the
// answer outgrows what Terraform takes from a provider (256 MiB), after a
// minute (BENCHMARKS.md, "Click analytics").
const defaultMaxClicks = 100000

// analyticsExportAttributes are what shortlink_analytics_export adds to the
// filter: the export as sent and as rows.
func analyticsExportAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"include_csv": schema.BoolAttribute{
			MarkdownDescription: "Whether to keep the export as sent in `csv`. Defaults to `true`; set it to `false` when `rows` is enough, so the state does not hold the clicks twice (`csv` is then null).",
			Optional:            true,
		},
		"include_rows": schema.BoolAttribute{
			MarkdownDescription: "Whether to keep the parsed clicks in `rows`. Defaults to `true`; set it to `false` when only `csv` is wanted, for a file or another tool (`rows` is then null).",
			Optional:            true,
		},
		"csv": schema.StringAttribute{
			MarkdownDescription: "The export as the service sent it (CSV with a header row), for `local_file` or further processing: with `since` or `until`, the header row and the records of the clicks in the range, each byte for byte. Null when `include_csv` is `false`.",
			Computed:            true,
		},
		"columns": schema.ListAttribute{
			MarkdownDescription: "The column names of the header row, in order. Empty when the service sent an empty body.",
			Computed:            true,
			ElementType:         types.StringType,
		},
		"rows": schema.ListAttribute{
			MarkdownDescription: "One map per click (row of the export) in the range, from column name to value, in the order of the export. The columns are the service's; see `columns`. Null when `include_rows` is `false`.",
			Computed:            true,
			ElementType:         exportRowType,
		},
		"max_clicks": schema.NumberAttribute{
			MarkdownDescription: fmt.Sprintf("The most clicks the range may hold while `csv` or `rows` is kept; more is an error that says how many it holds, rather than a plan and a state that hold them all. Defaults to %d. Not applied when both `include_csv` and `include_rows` are `false`.", defaultMaxClicks),
			Optional:            true,
			Validators:          []validator.Number{validate.WholeNumber(1, math.MaxInt64)},
		},
		"row_count": schema.Int64Attribute{
			MarkdownDescription: "The number of clicks (rows without the header row) in the range, whether or not `csv` and `rows` are kept.",
			Computed:            true,
		},
	}
}

// keepExport keeps the export, the CSV and the rows only when asked for.
func keepExport(ctx context.Context, read analytics.ReadFunc, q analytics.Query, cfg *analyticsExportModel) error {
	kept := &exportCollector{keepCSV: trueUnlessFalse(cfg.IncludeCSV), keepRows: trueUnlessFalse(cfg.IncludeRows)}
	kept.maxKept = wholeSetting(cfg.MaxClicks, defaultMaxClicks)
	if err := read(ctx, q, nil, kept); err != nil {
		return err
	}
	if kept.count > kept.maxKept && (kept.keepCSV || kept.keepRows) {
		return &tooManyClicksError{count: kept.count, maxClicks: kept.maxKept}
	}
	cfg.CSV, cfg.Rows = types.StringNull(), types.ListNull(exportRowType)
	if kept.keepCSV {
		cfg.CSV = types.StringValue(kept.csv.String())
	}
	if kept.keepRows {
		cfg.Rows = types.ListValueMust(exportRowType, kept.rows)
	}
	columns := make([]attr.Value, len(kept.columns))
	for i, c := range kept.columns {
		columns[i] = types.StringValue(c)
	}
	cfg.Columns = types.ListValueMust(types.StringType, columns)
	cfg.RowCount = types.Int64Value(kept.count)
	return nil
}

// trueUnlessFalse reads an optional flag that defaults to true (a data
// source's schema cannot hold defaults).
func trueUnlessFalse(v types.Bool) bool { return v.IsNull() || v.ValueBool() }

// exportCollector keeps what shortlink_analytics_export stores of a
// reading of the export: the CSV and the rows only when asked for, and of
// those no more than maxKept clicks; it counts them all.
type exportCollector struct {
	keepCSV, keepRows bool
	maxKept           int64
	columns           []string
	csv               strings.Builder
	rows              []attr.Value
	count             int64
}

// tooManyClicksError is a range that holds more clicks than max_clicks.
type tooManyClicksError struct{ count, maxClicks int64 }

func (e *tooManyClicksError) Error() string {
	return fmt.Sprintf("%d clicks are in the range, more than max_clicks (%d)", e.count, e.maxClicks)
}

func (c *exportCollector) Begin(h analytics.Header) {
	c.columns, c.rows, c.count = h.Columns, []attr.Value{}, 0
	c.csv.Reset()
	if c.keepCSV {
		c.csv.Write(h.Raw)
	}
}

func (c *exportCollector) Row(r analytics.Row) {
	if c.count++; c.count > c.maxKept {
		return // counted only: the reading fails once it has counted them all
	}
	if c.keepCSV {
		c.csv.Write(r.Raw)
	}
	if c.keepRows {
		cells := make(map[string]attr.Value, len(c.columns))
		for i, name := range c.columns {
			cells[name] = types.StringValue(r.Fields[i])
		}
		c.rows = append(c.rows, types.MapValueMust(types.StringType, cells))
	}
}
