package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

var (
	_ datasource.DataSource                     = (*linkDataSource)(nil)
	_ datasource.DataSourceWithConfigure        = (*linkDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*linkDataSource)(nil)
)

// NewLinkDataSource is the shortlink_link data source.
func NewLinkDataSource() datasource.DataSource { return &linkDataSource{} }

type linkDataSource struct{ configuredDataSource }

func (d *linkDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_link"
}

func (d *linkDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := linkDataAttributes()
	attrs["id"] = schema.StringAttribute{
		MarkdownDescription: "Identifier (a UUID) of the link to look up. Give either `id`, or `domain_id` and `slug`.",
		Optional:            true,
		Computed:            true,
		Validators:          []validator.String{validate.UUID()},
	}
	attrs["domain_id"] = schema.StringAttribute{
		MarkdownDescription: "UUID of the link's domain; with `slug`, looks the link up by its short path.",
		Optional:            true,
		Computed:            true,
		Validators:          []validator.String{validate.UUID()},
	}
	attrs["slug"] = schema.StringAttribute{
		MarkdownDescription: "Path of the short link on its domain; with `domain_id`, looks the link up by its short path.",
		Optional:            true,
		Computed:            true,
		Validators:          []validator.String{validate.Slug()},
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One existing link, looked up by `id` or by `domain_id` and `slug`, with every attribute of the `shortlink_link` resource. " +
			"Use it for links managed elsewhere (another configuration, the dashboard). Needs the scope `links:read`; no link matching is an error.",
		Attributes: attrs,
	}
}

// ConfigValidators accepts exactly one of the two forms of lookup: id, or
// domain_id together with slug.
func (d *linkDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{
		datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("domain_id")),
		datasourcevalidator.RequiredTogether(path.MatchRoot("domain_id"), path.MatchRoot("slug")),
	}
}

func (d *linkDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	ctx, done := trackReadWaits(ctx, &resp.Diagnostics)
	defer done()
	var m linkModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !configured(d.data, &resp.Diagnostics) {
		return
	}
	link, err := d.lookup(ctx, m)
	switch {
	case errors.Is(err, links.ErrNotListed):
		addNoLinkWithID(&resp.Diagnostics, m.ID.ValueString())
		return
	case errors.Is(err, links.ErrNoSuchLink):
		addNoSuchLink(&resp.Diagnostics, path.Root("slug"), err.Error())
		return
	case err != nil:
		addOperationError(&resp.Diagnostics, d.data.reports, "look up the link", err)
		return
	}
	m.applyLink(link)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// lookup finds the link in the provider's shared listing of the account's
// links, as shortlink_links and the resource's refreshes do.
func (d *linkDataSource) lookup(ctx context.Context, m linkModel) (*client.Link, error) {
	if m.ID.IsNull() {
		return links.BySlug(ctx, d.data.listing, m.DomainID.ValueString(), m.Slug.ValueString())
	}
	return links.ByID(ctx, d.data.listing, m.ID.ValueString())
}
