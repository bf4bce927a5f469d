package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// NewClicksDataSource is shortlink_clicks.
func NewClicksDataSource() datasource.DataSource {
	return &exportDataSource[clicksModel, *clicksModel]{
		typeSuffix: "_clicks",
		description: "A summary of the clicks of the account, or of one link, optionally of a time range: the total, the clicks per link and per day, the first and last click and the most frequent referrers. " +
			"Needs the scope `links:read`. The service's CSV analytics export is read again on every plan, as a stream, and only the counts are kept: " +
			"the state grows with the links and days that had clicks, never with the number of clicks. How far back the export reaches depends on the account's plan.",
		attributes: clicksAttributes,
		keep:       keepClickCounts,
	}
}

type clicksModel struct {
	exportFilterModel
	Total             types.Int64       `tfsdk:"total"`
	ByLink            types.Map         `tfsdk:"by_link"`
	ByDay             types.Map         `tfsdk:"by_day"`
	FirstClickAt      timetypes.RFC3339 `tfsdk:"first_click_at"`
	LastClickAt       timetypes.RFC3339 `tfsdk:"last_click_at"`
	TopReferrers      types.List        `tfsdk:"top_referrers"`
	TopReferrersExact types.Bool        `tfsdk:"top_referrers_exact"`
}

var referrerClicksType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"referrer": types.StringType,
	"clicks":   types.Int64Type,
}}

// clicksAttributes are what shortlink_clicks adds to the filter: the counts.
func clicksAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"total": schema.Int64Attribute{
			MarkdownDescription: "The number of clicks.",
			Computed:            true,
		},
		"by_link": schema.MapAttribute{
			MarkdownDescription: "Clicks per link: link ID → number of clicks. A link without clicks is absent, so read it with `lookup(data.shortlink_clicks.<name>.by_link, <link id>, 0)`. The IDs are spelled as the service spells them (a UUID in lower case), the one of `link_id` as written: look up a UUID written in capitals elsewhere (the `id` of `data.shortlink_link` keeps the capitals it was given) with `lower()`, or it reads 0.",
			Computed:            true,
			ElementType:         types.Int64Type,
		},
		"by_day": schema.MapAttribute{
			MarkdownDescription: "Clicks per day: date in UTC (`YYYY-MM-DD`) → number of clicks. A day without clicks is absent.",
			Computed:            true,
			ElementType:         types.Int64Type,
		},
		"first_click_at": schema.StringAttribute{
			MarkdownDescription: "When the earliest click was (RFC 3339, UTC); null without clicks.",
			Computed:            true,
			CustomType:          timetypes.RFC3339Type{},
		},
		"last_click_at": schema.StringAttribute{
			MarkdownDescription: "When the latest click was (RFC 3339, UTC); null without clicks.",
			Computed:            true,
			CustomType:          timetypes.RFC3339Type{},
		},
		"top_referrers": schema.ListNestedAttribute{
			MarkdownDescription: fmt.Sprintf("The %d most frequent referrers (the page a visitor came from, the `Referer` header of the visit), most clicks first; "+
				"referrers with as many clicks are in byte order of `referrer`. Visits without a referrer (a typed or bookmarked address, an app) count for `\"\"`.", analytics.TopReferrers),
			Computed: true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"referrer": schema.StringAttribute{MarkdownDescription: "The referrer, as the service recorded it.", Computed: true},
				"clicks":   schema.Int64Attribute{MarkdownDescription: "Its clicks.", Computed: true},
			}},
		},
		"top_referrers_exact": schema.BoolAttribute{
			MarkdownDescription: fmt.Sprintf("Whether the counts of `top_referrers` are exact. They are unless the clicks came from more than %[1]d different referrers: "+
				"the provider then keeps counting only the %[1]d most frequent as it reads, so that its memory stays bounded, and a count may be over by at most the number of clicks divided by %[1]d. "+
				"Every referrer with more clicks than that is still counted.", analytics.MaxTrackedReferrers),
			Computed: true,
		},
	}
}

// keepClickCounts keeps only the counts of the export, so that the state
// does not grow with the clicks.
func keepClickCounts(ctx context.Context, read analytics.ReadFunc, q analytics.Query, cfg *clicksModel) error {
	summary, err := analytics.Summarize(ctx, read, q)
	if err != nil {
		return err
	}
	cfg.Total = types.Int64Value(summary.Total)
	cfg.ByLink = countsMap(keyedAsConfigured(summary.ByLink, cfg.LinkID))
	cfg.ByDay = countsMap(summary.ByDay)
	cfg.FirstClickAt = instant(summary.FirstClick)
	cfg.LastClickAt = instant(summary.LastClick)
	cfg.TopReferrers = referrerList(summary.TopReferrers)
	cfg.TopReferrersExact = types.BoolValue(summary.ReferrersExact)
	return nil
}

// keyedAsConfigured is the clicks per link with the link of linkID, when
// set, keyed by linkID as written: the export spells it the service's way
// (a UUID in lower case), and lookup(self.by_link, self.link_id, 0) must
// not read 0 for a link written in capitals.
func keyedAsConfigured(byLink map[string]int64, linkID types.String) map[string]int64 {
	if linkID.IsNull() || linkID.IsUnknown() {
		return byLink
	}
	out := make(map[string]int64, len(byLink))
	for id, n := range byLink {
		if client.SameID(id, linkID.ValueString()) {
			id = linkID.ValueString()
		}
		out[id] += n
	}
	return out
}

func countsMap(counts map[string]int64) types.Map {
	elems := make(map[string]attr.Value, len(counts))
	for k, n := range counts {
		elems[k] = types.Int64Value(n)
	}
	return types.MapValueMust(types.Int64Type, elems)
}

// instant is t in the spelling of the state's other timestamps; null for
// the zero time.
func instant(t time.Time) timetypes.RFC3339 {
	if t.IsZero() {
		return timetypes.NewRFC3339Null()
	}
	return timetypes.NewRFC3339ValueMust(t.UTC().Format(time.RFC3339Nano))
}

func referrerList(top []analytics.ReferrerClicks) types.List {
	elems := make([]attr.Value, len(top))
	for i, r := range top {
		elems[i] = types.ObjectValueMust(referrerClicksType.AttrTypes, map[string]attr.Value{
			"referrer": types.StringValue(r.Referrer),
			"clicks":   types.Int64Value(r.Clicks),
		})
	}
	return types.ListValueMust(referrerClicksType, elems)
}
