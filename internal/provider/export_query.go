package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

// exportFilterAttributes select the clicks of the analytics export; the
// data sources that read the export share them.
func exportFilterAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"link_id": schema.StringAttribute{
			MarkdownDescription: "Only the clicks of this link (its `id`, a UUID). Omit it for every link of the account, deleted links included. A link that does not exist on the account is an error.",
			Optional:            true,
			Validators:          []validator.String{validate.UUID()},
		},
		"since": schema.StringAttribute{
			MarkdownDescription: "Only the clicks at or after this instant (inclusive), in RFC 3339 such as `\"2027-03-01T00:00:00Z\"`; any offset may be given, instants are compared. " +
				"The service's export has no date filter, so the provider reads the whole export and drops earlier clicks as it reads. Omit it for every click the export holds.",
			Optional:   true,
			CustomType: instantType{},
		},
		"until": schema.StringAttribute{
			MarkdownDescription: "Only the clicks before this instant (exclusive), in RFC 3339; must be later than `since`. " +
				"Since `since` is inclusive and `until` exclusive, adjacent ranges such as `[March 1, April 1)` and `[April 1, May 1)` never count a click twice. Omit it for every click up to now.",
			Optional:   true,
			CustomType: instantType{},
			Validators: []validator.String{validate.LaterThan(path.MatchRoot("since"))},
		},
	}
}

// exportFilterModel holds the filter attributes, embedded in the model of
// every data source that reads the export.
type exportFilterModel struct {
	LinkID types.String `tfsdk:"link_id"`
	Since  instantValue `tfsdk:"since"`
	Until  instantValue `tfsdk:"until"`
}

// query is the query of the filter attributes, as validated at plan time.
func (f exportFilterModel) query() (analytics.Query, diag.Diagnostics) {
	var diags diag.Diagnostics
	q := analytics.Query{LinkID: f.LinkID.ValueString()}
	if !f.Since.IsNull() {
		t, d := f.Since.ValueRFC3339Time()
		diags.Append(d...)
		q.Since = t
	}
	if !f.Until.IsNull() {
		t, d := f.Until.ValueRFC3339Time()
		diags.Append(d...)
		q.Until = t
	}
	return q, diags
}

// exportDataSource is a data source that reads the analytics export:
// shortlink_clicks and shortlink_analytics_export differ only in the
// attributes they add to the filter and in what they keep of the export,
// so the framework's methods are written once, here.
type exportDataSource[M any, PM exportModel[M]] struct {
	configuredDataSource
	typeSuffix  string // after the provider's name, such as "_clicks"
	description string
	attributes  func() map[string]schema.Attribute // besides the filter's
	// keep reads the export of q with read into cfg.
	keep func(ctx context.Context, read analytics.ReadFunc, q analytics.Query, cfg PM) error
}

// exportModel is a pointer to a model that embeds exportFilterModel.
type exportModel[M any] interface {
	*M
	query() (analytics.Query, diag.Diagnostics)
}

var (
	_ datasource.DataSource              = (*exportDataSource[clicksModel, *clicksModel])(nil)
	_ datasource.DataSourceWithConfigure = (*exportDataSource[clicksModel, *clicksModel])(nil)
)

func (d *exportDataSource[M, PM]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.typeSuffix
}

func (d *exportDataSource[M, PM]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := exportFilterAttributes()
	maps.Copy(attrs, d.attributes())
	resp.Schema = schema.Schema{MarkdownDescription: d.description, Attributes: attrs}
}

func (d *exportDataSource[M, PM]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, done := trackExportReadWaits(ctx, &resp.Diagnostics)
	defer done()
	var cfg M
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || !configured(d.data, &resp.Diagnostics) {
		return
	}
	q, diags := PM(&cfg).query()
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	q.LinkID = links.ServiceLinkID(ctx, d.data.listing, q.LinkID)
	if err := d.keep(ctx, d.data.client.ReadExport, q, &cfg); err != nil {
		addExportError(&resp.Diagnostics, d.data.reports, q.LinkID, err)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
}
