package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

var (
	_ datasource.DataSource              = (*linksDataSource)(nil)
	_ datasource.DataSourceWithConfigure = (*linksDataSource)(nil)
)

// NewLinksDataSource is shortlink_links.
func NewLinksDataSource() datasource.DataSource { return &linksDataSource{} }

type linksDataSource struct{ configuredDataSource }

type linksDataSourceModel struct {
	DomainID types.String `tfsdk:"domain_id"`
	Links    types.List   `tfsdk:"links"`
}

func (d *linksDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_links"
}

func (d *linksDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Every link of the account, oldest first, optionally only those of one domain. Needs the scope `links:read`.",
		Attributes: map[string]schema.Attribute{
			"domain_id": schema.StringAttribute{
				MarkdownDescription: "Only links of this domain (UUID).",
				Optional:            true,
				Validators:          []validator.String{validate.UUID()},
			},
			"links": schema.ListNestedAttribute{
				MarkdownDescription: "The links, with every attribute of `shortlink_link`.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: linkDataAttributes()},
			},
		},
	}
}

// linkDataAttributes describes a link in a data source: every attribute of
// shortlink_link, all computed.
func linkDataAttributes() map[string]schema.Attribute {
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	expires := str("When the link expires (RFC 3339); null when it does not.")
	expires.CustomType = instantType{}
	created := str("When the link was created (RFC 3339).")
	created.CustomType = timetypes.RFC3339Type{}
	return map[string]schema.Attribute{
		"id":          str("Identifier of the link."),
		"domain_id":   str("UUID of the link's domain."),
		"destination": str("Where the short link redirects."),
		"slug":        str("Path of the short link on its domain."),
		"expires_at":  expires,
		"utm": schema.SingleNestedAttribute{
			MarkdownDescription: "UTM parameters; null when none.",
			Computed:            true,
			Attributes:          computedUTMAttributes(),
		},
		"short_url":   str("The short URL."),
		"qr_code_url": str("URL of the QR code; null when the service sends none."),
		"created_at":  created,
	}
}

func (d *linksDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if !configured(d.data, &resp.Diagnostics) {
		return
	}
	var cfg linksDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	links, err := d.data.listing.Links(ctx)
	if err != nil {
		addOperationError(&resp.Diagnostics, d.data.client, "list the links", err)
		return
	}
	elems := []attr.Value{}
	for l := range links.All() {
		if !cfg.DomainID.IsNull() && !strings.EqualFold(l.DomainID, cfg.DomainID.ValueString()) {
			continue
		}
		elems = append(elems, linkObject(&l))
	}
	if !cfg.DomainID.IsNull() && len(elems) == 0 {
		resp.Diagnostics.Append(noLinkOnDomain(cfg.DomainID.ValueString(), links.Len())...)
	}
	list, diags := types.ListValue(types.ObjectType{AttrTypes: linkAttrTypes}, elems)
	resp.Diagnostics.Append(diags...)
	cfg.Links = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
}

// computedUTMAttributes are a listed link's utm attributes: one per UTM
// parameter.
func computedUTMAttributes() map[string]schema.Attribute {
	attrs := make(map[string]schema.Attribute, len(client.UTMParameters))
	for _, p := range client.UTMParameters {
		attrs[p] = schema.StringAttribute{MarkdownDescription: "utm_" + p, Computed: true}
	}
	return attrs
}
