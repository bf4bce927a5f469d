package validate

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func TestLaterThan(t *testing.T) {
	rangeSchema := schema.Schema{Attributes: map[string]schema.Attribute{
		"since": schema.StringAttribute{Optional: true},
		"until": schema.StringAttribute{Optional: true},
	}}
	value := func(s *string) tftypes.Value {
		if s == nil {
			return tftypes.NewValue(tftypes.String, nil)
		}
		return tftypes.NewValue(tftypes.String, *s)
	}
	str := func(s string) *string { return &s }
	cases := []struct {
		name         string
		since, until *string
		wantErr      string
	}{
		{"later", str("2027-03-01T00:00:00Z"), str("2027-03-02T00:00:00Z"), ""},
		{"later by a millisecond, another offset", str("2027-03-01T10:00:00Z"), str("2027-03-01T12:00:00.001+02:00"), ""},
		{"no since", nil, str("2027-03-02T00:00:00Z"), ""},
		{"no until", str("2027-03-02T00:00:00Z"), nil, ""},
		{"since not a time: left to its type", str("yesterday"), str("2027-03-02T00:00:00Z"), ""},
		{"earlier", str("2027-03-02T00:00:00Z"), str("2027-03-01T00:00:00Z"),
			"until (2027-03-01T00:00:00Z) must be later than since (2027-03-02T00:00:00Z): the range includes since and excludes until, so it would select nothing."},
		{"the same instant, spelled differently", str("2027-03-01T10:00:00Z"), str("2027-03-01T12:00:00+02:00"), "must be later than since"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := tfsdk.Config{Schema: rangeSchema, Raw: tftypes.NewValue(
				tftypes.Object{AttributeTypes: map[string]tftypes.Type{"since": tftypes.String, "until": tftypes.String}},
				map[string]tftypes.Value{"since": value(tc.since), "until": value(tc.until)})}
			until := types.StringNull()
			if tc.until != nil {
				until = types.StringValue(*tc.until)
			}
			var resp validator.StringResponse
			LaterThan(path.MatchRoot("since")).ValidateString(context.Background(), validator.StringRequest{
				Path: path.Root("until"), PathExpression: path.MatchRoot("until"), ConfigValue: until, Config: config,
			}, &resp)
			if tc.wantErr == "" {
				if resp.Diagnostics.HasError() {
					t.Fatalf("unexpected error: %v", resp.Diagnostics)
				}
				return
			}
			if resp.Diagnostics.ErrorsCount() != 1 || !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), tc.wantErr) {
				t.Fatalf("diagnostics %v, want one error containing %q", resp.Diagnostics, tc.wantErr)
			}
		})
	}
}
