package analytics

import (
	"fmt"
	"strings"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// Column is a column the reader looks for by meaning, since the
// specification does not show the export's columns: any of its spellings
// matches, ignoring case, '_', '-', '.' and spaces.
type Column struct {
	meaning   string
	spellings []string // in order of preference
}

// The columns a reading may need, found by any of their usual spellings.
var (
	ClickedAt = Column{"the time of each click", []string{"clicked_at", "click_time", "clicked_on", "timestamp", "time", "occurred_at", "created_at", "date_time"}}
	LinkID    = Column{"the link of each click", []string{"link_id", "short_link_id"}}
	Referrer  = Column{"the referrer of each click", []string{"referrer", "referer", "referrer_url", "referer_url", "http_referer", "http_referrer"}}
)

// find returns the index of the role's column in columns, or -1.
func (r Column) find(columns []string) int {
	for _, spelling := range r.spellings {
		want := normalizeColumn(spelling)
		for i, c := range columns {
			if normalizeColumn(c) == want {
				return i
			}
		}
	}
	return -1
}

func normalizeColumn(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
}

// missingColumn explains a header row without a column the reading needs.
func missingColumn(columns []string, r Column, redact func(string) string) error {
	return fmt.Errorf("%w: the header row names the columns %s, none of which holds %s (looked for %s)",
		ErrMalformed, wire.Snippet(redact(quoteAll(columns)), 300), r.meaning, strings.Join(r.spellings, ", "))
}

func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}

func hasRole(roles []Column, r Column) bool {
	for _, x := range roles {
		if x.meaning == r.meaning {
			return true
		}
	}
	return false
}
