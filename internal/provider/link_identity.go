package provider

import (
	"context"

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
		addImportNamesNothing(diags)
		return "", false
	}
	var id types.String
	diags.Append(identity.GetAttribute(ctx, path.Root("id"), &id)...)
	if diags.HasError() {
		return "", false
	}
	if id.IsNull() || id.IsUnknown() || !client.IsUUID(id.ValueString()) {
		addIdentityNotALinkID(diags, id.String())
		return "", false
	}
	return id.ValueString(), true
}
