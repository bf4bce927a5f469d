package links

import (
	"testing"
	"time"
)

func TestSameRFC3339Instant(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"2027-03-31T23:59:59Z", "2027-04-01T01:59:59+02:00", true},
		{"2027-03-31T23:59:59.500Z", "2027-04-01T01:59:59.5+02:00", true},
		// The service kept fewer digits (milliseconds, whole seconds).
		{"2027-04-01T01:59:59.123456+02:00", "2027-03-31T23:59:59.123Z", true},
		{"2027-03-31T23:59:59.123Z", "2027-04-01T01:59:59.123456+02:00", true},
		{"2027-03-31T23:59:59.75Z", "2027-03-31T23:59:59Z", true},
		{"2027-03-31T23:59:59.75Z", "2027-04-01T00:00:00Z", true}, // rounded
		{"2027-03-31T23:59:59.123456789Z", "2027-03-31T23:59:59.123457Z", true},
		// Within the millisecond the provider sends: the same request.
		{"2030-01-01T00:00:00.123456789Z", "2030-01-01T00:00:00.123999Z", true},
		{"2030-01-01T00:00:00.0001Z", "2030-01-01T01:00:00.0009+01:00", true},
		{"2030-01-01T00:00:00.9999Z", "2030-01-01T00:00:01Z", true}, // rounded to the second, as a service may keep it
		{"2030-01-01T00:00:00.1239Z", "2030-01-01T00:00:00.1241Z", false},
		// A whole second written is no fraction kept: the service would
		// keep the whole second.
		{"2027-03-31T23:59:59Z", "2027-03-31T23:59:59.750Z", false},
		{"2027-04-01T00:00:00Z", "2027-03-31T23:59:59.75Z", false},
		// Other instants.
		{"2027-03-31T23:59:59Z", "2027-03-31T23:59:58Z", false},
		{"2027-03-31T23:59:59.123Z", "2027-03-31T23:59:59.124Z", false},
		{"2027-03-31T23:59:59.5Z", "2027-03-31T23:59:58Z", false},
		{"2027-03-31T23:59:59.123Z", "2027-03-31T23:59:59.12Z", false}, // 120 ms is no rounding of 123 ms
		{"2027-03-31T23:59:59Z", "not a time", false},
	}
	for _, tt := range tests {
		if got := SameRFC3339Instant(tt.a, tt.b); got != tt.same {
			t.Errorf("SameRFC3339Instant(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// Offsets are RFC 3339's, -23:59 to +23:59, though Go's parser takes more;
// the T and the Z may be written in lower case.
func TestParseRFC3339(t *testing.T) {
	for value, valid := range map[string]bool{
		"2030-01-01T00:00:00Z":          true,
		"2030-01-01t00:00:00.5z":        true,
		"2030-01-01T00:00:00+23:59":     true,
		"2030-01-01T00:00:00-23:59":     true,
		"2030-01-01T00:00:00.123+05:30": true,
		"2030-01-01T00:00:00+24:00":     false,
		"2030-01-01T00:00:00-24:00":     false,
		"2030-01-01T00:00:00+23:60":     false,
		"2030-01-01T00:00:00+00:60":     false,
		"2030-01-01T00:00:00":           false,
	} {
		if _, err := ParseRFC3339(value); (err == nil) != valid {
			t.Errorf("ParseRFC3339(%q): error %v, want valid %v", value, err, valid)
		}
	}
}

func TestSameInstantIsAboutTheAnswer(t *testing.T) {
	written := time.Date(2027, 3, 31, 23, 59, 59, 0, time.UTC)
	answered := written.Add(500 * time.Millisecond)
	if SameInstant(written, answered) {
		t.Error("an answer more precise than what was written is another instant")
	}
	if !SameInstant(answered, written) {
		t.Error("an answer at whole seconds of what was written is the same instant")
	}
}
