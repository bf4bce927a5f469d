// Package planmodify holds the provider's plan modifiers.
package planmodify

import (
	"context"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
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
	resp.RequiresReplace = !SameInstant(req.StateValue.ValueString(), req.PlanValue.ValueString()) || req.PlanValue.IsNull() || req.StateValue.IsNull()
}

// SameInstant reports whether two RFC 3339 timestamps name the same instant,
// whatever their offsets and fractional seconds, one of them possibly kept
// at a coarser precision (see SameTime): after an import the state holds
// the service's spelling, which may have lost the configuration's
// sub-second digits. (timetypes' own semantic equality compares spellings
// at a whole-second UTC offset, so it cannot serve here.)
func SameInstant(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339Nano, a)
	tb, errB := time.Parse(time.RFC3339Nano, b)
	return errA == nil && errB == nil && (SameTime(ta, tb) || SameTime(tb, ta))
}

// SameTime reports whether answered, a timestamp as the service keeps and
// answers it, names the instant written. A service keeps timestamps at some
// precision (the provider itself sends expiresAt with milliseconds; a
// service may answer whole seconds), so answered also matches written
// truncated or rounded to whole microseconds, milliseconds or seconds, when
// answered is itself at that precision.
func SameTime(written, answered time.Time) bool {
	if written.Equal(answered) {
		return true
	}
	for _, p := range []time.Duration{time.Microsecond, time.Millisecond, time.Second} {
		if answered.Truncate(p).Equal(answered) && (written.Truncate(p).Equal(answered) || written.Round(p).Equal(answered)) {
			return true
		}
	}
	return false
}
