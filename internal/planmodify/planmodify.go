// Package planmodify holds the provider's plan modifiers.
package planmodify

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
	"github.com/shortlink/terraform-provider-shortlink/internal/links"
)

// RequiresReplaceIfOtherInstant replaces the resource when an RFC 3339
// attribute names another instant. A new spelling of the same instant
// ("2027-03-31T23:59:59Z" written as "2027-04-01T01:59:59+02:00") is only an
// in-place change of the stored spelling, never a new link.
func RequiresReplaceIfOtherInstant() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(otherInstant,
		"Changing the instant replaces the link; a new spelling of the same instant does not.",
		"Changing the instant replaces the link; a new spelling of the same instant does not.")
}

func otherInstant(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	kept := req.StateValue.ValueString()
	if k, ok := KeptExpiry(ctx, req.Private); ok && !req.StateValue.IsNull() {
		kept = k
	}
	resp.RequiresReplace = !links.SameRFC3339Instant(req.PlanValue.ValueString(), kept) || req.PlanValue.IsNull() || req.StateValue.IsNull()
}

// KeptExpiryKey names, in a link's private state, the expiry the service
// answered at the last refresh. The state may hold another spelling: the
// configuration's, kept where the service holds the instant at another
// precision, or recorded by a change of spelling that sent nothing. A
// new expiry is compared with what the service holds, so that a value
// the service never got does not decide a replacement.
const KeptExpiryKey = "kept_expires_at"

// privateReader is a resource's private state, as far as it is read here.
type privateReader interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// KeptExpiry is the expiry recorded under KeptExpiryKey, when one is.
func KeptExpiry(ctx context.Context, private privateReader) (string, bool) {
	raw, _ := private.GetKey(ctx, KeptExpiryKey)
	var kept string
	if len(raw) == 0 || json.Unmarshal(raw, &kept) != nil {
		return "", false
	}
	if _, err := links.ParseRFC3339(kept); err != nil {
		return "", false // none recorded, or not by this provider: the state's decides
	}
	return kept, true
}

// RequiresReplaceIfOtherID replaces the resource when a UUID attribute
// names another object. The same UUID in other letter case (the service's
// lower case after an import, the dashboard's capitals in the
// configuration) names the same domain: only the stored spelling changes.
func RequiresReplaceIfOtherID() planmodifier.String {
	return stringplanmodifier.RequiresReplaceIf(otherID,
		"Changing the ID replaces the link; the same ID in other letter case does not.",
		"Changing the ID replaces the link; the same ID in other letter case does not.")
}

func otherID(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = req.PlanValue.IsUnknown() || !client.SameID(req.StateValue.ValueString(), req.PlanValue.ValueString())
}
