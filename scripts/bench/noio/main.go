// Command terraform-provider-noio is a provider that does no I/O, with
// shortlink_link's schema and identity as noio_link: the floor of the
// benchmarks (scripts/bench), what the Terraform plugin framework alone
// costs for the same resources. Create makes up the computed values, Read
// keeps the state, Update takes the plan, Delete forgets. It is built by
// the benchmark; it is not shipped and has no documentation.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	shortlink "github.com/shortlink/terraform-provider-shortlink/internal/provider"
)

// Address is where the benchmark's CLI configuration finds the provider.
const Address = "registry.terraform.io/shortlink/noio"

func main() {
	if err := providerserver.Serve(context.Background(), newProvider, providerserver.ServeOpts{Address: Address}); err != nil {
		log.Fatal(err)
	}
}

type noioProvider struct{}

var _ provider.Provider = noioProvider{}

func newProvider() provider.Provider { return noioProvider{} }

func (noioProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "noio"
}

func (noioProvider) Schema(context.Context, provider.SchemaRequest, *provider.SchemaResponse) {}

func (noioProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (noioProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{func() resource.Resource { return linkResource{} }}
}

func (noioProvider) DataSources(context.Context) []func() datasource.DataSource { return nil }

// linkResource is noio_link.
type linkResource struct{}

var _ resource.ResourceWithIdentity = linkResource{}

func (linkResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_link"
}

func (linkResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = shortlink.LinkResourceSchema(ctx)
}

func (linkResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = shortlink.LinkIdentitySchema()
}

// Create fills the computed attributes as the service would: an ID and a
// slug derived from the destination (the same configuration makes the
// same values), the short URL, the QR code's URL and the creation time.
func (linkResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var slug, destination types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("slug"), &slug)...)
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("destination"), &destination)...)
	if resp.Diagnostics.HasError() {
		return
	}
	sum := sha256.Sum256([]byte(slug.String() + destination.ValueString()))
	id := hex.EncodeToString(sum[:16])
	if slug.IsUnknown() {
		slug = types.StringValue(id[:8])
	}
	resp.State.Raw = req.Plan.Raw
	for name, value := range map[string]any{
		"id":          types.StringValue(id),
		"slug":        slug,
		"short_url":   types.StringValue("https://noio.example/" + slug.ValueString()),
		"qr_code_url": types.StringValue("https://noio.example/qr/" + slug.ValueString() + ".png"),
		"created_at":  timetypes.NewRFC3339ValueMust("2026-01-01T00:00:00Z"),
	} {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), value)...)
	}
	resp.Diagnostics.Append(resp.Identity.SetAttribute(ctx, path.Root("id"), types.StringValue(id))...)
}

// Read keeps the state, which the framework has copied into the response,
// and records the identity, as shortlink_link does on every read.
func (linkResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var id types.String
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &id)...)
	resp.Diagnostics.Append(resp.Identity.SetAttribute(ctx, path.Root("id"), id)...)
}

// Update takes the plan: only destination and utm change in place, and the
// computed attributes keep their state values (UseStateForUnknown).
func (linkResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw
}

func (linkResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {}
