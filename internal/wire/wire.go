// Package wire holds how the service's values are read off the wire and
// quoted back in errors, for every package that reads its answers (the
// client's JSON, the analytics export's CSV).
package wire

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// timeLayouts are the RFC 3339 spellings accepted. Parsing with a layout
// that has fractional seconds also accepts none, and Z07:00 accepts both
// "Z" and "+00:00".
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",  // offset without a colon
	"2006-01-02 15:04:05.999999999Z07:00", // space instead of T (RFC 3339 allows it)
}

// ParseTime parses an RFC 3339 timestamp and returns it in UTC: timestamps
// are compared by instant, never by spelling. Its T and Z may be in lower
// case (RFC 3339, section 5.6).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var firstErr error
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, strings.ToUpper(s))
		if err == nil {
			t = t.UTC()
			if t.Year() < 0 || t.Year() > 9999 {
				// "0000-01-01T00:30:00+01:00" is in the year -1 in UTC,
				// which RFC 3339 cannot write: we could not send it back.
				return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp: in UTC it falls outside the years 0000 to 9999", s)
			}
			return t, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 timestamp%s", s, rangeProblem(firstErr))
}

// rangeProblem is what time.Parse said was out of range (": month out of
// range"), or "". Never its whole message: that quotes the value in
// capitals, which no search for what s held, such as a key echoed by a
// service, would find.
func rangeProblem(err error) string {
	var parseErr *time.ParseError
	if errors.As(err, &parseErr) {
		return parseErr.Message
	}
	return ""
}

// Snippet is s cut to at most n bytes, at a character boundary, with an
// ellipsis when it was cut: what an error quotes of an answer.
func Snippet(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
