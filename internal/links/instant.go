package links

import (
	"strings"
	"time"
)

// SameInstant reports whether answered, a timestamp as the service keeps and
// answers it, names the instant written. A service keeps timestamps at some
// precision (the provider itself sends expiresAt with milliseconds; a
// service may answer whole seconds), so answered also matches written
// truncated or rounded to whole microseconds, milliseconds or seconds, when
// answered is itself at that precision.
func SameInstant(written, answered time.Time) bool {
	if written.Equal(answered) {
		return true
	}
	for _, p := range []time.Duration{time.Microsecond, time.Millisecond, time.Second} {
		if answered.Truncate(p).Equal(answered) && (written.Truncate(p).Equal(answered) || written.Round(p).Equal(answered)) {
			return true
		}
	}
	return false
}

// SentPrecision is the precision of the expiresAt the provider sends: the
// spec's milliseconds, the rest cut off. Two instants within one of its
// milliseconds make the same request, and so the same link.
const SentPrecision = time.Millisecond

// SameRFC3339Instant reports whether two RFC 3339 timestamps name the same
// instant, whatever their offsets and fractional seconds: the same
// millisecond as sent (SentPrecision), or either of them kept at a coarser
// precision (see SameInstant): after an import the state holds the
// service's spelling, which may have lost the configuration's sub-second
// digits. (timetypes' own semantic equality compares spellings at a
// whole-second UTC offset, so it cannot serve here.)
func SameRFC3339Instant(a, b string) bool {
	ta, errA := ParseRFC3339(a)
	tb, errB := ParseRFC3339(b)
	return errA == nil && errB == nil && OneExpiry(ta, tb)
}

// OneExpiry reports whether a and b are taken for one expiry: the same
// millisecond as sent (SentPrecision), or either of them the other kept at
// a coarser precision (SameInstant). The plan and the refresh both go by
// it, so that a change the plan takes for a new spelling is one the
// refresh keeps, whichever of the two the service holds.
func OneExpiry(a, b time.Time) bool {
	return a.Truncate(SentPrecision).Equal(b.Truncate(SentPrecision)) || SameInstant(a, b) || SameInstant(b, a)
}

// ParseRFC3339 reads an RFC 3339 timestamp, with or without fractional
// seconds. RFC 3339 lets its T and Z be written in lower case (section
// 5.6), which Go's layout does not accept: the whole value is read in
// capitals, which changes nothing else in it.
func ParseRFC3339(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, strings.ToUpper(s))
}
