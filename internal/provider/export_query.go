package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
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

// exportFiltered is a model that embeds exportFilterModel.
type exportFiltered interface {
	query() (analytics.Query, diag.Diagnostics)
}

// readExportConfig is the first step of reading a data source that reads
// the export: it reads the configuration into cfg (a pointer to its model)
// and returns the query of its filter attributes. ok is false when that
// failed or the provider is not configured; diags then says why.
func readExportConfig(ctx context.Context, data *providerData, config tfsdk.Config, cfg exportFiltered, diags *diag.Diagnostics) (q analytics.Query, ok bool) {
	diags.Append(config.Get(ctx, cfg)...)
	if diags.HasError() {
		return analytics.Query{}, false
	}
	if !configured(data, diags) {
		return analytics.Query{}, false
	}
	q, d := cfg.query()
	diags.Append(d...)
	return q, !diags.HasError()
}
