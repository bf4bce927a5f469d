package provider

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// These tests speak the plugin protocol to the server Terraform runs
// (NewServer), as `terraform query` does, so they need no Terraform CLI.
// TestAccLinkList_query, at the end of this file, runs the same list
// resource under the real CLI.

// listClient is the provider's server with the schemas needed to encode
// requests and decode results.
type listClient struct {
	t        *testing.T
	server   tfprotov6.ProviderServerWithListResource //nolint:staticcheck // the list RPCs are not yet in ProviderServer
	provider tftypes.Object
	config   tftypes.Object // of a list block's config
	resource tftypes.Type
	identity tftypes.Type
}

// newListClient starts the provider's server and reads its schemas.
func newListClient(t *testing.T) *listClient {
	t.Helper()
	ls, ok := NewServer("test")().(tfprotov6.ProviderServerWithListResource) //nolint:staticcheck // see listClient
	if !ok {
		t.Fatal("NewServer's server does not serve the list RPCs: terraform query would find no list resource")
	}
	ctx := context.Background()
	schemas, err := ls.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, diagnosticsText(schemas.Diagnostics))
	}
	listSchema, ok := schemas.ListResourceSchemas["shortlink_link"]
	if !ok {
		t.Fatalf("the provider has no list resource shortlink_link; it has %v", sortedKeys(schemas.ListResourceSchemas))
	}
	identities, err := ls.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || len(identities.Diagnostics) > 0 {
		t.Fatalf("GetResourceIdentitySchemas: %v %v", err, diagnosticsText(identities.Diagnostics))
	}
	return &listClient{
		t:        t,
		server:   ls,
		provider: schemas.Provider.ValueType().(tftypes.Object),
		config:   listSchema.ValueType().(tftypes.Object),
		resource: schemas.ResourceSchemas["shortlink_link"].ValueType(),
		identity: identities.IdentitySchemas["shortlink_link"].ValueType(),
	}
}

// configure configures the provider with a base URL, a key and no retries.
func (c *listClient) configure(baseURL, key string) {
	c.t.Helper()
	c.configureWith(baseURL, key, nil)
}

// configureWith configures the provider with more settings than configure's.
func (c *listClient) configureWith(baseURL, key string, more map[string]tftypes.Value) {
	c.t.Helper()
	settings := map[string]tftypes.Value{
		"base_url":    tftypes.NewValue(tftypes.String, baseURL),
		"api_key":     tftypes.NewValue(tftypes.String, key),
		"max_retries": tftypes.NewValue(tftypes.Number, 0),
	}
	maps.Copy(settings, more)
	cfg := object(c.t, c.provider, settings)
	resp, err := c.server.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.14.0", Config: cfg})
	if err != nil || len(resp.Diagnostics) > 0 {
		c.t.Fatalf("ConfigureProvider: %v %v", err, diagnosticsText(resp.Diagnostics))
	}
}

// listRequest is a ListResource request: the filters and the protocol's
// own settings.
type listRequest struct {
	filters         map[string]tftypes.Value
	includeResource bool
	limit           int64
}

// list sends a ListResource request and reads the whole stream.
func (c *listClient) list(req listRequest) []tfprotov6.ListResourceResult {
	c.t.Helper()
	stream, err := c.server.ListResource(context.Background(), &tfprotov6.ListResourceRequest{
		TypeName:        "shortlink_link",
		Config:          object(c.t, c.config, req.filters),
		IncludeResource: req.includeResource,
		Limit:           req.limit,
	})
	if err != nil {
		c.t.Fatalf("ListResource: %v", err)
	}
	return slices.Collect(stream.Results)
}

// validate sends a ValidateListResourceConfig request.
func (c *listClient) validate(filters map[string]tftypes.Value) []*tfprotov6.Diagnostic {
	c.t.Helper()
	resp, err := c.server.ValidateListResourceConfig(context.Background(), &tfprotov6.ValidateListResourceConfigRequest{
		TypeName: "shortlink_link",
		Config:   object(c.t, c.config, filters),
	})
	if err != nil {
		c.t.Fatalf("ValidateListResourceConfig: %v", err)
	}
	return resp.Diagnostics
}

// ids returns each result's identity, failing on a result with errors.
func (c *listClient) ids(results []tfprotov6.ListResourceResult) []string {
	c.t.Helper()
	out := make([]string, 0, len(results))
	for _, r := range results {
		if len(r.Diagnostics) > 0 {
			c.t.Fatalf("result %q has diagnostics: %v", r.DisplayName, diagnosticsText(r.Diagnostics))
		}
		if r.Identity == nil || r.Identity.IdentityData == nil {
			c.t.Fatalf("result %q has no identity", r.DisplayName)
		}
		out = append(out, c.attr(r.Identity.IdentityData, c.identity, "id"))
	}
	return out
}

// attr decodes one string attribute of an object value.
func (c *listClient) attr(v *tfprotov6.DynamicValue, typ tftypes.Type, name string) string {
	c.t.Helper()
	var attrs map[string]tftypes.Value
	decode(c.t, v, typ, &attrs)
	var s string
	if err := attrs[name].As(&s); err != nil {
		c.t.Fatalf("attribute %s: %v", name, err)
	}
	return s
}

func decode(t *testing.T, v *tfprotov6.DynamicValue, typ tftypes.Type, target any) {
	t.Helper()
	val, err := v.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	if err := val.As(target); err != nil {
		t.Fatal(err)
	}
}

// object is a value of typ with the given attributes and null elsewhere.
func object(t *testing.T, typ tftypes.Object, set map[string]tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	attrs := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		attrs[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("the schema has no attribute %q", name)
		}
		attrs[name] = v
	}
	dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, attrs))
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}

func str(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func diagnosticsText(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&b, "[%s on %v] %s: %s\n", d.Severity, d.Attribute, d.Summary, d.Detail)
	}
	return b.String()
}

// listFixture is an account with links of two domains, several
// destination hosts, one with UTM parameters and one expired.
type listFixture struct {
	env                *testEnv
	otherDomain        string
	spring, autumn     []string // IDs, oldest first
	shop, utm, expired string
	all                []string // every unexpired link, oldest first
}

func newListFixture(t *testing.T) *listFixture {
	t.Helper()
	e := newTestEnv(t)
	f := &listFixture{env: e}
	var err error
	if f.otherDomain, err = e.srv.AddDomain(e.fx.AccountID, "promo.example.test"); err != nil {
		t.Fatal(err)
	}
	f.spring = seededIDs(t, e, e.fx.DomainID, "spring", 3)
	f.autumn = seededIDs(t, e, f.otherDomain, "autumn", 2)
	c := e.apiClient(t)
	ctx := context.Background()
	create := func(in client.CreateLinkInput) *client.Link {
		t.Helper()
		l, err := c.CreateLink(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	f.shop = create(client.CreateLinkInput{DomainID: e.fx.DomainID, Slug: "shop", Destination: "https://Shop.Example.com:443/sale?x=1"}).ID
	utm := create(client.CreateLinkInput{DomainID: e.fx.DomainID, Slug: "news", Destination: "https://example.com/news"})
	if _, err := c.ChangeDestination(ctx, utm.ID, client.ChangeDestinationInput{Destination: utm.Destination, UTM: &client.UTM{Source: "newsletter", Campaign: "spring"}}); err != nil {
		t.Fatal(err)
	}
	f.utm = utm.ID
	past := time.Date(2020, 1, 31, 23, 59, 59, 0, time.UTC)
	f.expired = create(client.CreateLinkInput{DomainID: e.fx.DomainID, Slug: "spring-old", Destination: "https://example.com/old", ExpiresAt: &past}).ID
	f.all = slices.Concat(f.spring, f.autumn, []string{f.shop, f.utm})
	return f
}

func seededIDs(t *testing.T, e *testEnv, domainID, prefix string, n int) []string {
	t.Helper()
	links := e.seedLinks(t, domainID, prefix, n)
	ids := make([]string, len(links))
	for i, l := range links {
		ids[i] = l.ID
	}
	return ids
}

func (f *listFixture) client(t *testing.T) *listClient {
	c := newListClient(t)
	c.configure(f.env.url, f.env.fx.APIKey)
	return c
}

func TestListResource_filters(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	cases := []struct {
		name    string
		filters map[string]tftypes.Value
		want    []string
	}{
		{"none: every unexpired link, oldest first", nil, f.all},
		{"domain_id", map[string]tftypes.Value{"domain_id": str(f.otherDomain)}, f.autumn},
		{"domain_id in upper case", map[string]tftypes.Value{"domain_id": str(strings.ToUpper(f.otherDomain))}, f.autumn},
		{"slug_prefix", map[string]tftypes.Value{"slug_prefix": str("spring-")}, f.spring},
		{"slug_prefix is case-sensitive", map[string]tftypes.Value{"slug_prefix": str("Spring-")}, []string{}},
		{"destination_host ignores case and port", map[string]tftypes.Value{"destination_host": str("SHOP.example.COM")}, []string{f.shop}},
		{"destination_host is not a suffix match", map[string]tftypes.Value{"destination_host": str("example.com")}, slices.Concat(f.spring, f.autumn, []string{f.utm})},
		{"include_expired", map[string]tftypes.Value{"include_expired": tftypes.NewValue(tftypes.Bool, true)}, append(slices.Clone(f.all), f.expired)},
		{"include_expired false", map[string]tftypes.Value{"include_expired": tftypes.NewValue(tftypes.Bool, false)}, f.all},
		{"filters combine", map[string]tftypes.Value{
			"domain_id": str(f.env.fx.DomainID), "slug_prefix": str("spring"), "include_expired": tftypes.NewValue(tftypes.Bool, true),
		}, append(slices.Clone(f.spring), f.expired)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := c.ids(c.list(listRequest{filters: tc.filters}))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("listed %v, want %v", got, tc.want)
			}
		})
	}
}

// destination_host names a host in any of its spellings: case, a Unicode
// name or its ASCII form, a trailing dot (the service may keep any).
func TestLinkFilter_destinationHostSpellings(t *testing.T) {
	var diags diag.Diagnostics
	f := newLinkFilter(types.StringNull(), types.StringNull(), types.StringValue("Bücher.example"), &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	for destination, want := range map[string]bool{
		"https://xn--bcher-kva.example/x": true,
		"https://BÜCHER.example./y":       true,
		"https://bücher.example:8443/z":   true,
		"https://bucher.example/":         false,
	} {
		if got := f.accepts(&client.Link{Destination: destination}); got != want {
			t.Errorf("destination %q: accepted %v, want %v", destination, got, want)
		}
	}
}

func TestListResource_displayNames(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	long := "https://example.com/" + strings.Repeat("a", 100)
	if _, err := f.env.srv.SeedLinks(f.env.fx.DomainID, "long", 1); err != nil {
		t.Fatal(err)
	}
	longID := f.env.srv.Links(f.env.fx.AccountID)[len(f.env.srv.Links(f.env.fx.AccountID))-1].ID
	if err := f.env.srv.ChangeLinkOutOfBand(longID, long); err != nil {
		t.Fatal(err)
	}
	// A dashboard link with credentials: the line does not quote them.
	if _, err := f.env.srv.SeedLinks(f.env.fx.DomainID, "secret", 1); err != nil {
		t.Fatal(err)
	}
	secretID := f.env.srv.Links(f.env.fx.AccountID)[len(f.env.srv.Links(f.env.fx.AccountID))-1].ID
	if err := f.env.srv.ChangeLinkOutOfBand(secretID, "https://ops:hunter2@example.com/a"); err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, r := range c.list(listRequest{filters: map[string]tftypes.Value{"include_expired": tftypes.NewValue(tftypes.Bool, true)}}) {
		names[c.ids([]tfprotov6.ListResourceResult{r})[0]] = r.DisplayName
	}
	want := map[string]string{
		f.spring[0]: "https://go.example.test/spring-0 (→ https://example.com/spring/0)",
		f.autumn[1]: "https://promo.example.test/autumn-1 (→ https://example.com/autumn/1)",
		f.expired:   "https://go.example.test/spring-old (→ https://example.com/old, expired 2020-01-31)",
		longID:      "https://go.example.test/long-0 (→ " + long[:maxDisplayedDestination-1] + "…)",
		secretID:    "https://go.example.test/secret-0 (→ https://…@example.com/a)",
	}
	for id, name := range want {
		if names[id] != name {
			t.Errorf("display name of %s is %q, want %q", id, names[id], name)
		}
	}
}

// With include_resource, each result carries exactly the state an import
// of the link followed by a refresh records (what makes the configuration
// `terraform query -generate-config-out` writes plan clean); without, none.
func TestListResource_includeResource(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	for _, r := range c.list(listRequest{}) {
		if r.Resource != nil {
			t.Fatalf("result %q carries a resource without include_resource", r.DisplayName)
		}
	}
	results := c.list(listRequest{includeResource: true, filters: map[string]tftypes.Value{"include_expired": tftypes.NewValue(tftypes.Bool, true)}})
	ids := c.ids(results)
	if len(ids) != len(f.all)+1 {
		t.Fatalf("listed %d links, want %d", len(ids), len(f.all)+1)
	}
	for i, r := range results {
		if r.Resource == nil {
			t.Fatalf("result %q has no resource with include_resource", r.DisplayName)
		}
		listed, err := r.Resource.Unmarshal(c.resource)
		if err != nil {
			t.Fatal(err)
		}
		imported := c.importAndRead(ids[i])
		if !listed.Equal(imported) {
			diffs, _ := listed.Diff(imported)
			t.Errorf("the listed state of %s differs from an imported one: %v", ids[i], diffs)
		}
	}
	var attrs map[string]tftypes.Value
	decode(t, results[slices.Index(ids, f.utm)].Resource, c.resource, &attrs)
	var utm map[string]tftypes.Value
	if err := attrs["utm"].As(&utm); err != nil || !utm["source"].Equal(str("newsletter")) {
		t.Errorf("the listed link %s has utm %v, want source newsletter", f.utm, attrs["utm"])
	}
}

// importAndRead imports a link by ID and refreshes it, as Terraform does
// for an import block, and returns the state.
func (c *listClient) importAndRead(id string) tftypes.Value {
	c.t.Helper()
	ctx := context.Background()
	imp, err := c.server.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: "shortlink_link", ID: id})
	if err != nil || len(imp.Diagnostics) > 0 || len(imp.ImportedResources) != 1 {
		c.t.Fatalf("ImportResourceState(%s): %v %v", id, err, diagnosticsText(imp.Diagnostics))
	}
	in := imp.ImportedResources[0]
	read, err := c.server.ReadResource(ctx, &tfprotov6.ReadResourceRequest{
		TypeName: "shortlink_link", CurrentState: in.State, Private: in.Private, CurrentIdentity: in.Identity,
	})
	if err != nil || len(read.Diagnostics) > 0 {
		c.t.Fatalf("ReadResource(%s): %v %v", id, err, diagnosticsText(read.Diagnostics))
	}
	if got := c.attr(read.NewIdentity.IdentityData, c.identity, "id"); got != id {
		c.t.Fatalf("the refreshed identity of %s is %q", id, got)
	}
	v, err := read.NewState.Unmarshal(c.resource)
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// An account of 1,000 links over 10 pages is listed whole, from two
// listings (the second finds what another client's changes made the first
// skip), which later list blocks of the same run share.
func TestListResource_oneListingOfManyPages(t *testing.T) {
	e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = "cursor", 100 })
	want := seededIDs(t, e, e.fx.DomainID, "bulk", 1000)
	c := newListClient(t)
	c.configure(e.url, e.fx.APIKey)
	e.srv.ResetCounts()
	if got := c.ids(c.list(listRequest{includeResource: true})); !slices.Equal(got, want) {
		t.Fatalf("listed %d links, want all %d in order", len(got), len(want))
	}
	if n := e.srv.Count(http.MethodGet, "/api/links"); n != 20 {
		t.Fatalf("the listing sent %d list requests, want 20 (one per page, twice)", n)
	}
	if got := c.ids(c.list(listRequest{filters: map[string]tftypes.Value{"slug_prefix": str("bulk-99")}})); len(got) != 11 {
		t.Fatalf("a second list block found %d links with slug prefix bulk-99, want 11 (bulk-99, bulk-990…999)", len(got))
	}
	if n := e.srv.Count(http.MethodGet, "/api/links"); n != 20 {
		t.Fatalf("a second list block listed again (%d list requests in all); it should share the listing", n)
	}
}

// Another client that deletes its links while the account is listed by
// offset shifts the rest toward the start, and one link falls between
// each two pages: every link that was there throughout is still listed.
// The account is listed until a listing shows no deletes under way; where
// four do not, the stream opens with a warning that links may be missing.
func TestListResource_othersDeletingMeanwhileHideNoLink(t *testing.T) {
	for name, tc := range map[string]struct {
		others int // the other client deletes 3 before each page but the first: 21 per listing of 8 pages
		warns  bool
	}{
		"deletes that end":  {others: 30},
		"deletes all along": {others: 300, warns: true},
	} {
		t.Run(name, func(t *testing.T) {
			e := newTestEnv(t, func(s *emulator.Settings) { s.Variants.Paging, s.Variants.PageSize = "offset", 100 })
			if err := e.srv.AddOtherClientLinks(e.fx.AccountID, tc.others); err != nil {
				t.Fatal(err)
			}
			want := seededIDs(t, e, e.fx.DomainID, "mine", 500)
			if err := e.srv.UpdateSettings(func(s *emulator.Settings) { s.Churn = emulator.Churn{Delete: 3} }); err != nil {
				t.Fatal(err)
			}
			c := newListClient(t)
			c.configure(e.url, e.fx.APIKey)
			results := c.list(listRequest{limit: 1000, filters: map[string]tftypes.Value{"slug_prefix": str("mine-")}})
			if warned := len(results) > 0 && len(results[0].Diagnostics) > 0; warned != tc.warns {
				t.Fatalf("the stream opens with a warning: %v, want %v (%d list requests)", warned, tc.warns, e.srv.Count(http.MethodGet, "/api/links"))
			}
			if tc.warns {
				if d := results[0].Diagnostics; len(d) != 1 || d[0].Severity != tfprotov6.DiagnosticSeverityWarning || d[0].Summary != "Links may be missing" {
					t.Fatalf("first result: %v, want the warning that links may be missing", diagnosticsText(d))
				}
				results = results[1:]
			}
			got := c.ids(results)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) { // each once: the union has no link twice
				t.Fatalf("listed %d links; want the %d that were there throughout, each once", len(got), len(want))
			}
		})
	}
}

// A domain_id on which the account has no link at all is most likely
// copied wrong: the stream ends with a warning on domain_id. A domain with
// links that the other filters exclude is an empty result, not a warning.
func TestListResource_noLinkOnDomain(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	results := c.list(listRequest{filters: map[string]tftypes.Value{"domain_id": str("0b7c1f2e-0000-4000-8000-000000000000")}})
	if len(results) != 1 || results[0].Identity != nil || len(results[0].Diagnostics) != 1 {
		t.Fatalf("want one result carrying only a warning; got %+v", results)
	}
	d := results[0].Diagnostics[0]
	if d.Severity != tfprotov6.DiagnosticSeverityWarning || d.Summary != "No link on this domain" ||
		!d.Attribute.Equal(tftypes.NewAttributePath().WithAttributeName("domain_id")) || !strings.Contains(d.Detail, "None of the account's 8 links") {
		t.Fatalf("want the warning No link on this domain on domain_id; got %s", diagnosticsText(results[0].Diagnostics))
	}
	filtered := c.list(listRequest{filters: map[string]tftypes.Value{"domain_id": str(f.otherDomain), "slug_prefix": str("spring-")}})
	if len(filtered) != 0 {
		t.Fatalf("a domain with links that other filters exclude gave %d results: %+v", len(filtered), filtered)
	}
}

// A listing that waited for the read rate limit opens the stream with a
// warning that says so, before the links (terraform query shows it once
// the query is done): the query is otherwise silent about its wait.
func TestListResource_readRateLimitWait(t *testing.T) {
	t.Parallel() // it waits about 9 s
	e := newTestEnv(t, func(s *emulator.Settings) {
		s.Limits.Read, s.Limits.Window = 1, emulator.Duration(3*time.Second)
		s.Variants.Paging, s.Variants.PageSize = "cursor", 2
	})
	want := seededIDs(t, e, e.fx.DomainID, "dashboard", 3)
	c := newListClient(t)
	c.configure(e.url, e.fx.APIKey)
	results := c.list(listRequest{})
	if len(results) != len(want)+1 || len(results[0].Diagnostics) != 1 || results[0].Identity != nil {
		t.Fatalf("want a warning, then %d links; got %d results: %+v", len(want), len(results), results)
	}
	if d := results[0].Diagnostics[0]; d.Severity != tfprotov6.DiagnosticSeverityWarning || d.Summary != "Waited for the rate limit" ||
		!strings.Contains(d.Detail, "for the service's read rate limit") {
		t.Fatalf("want the warning that the listing waited for the read rate limit; got %s", diagnosticsText(results[0].Diagnostics))
	}
	if got := c.ids(results[1:]); !slices.Equal(got, want) {
		t.Fatalf("listed %v, want %v", got, want)
	}
}

// Terraform passes the list block's limit (100 by default); no more
// results than that are sent, and a warning first says how many more
// match.
func TestListResource_limit(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	results := c.list(listRequest{limit: 2})
	if len(results) == 0 || len(results[0].Diagnostics) != 1 || results[0].Identity != nil {
		t.Fatalf("limit 2: want a warning first; got %+v", results)
	}
	want := fmt.Sprintf("%d links match the filters; the list block's limit lists the first 2", len(f.all))
	if d := results[0].Diagnostics[0]; d.Severity != tfprotov6.DiagnosticSeverityWarning || !strings.Contains(d.Detail, want) {
		t.Fatalf("limit 2: want the warning %q; got %s", want, diagnosticsText(results[0].Diagnostics))
	}
	if got := c.ids(results[1:]); !slices.Equal(got, f.all[:2]) {
		t.Fatalf("limit 2 listed %v, want %v", got, f.all[:2])
	}
	if got := c.ids(c.list(listRequest{limit: 100})); !slices.Equal(got, f.all) {
		t.Fatalf("limit 100 listed %v, want all %v", got, f.all)
	}
}

// A filter that cannot match is an error on its attribute, at validation
// and (should a request come unvalidated) in the stream, before any
// request to the service.
func TestListResource_invalidFilters(t *testing.T) {
	f := newListFixture(t)
	c := f.client(t)
	for _, tc := range []struct{ attr, value, detail string }{
		{"domain_id", "promo.example.test", "is not a UUID"},
		{"slug_prefix", "spring/", "contains '/'"},
		{"slug_prefix", "", "remove it to match every slug"},
		{"destination_host", "https://shop.example.com/sale", `write only its host, "shop.example.com"`},
		{"destination_host", "shop.example.com:8443", `write "shop.example.com"`},
	} {
		t.Run(tc.attr+"="+tc.value, func(t *testing.T) {
			filters := map[string]tftypes.Value{tc.attr: str(tc.value)}
			expectAttributeError(t, c.validate(filters), tc.attr, tc.detail)
			f.env.srv.ResetCounts()
			results := c.list(listRequest{filters: filters})
			if len(results) != 1 {
				t.Fatalf("got %d results, want one carrying the error", len(results))
			}
			expectAttributeError(t, results[0].Diagnostics, tc.attr, tc.detail)
			if n := f.env.srv.TotalRequests(); n != 0 {
				t.Fatalf("an invalid filter sent %d requests", n)
			}
		})
	}
	unknown := map[string]tftypes.Value{"domain_id": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}
	expectAttributeError(t, c.list(listRequest{filters: unknown})[0].Diagnostics, "domain_id", "must be known when the query runs")
}

func expectAttributeError(t *testing.T, diags []*tfprotov6.Diagnostic, attr, detail string) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError && d.Attribute.Equal(tftypes.NewAttributePath().WithAttributeName(attr)) && strings.Contains(d.Detail, detail) {
			return
		}
	}
	t.Fatalf("want an error on %s saying %q; got:\n%s", attr, detail, diagnosticsText(diags))
}

// A service that cannot be listed is one error in the stream, saying
// what to do; never a panic, never an empty list that looks like success.
func TestListResource_serviceErrors(t *testing.T) {
	htmlPage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><h1>Welcome to nginx!</h1></body></html>")
	}))
	t.Cleanup(htmlPage.Close)
	e := newTestEnv(t)
	for _, tc := range []struct {
		name, baseURL, summary, detail string
		fault                          *emulator.Fault
	}{
		{name: "service down", baseURL: "http://" + testsupport.ClosedAddr(t), summary: "Cannot reach the short-link service", detail: "The provider stopped trying, for every operation of this run. Check base_url"},
		{name: "a web page instead of the API", baseURL: htmlPage.URL, summary: "base_url does not lead to the short-link service's API", detail: "stopped sending requests"},
		{name: "503", baseURL: e.url, fault: &emulator.Fault{Kind: emulator.FaultStatus, Status: http.StatusServiceUnavailable}, summary: "Could not list the links", detail: "The service answered 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fault != nil {
				e.srv.InjectFaults(*tc.fault)
			}
			c := newListClient(t)
			c.configure(tc.baseURL, e.fx.APIKey)
			results := c.list(listRequest{includeResource: true})
			if len(results) != 1 || len(results[0].Diagnostics) != 1 || results[0].Identity != nil {
				t.Fatalf("want one result carrying one error; got %d results: %+v", len(results), results)
			}
			d := results[0].Diagnostics[0]
			if d.Severity != tfprotov6.DiagnosticSeverityError || d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) {
				t.Fatalf("want error %q saying %q; got %s", tc.summary, tc.detail, diagnosticsText(results[0].Diagnostics))
			}
		})
	}
}

// A list request before the provider is configured is an error, not a panic.
func TestListResource_unconfigured(t *testing.T) {
	c := newListClient(t)
	results := c.list(listRequest{})
	if len(results) != 1 || !strings.Contains(diagnosticsText(results[0].Diagnostics), "Provider not configured") {
		t.Fatalf("want one result with the error Provider not configured; got %+v", results)
	}
}

// The list resource under the real CLI: `terraform query` needs Terraform
// 1.14 or later, so the CI's Terraform 1.11.4 skips this test; run it with
// TF_ACC_TERRAFORM_PATH pointing at a newer terraform.
func TestAccLinkList_query(t *testing.T) {
	f := newListFixture(t)
	e := f.env
	byID := func(id string) queryfilter.QueryFilter {
		return queryfilter.ByResourceIdentity(map[string]knownvalue.Check{"id": knownvalue.StringExact(id)})
	}
	// The query steps' configurations hold only list blocks: the provider
	// block of the first step's configuration, which stays in the working
	// directory, configures the queries too.
	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: protoV6Providers,
		Steps: []resource.TestStep{
			{
				// A link managed here: the query lists it with the others.
				Config: e.linkConfig(`
  destination = "https://example.com/managed"
  slug        = "managed"`),
			},
			{
				Query:  true,
				Config: testConfig(t, "link_list_query.tf.tmpl", f.otherDomain),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("shortlink_link.all", len(f.all)+1),
					querycheck.ExpectLength("shortlink_link.spring", len(f.spring)),
					querycheck.ExpectIdentity("shortlink_link.spring", map[string]knownvalue.Check{"id": knownvalue.StringExact(f.spring[2])}),
					querycheck.ExpectLength("shortlink_link.promo", len(f.autumn)),
					querycheck.ExpectIdentity("shortlink_link.promo", map[string]knownvalue.Check{"id": knownvalue.StringExact(f.autumn[0])}),
					querycheck.ExpectLength("shortlink_link.shop", 1),
					querycheck.ExpectLength("shortlink_link.first_two", 2),
					querycheck.ExpectResourceDisplayName("shortlink_link.all", byID(f.spring[0]),
						knownvalue.StringExact("https://go.example.test/spring-0 (→ https://example.com/spring/0)")),
					querycheck.ExpectResourceKnownValues("shortlink_link.all", byID(f.utm), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("slug"), KnownValue: knownvalue.StringExact("news")},
						{Path: tfjsonpath.New("utm").AtMapKey("source"), KnownValue: knownvalue.StringExact("newsletter")},
						{Path: tfjsonpath.New("short_url"), KnownValue: knownvalue.StringExact("https://go.example.test/news")},
					}),
				},
			},
			{
				Query: true,
				Config: `
list "shortlink_link" "bad" {
  provider = shortlink
  config {
    destination_host = "https://shop.example.com/sale"
  }
}
`,
				ExpectError: regexp.MustCompile(`destination_host\s+"https://shop\.example\.com/sale"\s+is\s+a\s+URL;\s+write\s+only\s+its\s+host`),
			},
		},
	})
}
