package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

func instantFrom(s string) instantValue {
	return instantValue{timetypes.RFC3339{StringValue: basetypes.NewStringValue(s)}}
}

// The semantics of timetypes.RFC3339 are kept: two spellings of one
// instant in one offset are equal in meaning (no change planned), not in
// value; another instant is neither. (Other offsets of one instant are
// told apart by the plan modifier of expires_at.)
func TestInstant_semanticEquality(t *testing.T) {
	ctx := context.Background()
	utc := instantFrom("2027-01-05T22:59:59Z")
	for other, want := range map[string]bool{"2027-01-05T22:59:59.000Z": true, "2027-01-05t22:59:59z": true, "2027-01-05T23:59:59Z": false} {
		got, diags := utc.StringSemanticEquals(ctx, instantFrom(other))
		if diags.HasError() || got != want {
			t.Errorf("%s vs %s: equal %v (%v), want %v", utc.ValueString(), other, got, diags, want)
		}
	}
	if utc.Equal(instantFrom("2027-01-05T22:59:59.000Z")) {
		t.Error("two spellings are Equal as values; Terraform would lose the configured one")
	}
}

// A value that is not RFC 3339 is an error on its attribute that says what
// to write; null, unknown and valid values pass.
func TestInstant_validation(t *testing.T) {
	ctx := context.Background()
	at := path.Root("expires_at")
	// RFC 3339 lets the T and Z be written in lower case (section 5.6).
	for _, v := range []instantValue{instantNull(), {timetypes.NewRFC3339Unknown()}, instantFrom("2027-01-05T23:59:59Z"), instantFrom("2027-01-05t23:59:59.5z")} {
		var resp xattr.ValidateAttributeResponse
		v.ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: at}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%v: %v", v, resp.Diagnostics)
		}
	}
	var resp xattr.ValidateAttributeResponse
	instantFrom("2027-01-05T23:59:59").ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: at}, &resp)
	if len(resp.Diagnostics) != 1 || !resp.Diagnostics[0].(interface{ Path() path.Path }).Path().Equal(at) || !strings.Contains(resp.Diagnostics[0].Detail(), "no time zone") {
		t.Fatalf("got %v, want one error on expires_at saying the zone is missing", resp.Diagnostics)
	}
	// Any RFC 3339 time is one: the years the service takes are the
	// concern of the attribute that is sent (validate.SentTime), not of
	// the filters (since, until) that use the type too.
	for _, v := range []string{"9999-12-31T23:59:59-01:00", "0000-01-01T00:30:00+01:00"} {
		var resp xattr.ValidateAttributeResponse
		if instantFrom(v).ValidateAttribute(ctx, xattr.ValidateAttributeRequest{Path: at}, &resp); resp.Diagnostics.HasError() {
			t.Errorf("%s: %v", v, resp.Diagnostics)
		}
	}
}

// The type reads Terraform's values into its own value type, so that the
// framework's semantic equality and validation reach them.
func TestInstant_fromTerraform(t *testing.T) {
	v, err := instantType{}.ValueFromTerraform(context.Background(), tftypes.NewValue(tftypes.String, "2027-01-05T23:59:59Z"))
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := v.(instantValue); !ok || got.ValueString() != "2027-01-05T23:59:59Z" || !got.Type(context.Background()).Equal(instantType{}) {
		t.Fatalf("got %#v", v)
	}
}
