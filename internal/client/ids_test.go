package client

import "testing"

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		"2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60": true,
		"2F1C6A1E-8D3B-4C2A-9F0E-1B2C3D4E5F60": true,
		"2f1c6a1e8d3b4c2a9f0e1b2c3d4e5f60":     false, // no dashes
		"2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f6":  false, // short
		"2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f6g": false, // not hex
		"2f1c6a1e-8d3b-4c2a-9f0e_1b2c3d4e5f60": false, // a dash out of place
		"":                                     false,
	} {
		if got := IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %t, want %t", s, got, want)
		}
	}
}

// A UUID names one link in any case; an ID of another form is the
// service's own and only the same string is the same ID.
func TestSameID(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "2F1C6A1E-8D3B-4C2A-9F0E-1B2C3D4E5F60", true},
		{"2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f61", false},
		{"lnk_AbC", "lnk_abc", false},
		{"lnk_AbC", "lnk_AbC", true},
	} {
		if got := SameID(c.a, c.b); got != c.want {
			t.Errorf("SameID(%q, %q) = %t, want %t", c.a, c.b, got, c.want)
		}
	}
}
