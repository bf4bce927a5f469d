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

// SameRFC3339Instant reports whether written, an RFC 3339 expiry as
// configured, names the expiry kept, as the state holds it: OneExpiry, read
// from any offsets and fractional seconds. (timetypes' own semantic
// equality compares spellings at a whole-second UTC offset, so it cannot
// serve here.)
func SameRFC3339Instant(written, kept string) bool {
	w, errW := ParseRFC3339(written)
	k, errK := ParseRFC3339(kept)
	return errW == nil && errK == nil && OneExpiry(w, k)
}

// OneExpiry reports whether written, sent now, would leave the link with
// the expiry kept: the same millisecond as sent (SentPrecision), or kept
// being written at a coarser precision (SameInstant). After an import the
// state holds the service's spelling, which may have lost the
// configuration's sub-second digits. It runs one way only: a whole second
// written does not name a fractional one kept (the service would keep the
// whole second), and a relation that ran both ways would let two changes
// each "the same" move the configuration a second from the service. The
// plan and the refresh both go by it, so that a change the plan takes for a
// new spelling is one the refresh keeps.
func OneExpiry(written, kept time.Time) bool {
	return written.Truncate(SentPrecision).Equal(kept.Truncate(SentPrecision)) || SameInstant(written, kept)
}

// ParseRFC3339 reads an RFC 3339 timestamp, with or without fractional
// seconds. RFC 3339 lets its T and Z be written in lower case (section
// 5.6), which Go's layout does not accept: the whole value is read in
// capitals, which changes nothing else in it.
// Go's parser takes offsets RFC 3339 does not (+24:00, +00:60), which a
// service may refuse or read as another instant: they are refused here.
func ParseRFC3339(s string) (time.Time, error) {
	s = strings.ToUpper(s)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || strings.HasSuffix(s, "Z") {
		return t, err
	}
	if offset := s[len(s)-len("+00:00"):]; offset[1:3] > "23" || offset[4:] > "59" {
		return time.Time{}, &time.ParseError{Layout: time.RFC3339Nano, Value: s, LayoutElem: "Z07:00", ValueElem: offset, Message: ": time zone offset out of range"}
	}
	return t, nil
}
