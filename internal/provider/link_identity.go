package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// A link's identity is its ID: the only thing the service never changes
// about a link (slug and domain stay too, but a replacement reuses them for
// a different link), and what the list resource and an import block's
// `identity = { id = … }` name it by. Terraform 1.12 and later, and
// OpenTofu 1.12 and later, store it next to the state.

var _ resource.ResourceWithIdentity = (*linkResource)(nil)

// linkIdentityModel is shortlink_link's identity.
type linkIdentityModel struct {
	ID types.String `tfsdk:"id"`
}

func (r *linkResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = LinkIdentitySchema()
}

// LinkIdentitySchema is shortlink_link's identity schema, exported with
// LinkResourceSchema for the no-I/O provider of the benchmarks.
func LinkIdentitySchema() identityschema.Schema {
	return identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			"id": identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "Identifier of the link (a UUID), as in the resource's id attribute.",
			},
		},
	}
}

// setIdentity records the link's identity. identity is nil only when the
// resource has no identity schema, which the framework never does for this
// resource; the check keeps a future refactoring from panicking.
func setIdentity(ctx context.Context, identity *tfsdk.ResourceIdentity, id types.String, diags *diag.Diagnostics) {
	if identity == nil || id.IsNull() || id.IsUnknown() {
		return
	}
	diags.Append(identity.Set(ctx, linkIdentityModel{ID: id})...)
}

// identityImportID reads the link ID of an import by identity
// (`import { identity = { id = "…" } }`). The ID must be a UUID: the
// <domain_id>/<slug> form is an import ID, not an identity.
func identityImportID(ctx context.Context, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) (string, bool) {
	if identity == nil {
		addImportError(diags, "The import names neither an ID nor an identity. Write `id = \"<link ID>\"` or `identity = { id = \"<link ID>\" }` in the import block.")
		return "", false
	}
	var id types.String
	diags.Append(identity.GetAttribute(ctx, path.Root("id"), &id)...)
	if diags.HasError() {
		return "", false
	}
	if id.IsNull() || id.IsUnknown() || !client.IsUUID(id.ValueString()) {
		addImportError(diags, fmt.Sprintf("The identity's id %s is not a link ID. It must be the UUID of a link, such as 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60 (the resource's id attribute, or, on Terraform 1.14 and later, a result of `terraform query`). To import by domain and slug or by short URL, write `id = \"<domain_id>/<slug>\"` or the short URL instead of identity.", id.String()))
		return "", false
	}
	return id.ValueString(), true
}
