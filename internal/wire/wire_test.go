package wire

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	want := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)
	for _, s := range []string{
		"2027-01-31T23:59:59Z", "2027-01-31T23:59:59.000Z", "2027-01-31T23:59:59.000000000Z",
		"2027-01-31T23:59:59+00:00", "2027-02-01T00:59:59+01:00", "2027-01-31T18:59:59-05:00",
		"2027-01-31T23:59:59+0000", " 2027-01-31T23:59:59Z ", "2027-01-31t23:59:59z",
	} {
		got, err := ParseTime(s)
		if err != nil || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, %v; want %v in UTC", s, got, err, want)
		}
	}
	for _, s := range []string{"2027-01-31", "yesterday", "1700000000", "2027-01-31T23:59:59",
		"0000-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00"} { // years -1 and 10000 in UTC
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) succeeded, want an error", s)
		}
	}
}

// An error quotes the value as it came, never as parsed (in capitals):
// what came may be a key a service echoed, which is searched for as sent.
// It still says which part was out of range.
func TestParseTime_errorQuotesTheValueAsItCame(t *testing.T) {
	for s, want := range map[string]string{
		"sk_live_secretcanary": `"sk_live_secretcanary" is not an RFC 3339 timestamp`,
		"2027-13-05t23:59:59z": `"2027-13-05t23:59:59z" is not an RFC 3339 timestamp: month out of range`,
		"2027-01-32T00:00:00Z": `"2027-01-32T00:00:00Z" is not an RFC 3339 timestamp: day out of range`,
	} {
		if _, err := ParseTime(s); err == nil || err.Error() != want {
			t.Errorf("ParseTime(%q) = %v, want %q", s, err, want)
		}
	}
}

// A snippet is cut at a character boundary, never inside one.
func TestSnippet(t *testing.T) {
	for s, want := range map[string]string{"short": "short", "abcdefghij": "abcde…", "ééé": "éé…"} {
		if got := Snippet(s, 5); got != want {
			t.Errorf("Snippet(%q, 5) = %q, want %q", s, got, want)
		}
	}
	if got := Snippet(strings.Repeat("x", 3), 3); got != "xxx" {
		t.Errorf("a string of exactly n bytes is cut: %q", got)
	}
}
