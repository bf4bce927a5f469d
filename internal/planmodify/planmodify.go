// Package planmodify holds the provider's plan modifiers.
package planmodify

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"

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

func otherInstant(_ context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	resp.RequiresReplace = !links.SameRFC3339Instant(req.StateValue.ValueString(), req.PlanValue.ValueString()) || req.PlanValue.IsNull() || req.StateValue.IsNull()
}
