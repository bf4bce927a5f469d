package analytics

import (
	"fmt"
	"strings"
	"testing"
)

// find looks a column up by the spellings it lists, in their order of
// preference. Case, '_', '-' and spaces are covered by
// TestSummarizeClicksColumns; these are the rest of the promise.
func TestColumnFind(t *testing.T) {
	tests := []struct {
		name    string
		column  Column
		columns []string
		want    int
	}{
		{"dots are ignored", ClickedAt, []string{"link_id", "Clicked.At"}, 1},
		// created_at may well be when the link was made, not the click: a
		// better spelling later in the header wins over it.
		{"the preferred spelling wins over an earlier column", ClickedAt, []string{"created_at", "link_id", "timestamp"}, 2},
		{"clicked_at is preferred to time", ClickedAt, []string{"time", "clicked_at"}, 1},
		{"referrer is preferred to http_referer", Referrer, []string{"http_referer", "referrer"}, 1},
		{"a name only containing a spelling is not it", LinkID, []string{"parent_link_id", "link_ids", "link"}, -1},
		{"no columns", Referrer, []string{}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.column.find(tt.columns); got != tt.want {
				t.Fatalf("find(%q) = %d, want %d", tt.columns, got, tt.want)
			}
		})
	}
}

// The error for a missing column quotes the header that came back, so that
// the user sees what the service sent instead; that quote must stay
// readable, short and free of secrets.
func TestMissingColumnQuotesTheHeader(t *testing.T) {
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprintf("column_%02d", i))
	}
	tests := []struct {
		name    string
		columns []string
		want    []string // in the message
		notWant []string
	}{
		// Quoted, a comma in a name or an empty name cannot be mistaken
		// for the separators between names.
		{name: "names are quoted", columns: []string{`say "hi"`, "a, b", ""}, want: []string{`columns "say \"hi\"", "a, b", "", none of`}},
		// A service echoing the request may put the API key in its header.
		{name: "the header is redacted", columns: []string{"clicked_at", "key-s3cret"}, want: []string{`"key-[REDACTED]"`}, notWant: []string{"s3cret"}},
		{
			name: "a long header is cut", columns: many,
			want:    []string{`"column_00", "column_01"`, "…, none of which holds the link of each click (looked for link_id, short_link_id)"},
			notWant: []string{"column_99"},
		},
	}
	redact := func(s string) string { return strings.ReplaceAll(s, "s3cret", "[REDACTED]") }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := missingColumn(tt.columns, LinkID, redact).Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message lacks %q:\n%s", w, msg)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("message holds %q:\n%s", w, msg)
				}
			}
		})
	}
}

// hasRole tells Read whether the reading needs the time of each click, and
// so whether to parse it.
func TestHasRole(t *testing.T) {
	tests := []struct {
		name  string
		roles []Column
		want  bool
	}{
		{"none needed", nil, false},
		{"others needed", []Column{LinkID, Referrer}, false},
		{"needed among others", []Column{LinkID, ClickedAt, Referrer}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hasRole(tt.roles, ClickedAt); got != tt.want {
				t.Fatalf("hasRole(%v, ClickedAt) = %t, want %t", tt.roles, got, tt.want)
			}
		})
	}
}
