package provider

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
	"github.com/shortlink/terraform-provider-shortlink/internal/snapshot"
	"github.com/shortlink/terraform-provider-shortlink/internal/validate"
)

// The list resource shortlink_link lets `terraform query` (Terraform 1.14
// and later) find the links made outside Terraform, in the dashboard, and
// write import and resource blocks for them. It reads the one shared
// listing of the account that refreshes use (the service has no search),
// and filters it here.

var (
	_ list.ListResource              = (*linkListResource)(nil)
	_ list.ListResourceWithConfigure = (*linkListResource)(nil)
)

// NewLinkListResource is the list resource shortlink_link.
func NewLinkListResource() list.ListResource { return &linkListResource{now: time.Now} }

type linkListResource struct {
	data *providerData
	now  func() time.Time // when a link counts as expired
}

// linkListModel is the `config` block of a `list "shortlink_link"` block.
type linkListModel struct {
	DomainID        types.String `tfsdk:"domain_id"`
	SlugPrefix      types.String `tfsdk:"slug_prefix"`
	DestinationHost types.String `tfsdk:"destination_host"`
	IncludeExpired  types.Bool   `tfsdk:"include_expired"`
}

func (r *linkListResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_link"
}

func (r *linkListResource) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The account's links, in the order the service lists them, for `terraform query` (Terraform 1.14 and later): each with its identity (the link ID) and, with `include_resource = true`, every attribute of `shortlink_link`, so that `terraform query -generate-config-out=FILE` writes an `import` and a `resource` block per link. Served from one listing of the account, filtered by the provider. Every filter is optional; they combine with AND. Needs the scope `links:read`.",
		Attributes: map[string]schema.Attribute{
			"include_expired": schema.BoolAttribute{
				MarkdownDescription: "Also list links whose `expires_at` has passed (their display name says so). Defaults to `false`: an expired link no longer redirects, and adopting it only to keep it dead is rarely worth a resource.",
				Optional:            true,
			},
		},
	}
	for name, f := range sharedLinkFilters {
		resp.Schema.Attributes[name] = schema.StringAttribute{MarkdownDescription: f.description, Optional: true, Validators: []validator.String{f.validator}}
	}
}

func (r *linkListResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = providerDataFrom(req.ProviderData, &resp.Diagnostics)
}

// List streams the links the filters accept. Nothing is requested until
// Terraform reads the stream; every failure is a diagnostic in it.
func (r *linkListResource) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	stream.Results = func(push func(list.ListResult) bool) {
		links, filter, diags := r.listed(ctx, req.Config)
		if diags.HasError() {
			push(list.ListResult{Diagnostics: diags})
			return
		}
		if req.Limit > 0 {
			if matched := countMatches(links, filter); matched > req.Limit {
				addListCutByLimit(&diags, matched, req.Limit)
			}
		}
		if len(diags) > 0 && !push(list.ListResult{Diagnostics: diags}) { // warnings: first, so that a limit does not drop them
			return
		}
		sent, more := pushMatches(ctx, req, links, filter, push)
		if more && sent == 0 && filter.domainID != "" && !filter.domainListed(links) {
			push(list.ListResult{Diagnostics: noLinkOnDomain(filter.domainID, links.Len())})
		}
	}
}

// listed reads the filters and, when they can match, the account's links
// from the shared listing: every link, as shortlink_links lists them (the
// listings of a paged account until one skipped none, so that a link
// another client's deletes shifted between two pages of one is still
// found; a warning when none did).
func (r *linkListResource) listed(ctx context.Context, config tfsdk.Config) (client.Listing, linkFilter, diag.Diagnostics) {
	var diags diag.Diagnostics
	filter := linkFilterFrom(ctx, config, r.now(), &diags)
	if diags.HasError() || !configured(r.data, &diags) {
		return nil, filter, diags
	}
	ctx, told := trackReadWaits(ctx, &diags)
	links, err := r.data.listing.Links(ctx)
	told()
	if errors.Is(err, snapshot.ErrListingsShifted) {
		addListingsShifted(&diags)
		err = nil
	}
	if err != nil {
		addOperationError(&diags, r.data.reports, "list the links", err)
	}
	return links, filter, diags
}

// pushMatches pushes the links filter accepts, at most req.Limit of them
// when it is set. more is false when Terraform wants no more results.
func pushMatches(ctx context.Context, req list.ListRequest, links client.Listing, filter linkFilter, push func(list.ListResult) bool) (sent int64, more bool) {
	for l := range links.All() {
		if !filter.accepts(&l) {
			continue
		}
		if req.Limit > 0 && sent >= req.Limit {
			return sent, false
		}
		if !push(listResult(ctx, req, &l, filter.now)) {
			return sent, false
		}
		sent++
	}
	return sent, true
}

// domainListed reports whether any link of the account is on the filter's
// domain, whatever the other filters say.
func (f linkFilter) domainListed(links client.Listing) bool {
	for l := range links.All() {
		if client.SameID(l.DomainID, f.domainID) {
			return true
		}
	}
	return false
}

// listResult is one link: its identity, a display name and, when asked
// for, the state an import of it would record.
func listResult(ctx context.Context, req list.ListRequest, l *client.Link, now time.Time) list.ListResult {
	result := req.NewListResult(ctx)
	result.DisplayName = linkDisplayName(l, now)
	result.Diagnostics.Append(result.Identity.Set(ctx, linkIdentityModel{ID: types.StringValue(l.ID)})...)
	if req.IncludeResource {
		state := importedLinkState(ctx, l)
		result.Diagnostics.Append(result.Resource.Set(ctx, &state)...)
	}
	return result
}

// maxDisplayedDestination bounds the destination in a display name, which
// is one line of `terraform query`'s output.
const maxDisplayedDestination = 60

// linkDisplayName is "<short URL> (→ <destination>)", the two things a
// person recognises a link by, and says when it expired.
func linkDisplayName(l *client.Link, now time.Time) string {
	name := l.ShortURL
	if name == "" { // a service that sends no short URL: say where it lives
		name = l.DomainID + "/" + l.Slug
	}
	dest := l.Destination
	if u, err := url.Parse(dest); err == nil && u.User != nil {
		// Not quoted, as Invalid destination does not: the line goes into logs.
		u.User = nil
		dest = strings.Replace(u.String(), "://", "://…@", 1)
	}
	if r := []rune(dest); len(r) > maxDisplayedDestination {
		dest = string(r[:maxDisplayedDestination-1]) + "…"
	}
	if expired(l, now) {
		return fmt.Sprintf("%s (→ %s, expired %s)", name, dest, l.ExpiresAt.UTC().Format(time.DateOnly))
	}
	return fmt.Sprintf("%s (→ %s)", name, dest)
}

func expired(l *client.Link, now time.Time) bool {
	return l.ExpiresAt != nil && !l.ExpiresAt.After(now)
}

// sharedLinkFilters are the filters the list resource and shortlink_links
// share (their schemas are of different packages): each is an optional
// string, and newLinkFilter reads them.
var sharedLinkFilters = map[string]struct {
	description string
	validator   validator.String
}{
	"domain_id": {"Only links of this domain (UUID, as on the domain's card in the dashboard's Domains section).", validate.UUID()},
	"slug_prefix": {"Only links whose slug begins with this text, such as `spring-`. Slugs are case-sensitive, and so is the prefix.",
		validate.SlugPrefix()},
	"destination_host": {"Only links that redirect to this host, such as `shop.example.com`: the host of the destination URL, compared without regard to case, port or a trailing dot. Subdomains are other hosts: `example.com` does not match `shop.example.com`.",
		validate.HostName()},
}

// linkFilter is a list block's config, or shortlink_links's, checked and
// normalised.
type linkFilter struct {
	domainID, slugPrefix, host string // "" accepts all
	includeExpired             bool
	now                        time.Time
}

// linkFilterFrom reads the config. Terraform validates it beforehand; it
// is checked again because a list request may come without validation,
// and a filter that cannot match must not look like an empty account.
func linkFilterFrom(ctx context.Context, config tfsdk.Config, now time.Time, diags *diag.Diagnostics) linkFilter {
	var m linkListModel
	diags.Append(config.Get(ctx, &m)...)
	if diags.HasError() {
		return linkFilter{}
	}
	f := newLinkFilter(m.DomainID, m.SlugPrefix, m.DestinationHost, diags)
	f.now, f.includeExpired = now, m.IncludeExpired.ValueBool()
	if m.IncludeExpired.IsUnknown() {
		addUnknownFilter(diags, "include_expired")
	}
	return f
}

// newLinkFilter checks and normalises the filters shortlink_links shares
// with the list resource; it accepts expired links.
func newLinkFilter(domainID, slugPrefix, destinationHost types.String, diags *diag.Diagnostics) linkFilter {
	return linkFilter{
		domainID:       filterValue(domainID, "domain_id", validate.UUIDProblem, diags),
		slugPrefix:     filterValue(slugPrefix, "slug_prefix", validate.SlugPrefixProblem, diags),
		host:           links.ComparableHost(filterValue(destinationHost, "destination_host", validate.HostNameProblem, diags)),
		includeExpired: true,
	}
}

// filterValue is a filter's value, "" when unset, with an error on the
// attribute when it is unknown or problem finds it wrong.
func filterValue(v types.String, name string, problem func(string) string, diags *diag.Diagnostics) string {
	switch {
	case v.IsNull():
		return ""
	case v.IsUnknown():
		addUnknownFilter(diags, name)
		return ""
	}
	if p := problem(v.ValueString()); p != "" {
		addInvalidFilter(diags, name, p)
	}
	return v.ValueString()
}

func (f linkFilter) accepts(l *client.Link) bool {
	switch {
	case f.domainID != "" && !client.SameID(l.DomainID, f.domainID):
		return false
	case f.slugPrefix != "" && !strings.HasPrefix(l.Slug, f.slugPrefix):
		return false
	case f.host != "" && destinationHost(l.Destination) != f.host:
		return false
	case !f.includeExpired && expired(l, f.now):
		return false
	}
	return true
}

// destinationHost is the comparable host of a destination, "" when the
// service sent something that is not a URL (which then matches no host).
func destinationHost(destination string) string {
	u, err := url.Parse(destination)
	if err != nil {
		return ""
	}
	return links.ComparableHost(u.Hostname())
}
