package planmodify

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The comparison itself is links.SameRFC3339Instant's, tested there; this
// is what the plan modifier makes of it.
func TestOtherInstant(t *testing.T) {
	at := types.StringValue
	tests := []struct {
		state, plan types.String
		replace     bool
	}{
		{at("2027-03-31T23:59:59Z"), at("2027-04-01T01:59:59+02:00"), false},
		{at("2027-03-31T23:59:59.123Z"), at("2027-04-01T01:59:59.123456+02:00"), false},
		{at("2027-03-31T23:59:59Z"), at("2027-03-31T23:59:58Z"), true},
		{types.StringNull(), at("2027-03-31T23:59:59Z"), true},
		{at("2027-03-31T23:59:59Z"), types.StringNull(), true},
	}
	for _, tt := range tests {
		var resp stringplanmodifier.RequiresReplaceIfFuncResponse
		otherInstant(context.Background(), planmodifier.StringRequest{StateValue: tt.state, PlanValue: tt.plan}, &resp)
		if resp.RequiresReplace != tt.replace {
			t.Errorf("state %s, plan %s: RequiresReplace = %v, want %v", tt.state, tt.plan, resp.RequiresReplace, tt.replace)
		}
	}
}

// client.SameID is tested in its package; this is what the plan modifier
// makes of it.
func TestOtherID(t *testing.T) {
	id := types.StringValue
	tests := []struct {
		state, plan types.String
		replace     bool
	}{
		{id("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"), id("2F1C6A1E-8D3B-4C2A-9F0E-1B2C3D4E5F60"), false},
		{id("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"), id("3f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"), true},
		{id("2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60"), types.StringUnknown(), true},
	}
	for _, tt := range tests {
		var resp stringplanmodifier.RequiresReplaceIfFuncResponse
		otherID(context.Background(), planmodifier.StringRequest{StateValue: tt.state, PlanValue: tt.plan}, &resp)
		if resp.RequiresReplace != tt.replace {
			t.Errorf("state %s, plan %s: RequiresReplace = %v, want %v", tt.state, tt.plan, resp.RequiresReplace, tt.replace)
		}
	}
}

// privateOf is a private state holding one key's value.
type privateOf map[string][]byte

func (p privateOf) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

// A recorded expiry is taken only when it is a time: anything else (none
// recorded, a link without expiry, a value not this provider's) leaves the
// state's to decide, and never reaches a constructor that would panic.
func TestKeptExpiry(t *testing.T) {
	for raw, want := range map[string]string{
		`"2027-03-31T22:00:00Z"`:      "2027-03-31T22:00:00Z",
		`"2027-03-31T22:00:00.5Z"`:    "2027-03-31T22:00:00.5Z",
		`""`:                          "",
		`"soon"`:                      "",
		`"2027-03-31T22:00:00+24:00"`: "",
		`42`:                          "",
		``:                            "",
	} {
		got, ok := KeptExpiry(context.Background(), privateOf{KeptExpiryKey: []byte(raw)})
		if got != want || ok != (want != "") {
			t.Errorf("KeptExpiry(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
}
