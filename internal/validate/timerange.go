package validate

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/shortlink/terraform-provider-shortlink/internal/links"
)

// LaterThan accepts an RFC 3339 time later than the one in the attribute
// at start, the other end of a range that includes its start and excludes
// its end: a range that ends where (or before) it starts selects nothing,
// which is a mistake rather than a question. Values that are not RFC 3339
// are left to the attribute's type to report.
func LaterThan(start path.Expression) validator.String { return laterThan{start: start} }

type laterThan struct{ start path.Expression }

var _ validator.String = laterThan{}

func (v laterThan) Description(context.Context) string {
	return fmt.Sprintf("must be later than %s", v.start)
}

func (v laterThan) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v laterThan) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	end, ok := parseRFC3339(req.ConfigValue)
	if !ok {
		return
	}
	paths, diags := req.Config.PathMatches(ctx, req.PathExpression.Merge(v.start))
	resp.Diagnostics.Append(diags...)
	for _, p := range paths {
		var value attr.Value
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, p, &value)...)
		s, isString := value.(basetypes.StringValuable)
		if !isString {
			continue
		}
		sv, _ := s.ToStringValue(ctx)
		start, ok := parseRFC3339(sv)
		if ok && !end.After(start) {
			resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String(),
				fmt.Sprintf("%s (%s) must be later than %s (%s): the range includes %s and excludes %s, so it would select nothing.",
					req.Path, req.ConfigValue.ValueString(), p, sv.ValueString(), p, req.Path))
		}
	}
}

func parseRFC3339(v basetypes.StringValue) (time.Time, bool) {
	if v.IsNull() || v.IsUnknown() {
		return time.Time{}, false
	}
	t, err := links.ParseRFC3339(v.ValueString())
	return t, err == nil
}

// SentTime accepts a time that is sent to the service (expires_at): the
// spec writes times in UTC with a four-digit year, so one whose UTC year
// is below 0000 or above 9999 has no spelling there. Values that are not
// RFC 3339 are left to the attribute's type to report.
func SentTime() validator.String {
	return stringCheck{description: "must fall within the years 0000 to 9999 once converted to UTC", check: sentTimeProblem}
}

func sentTimeProblem(v string) string {
	t, err := links.ParseRFC3339(v)
	if y := t.UTC().Year(); err != nil || y >= 0 && y <= 9999 {
		return ""
	}
	return fmt.Sprintf("is %q, which is %s in UTC: the service takes times in UTC, from the year 0000 to 9999. Write a time within those years once converted to UTC.",
		v, t.UTC().Format(time.RFC3339))
}
