package provider

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/shortlink/terraform-provider-shortlink/internal/links"
)

// instantType is the type of the attributes that take a point in time
// (expires_at, since, until): timetypes.RFC3339, with its semantic
// equality (two spellings of one instant are no change), and an error that
// says what to write instead of the parser's.
type instantType struct{ timetypes.RFC3339Type }

// instantValue is a value of instantType.
type instantValue struct{ timetypes.RFC3339 }

var (
	_ basetypes.StringTypable                    = instantType{}
	_ basetypes.StringValuableWithSemanticEquals = instantValue{}
	_ xattr.ValidateableAttribute                = instantValue{}
)

func (instantType) String() string { return "provider.instantType" }

func (instantType) ValueType(context.Context) attr.Value { return instantValue{} }

func (instantType) Equal(o attr.Type) bool {
	_, ok := o.(instantType)
	return ok
}

func (instantType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return instantValue{timetypes.RFC3339{StringValue: in}}, nil
}

func (t instantType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return instantValue{timetypes.RFC3339{StringValue: s}}, nil
}

func (instantValue) Type(context.Context) attr.Type { return instantType{} }

func (v instantValue) Equal(o attr.Value) bool {
	other, ok := o.(instantValue)
	return ok && v.StringValue.Equal(other.StringValue)
}

func (v instantValue) StringSemanticEquals(ctx context.Context, o basetypes.StringValuable) (bool, diag.Diagnostics) {
	other, ok := o.(instantValue)
	if !ok {
		return false, nil
	}
	return v.capitals().StringSemanticEquals(ctx, other.capitals())
}

// ValidateAttribute replaces timetypes' check, whose error quotes the
// parser ("cannot parse "" as "Z07:00""), with one that says what to write.
func (v instantValue) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() {
		return
	}
	if _, err := links.ParseRFC3339(v.ValueString()); err != nil {
		addInvalidInstant(&resp.Diagnostics, req.Path, v.ValueString())
	}
}

// ValueRFC3339Time is the instant, read as links.ParseRFC3339 reads it
// (timetypes' own does not take a lower-case t or z).
func (v instantValue) ValueRFC3339Time() (time.Time, diag.Diagnostics) {
	return v.capitals().ValueRFC3339Time()
}

// capitals is v as timetypes reads it: RFC 3339 in capitals.
func (v instantValue) capitals() timetypes.RFC3339 {
	if v.IsNull() || v.IsUnknown() {
		return v.RFC3339
	}
	return timetypes.RFC3339{StringValue: basetypes.NewStringValue(strings.ToUpper(v.ValueString()))}
}

func instantNull() instantValue { return instantValue{timetypes.NewRFC3339Null()} }
