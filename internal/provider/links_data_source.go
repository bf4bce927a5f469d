package provider

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
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
	DomainID        types.String `tfsdk:"domain_id"`
	SlugPrefix      types.String `tfsdk:"slug_prefix"`
	DestinationHost types.String `tfsdk:"destination_host"`
	MaxLinks        types.Number `tfsdk:"max_links"`
	Links           types.List   `tfsdk:"links"`
}

// defaultMaxLinks bounds what shortlink_links returns unless max_links says
// otherwise. Every link it returns is held in the plan and the state: 100,000
// took 20 s and 1.4 GB, and at about 850,000 the answer outgrows what
// Terraform takes from a provider (256 MiB), after minutes.
const defaultMaxLinks = 10000

func (d *linksDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_links"
}

func (d *linksDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The account's links, oldest first, expired ones included; every filter is optional, and they combine with AND. " +
			"Every link it returns is held in the plan and the state, so more than `max_links` matching is an error: on a large account, filter. " +
			"To find links to adopt, `terraform query` (Terraform 1.14 and later) lists them without holding them in the state. Needs the scope `links:read`.",
		Attributes: map[string]schema.Attribute{
			"max_links": schema.NumberAttribute{
				MarkdownDescription: fmt.Sprintf("The most links that may match; more is an error that says how many did, rather than a plan and a state that hold them all. Defaults to %d.", defaultMaxLinks),
				Optional:            true,
				Validators:          []validator.Number{validate.WholeNumber(1, math.MaxInt64)},
			},
			"links": schema.ListNestedAttribute{
				MarkdownDescription: "The links, with every attribute of `shortlink_link`.",
				Computed:            true,
				NestedObject:        schema.NestedAttributeObject{Attributes: linkDataAttributes()},
			},
		},
	}
	for name, f := range sharedLinkFilters {
		resp.Schema.Attributes[name] = schema.StringAttribute{MarkdownDescription: f.description, Optional: true, Validators: []validator.String{f.validator}}
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
	ctx, done := trackReadWaits(ctx, &resp.Diagnostics)
	defer done()
	if !configured(d.data, &resp.Diagnostics) {
		return
	}
	var cfg linksDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	filter := newLinkFilter(cfg.DomainID, cfg.SlugPrefix, cfg.DestinationHost, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	links, err := d.data.listing.Links(ctx)
	if errors.Is(err, snapshot.ErrListingsShifted) {
		addListingsShifted(&resp.Diagnostics)
		err = nil
	}
	if err != nil {
		addOperationError(&resp.Diagnostics, d.data.reports, "list the links", err)
		return
	}
	maxLinks := wholeSetting(cfg.MaxLinks, defaultMaxLinks)
	if matched := countMatches(links, filter); matched > maxLinks {
		addTooManyLinks(&resp.Diagnostics, matched, maxLinks)
		return
	}
	var matched []client.Link
	for l := range links.All() {
		if filter.accepts(&l) {
			matched = append(matched, l)
		}
	}
	slices.SortStableFunc(matched, olderFirst)
	elems := make([]attr.Value, 0, len(matched))
	for i := range matched {
		elems = append(elems, linkObject(&matched[i]))
	}
	if filter.domainID != "" && len(elems) == 0 && !filter.domainListed(links) {
		resp.Diagnostics.Append(noLinkOnDomain(cfg.DomainID.ValueString(), links.Len())...)
	}
	list, diags := types.ListValue(types.ObjectType{AttrTypes: linkAttrTypes}, elems)
	resp.Diagnostics.Append(diags...)
	cfg.Links = list
	resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
}

// olderFirst orders links by creation, whatever order the service lists
// them in (the specification does not say), so that links[0] is the same
// link from one plan to the next. A link whose creation time the service
// did not give comes after those it gave; links created together keep the
// service's order.
func olderFirst(a, b client.Link) int {
	switch az, bz := a.CreatedAt.IsZero(), b.CreatedAt.IsZero(); {
	case az && bz:
		return 0
	case az:
		return 1
	case bz:
		return -1
	}
	return a.CreatedAt.Compare(b.CreatedAt)
}

// countMatches counts the links filter accepts, so that too many fail
// before any is turned into a Terraform value.
func countMatches(links client.Listing, filter linkFilter) int64 {
	var n int64
	for l := range links.All() {
		if filter.accepts(&l) {
			n++
		}
	}
	return n
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
