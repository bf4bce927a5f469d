package emulator

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Settings are the switches of the emulator. They can be changed at any time,
// in-process with Server.SetSettings or through the admin API.
type Settings struct {
	Limits   Limits   `json:"limits"`
	Filter   Filter   `json:"filter"`
	Variants Variants `json:"variants"`
	Churn    Churn    `json:"churn"`
}

// Churn has another client of the same account change it while it is being
// listed: before answering each page after the first, it deletes up to
// Delete of its own links that sit before the page (so the rest shift
// toward the start, and with offset paging one link falls between pages)
// and creates Create new ones (appended at the end). Its own links are
// those pointing at OtherClientHost; it never touches any other.
type Churn struct {
	Delete int `json:"delete"`
	Create int `json:"create"`
}

// Limits configures the rate limits, counted per key and class.
type Limits struct {
	Write  int      `json:"write"`  // requests per window on POST, PATCH, DELETE
	Read   int      `json:"read"`   // requests per window on GET
	Window Duration `json:"window"` // length of one window
	// Model is how requests are counted: ModelFirstRequest ("", the
	// default), ModelClock, ModelSliding or ModelBucket (ratelimit.go).
	Model string `json:"model,omitempty"`
	// Rounding is how X-RateLimit-Reset and Retry-After are made whole
	// seconds: RoundUp ("", the default), RoundDown or RoundNearest.
	Rounding string `json:"rounding,omitempty"`
	// Remaining is what X-RateLimit-Remaining counts on an allowed request:
	// RemainingAfter ("", the default) or RemainingBefore.
	Remaining string `json:"remaining,omitempty"`
	// Reset is what X-RateLimit-Reset counts down to: ResetWhole ("", the
	// default) or ResetNext.
	Reset string `json:"reset,omitempty"`
}

// Filter configures the fraud filter that checks every destination on create
// and on change of destination.
type Filter struct {
	// Blocked lists hosts (a destination whose host is that host or a
	// subdomain of it is blocked) or glob patterns containing '*' (any run
	// of characters, '/' included) matched against the whole destination
	// URL. Both ignore case.
	Blocked []string `json:"blocked"`
	// Delay is how long every check takes; the real service is slow here.
	Delay Duration `json:"delay"`
	// AbortOnDisconnect abandons a write whose client has gone while the
	// filter checks it. By default the write is carried out all the same,
	// as a real server does once it has received the request.
	AbortOnDisconnect bool `json:"abortOnDisconnect"`
}

// Variants switch the emulator from its canonical answers to the other
// reasonable answers listed in DESIGN.md.
type Variants struct {
	ObjectEnvelope string `json:"objectEnvelope"` // "" (bare), "data" or "link"
	ListEnvelope   string `json:"listEnvelope"`   // "" (bare), "data", "links" or "items"
	FieldStyle     string `json:"fieldStyle"`     // "camel", "snake" or "alias" (shortLink, qrCode, …)
	CreateStatus   int    `json:"createStatus"`   // 201 or 200
	ChangeStatus   int    `json:"changeStatus"`   // 200 or 204 (no body)
	DeleteStatus   int    `json:"deleteStatus"`   // 204 or 200
	Paging         string `json:"paging"`         // "none", "cursor", "next", "link" or "offset" (the cursor is a position, so pages shift under deletes)
	PageSize       int    `json:"pageSize"`       // links per page when paging
	UTMStyle       string `json:"utmStyle"`       // "object", "prefixed" (utm_source…), "absent" or "merged" (into the destination's query)
	TimeFormat     string `json:"timeFormat"`     // "millis" (2027-01-31T23:59:59.000Z), "seconds" (no fraction) or "offset" (+00:00)
	// NormalizeDestination lower-cases scheme and host, writes a Unicode
	// host in ASCII (IDNA) and the path's non-ASCII characters
	// percent-encoded (the rest as sent), and gives an empty path a
	// trailing slash, as some services do.
	NormalizeDestination bool `json:"normalizeDestination"`
	WriteGrantsRead      bool `json:"writeGrantsRead"` // links:write also grants links:read
	HTMLErrors           bool `json:"htmlErrors"`      // error bodies are HTML pages, as from a proxy
}

// clone is a copy that shares no slice with s: what a caller was given or
// handed in cannot change the rules in force without the server's lock.
func (s Settings) clone() Settings {
	s.Filter.Blocked = slices.Clone(s.Filter.Blocked)
	return s
}

// DefaultSettings are the canonical answers.
func DefaultSettings() Settings {
	return Settings{
		Limits: Limits{Write: 60, Read: 600, Window: Duration(time.Minute)},
		Filter: Filter{Blocked: []string{"blocked.example", "*phishing*"}, Delay: Duration(300 * time.Millisecond)},
		Variants: Variants{
			FieldStyle:   "camel",
			CreateStatus: 201,
			ChangeStatus: 200,
			DeleteStatus: 204,
			Paging:       "none",
			PageSize:     100,
			UTMStyle:     "object",
			TimeFormat:   "millis",
		},
	}
}

// SettingError is a setting that has no meaning: Name as in the admin
// API's JSON (limits.model), and what it must be instead.
type SettingError struct {
	Name  string
	Value any
	Want  string
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("setting %s: %v %s", e.Name, e.Value, e.Want)
}

// JSONDurationNote ends what a duration setting must be where it was given
// as JSON (the admin API, a settings file), in which a number is
// nanoseconds; a command-line flag takes only a duration such as 60s.
const JSONDurationNote = " (a JSON number is nanoseconds)"

// Validate reports the first setting that has no meaning.
func (s Settings) Validate() error {
	v := s.Variants
	for _, c := range []settingCheck{
		{"limits.write", s.Limits.Write, s.Limits.Write > 0, "must be above 0"},
		{"limits.read", s.Limits.Read, s.Limits.Read > 0, "must be above 0"},
		{"limits.window", time.Duration(s.Limits.Window), s.Limits.Window >= Duration(time.Millisecond), `must be 1ms or more, such as "60s"` + JSONDurationNote},
		oneOfCheck("limits.model", s.Limits.Model, rateModels...),
		oneOfCheck("limits.rounding", s.Limits.Rounding, roundings...),
		oneOfCheck("limits.remaining", s.Limits.Remaining, remainingCounts...),
		oneOfCheck("limits.reset", s.Limits.Reset, resetReadings...),
		{"filter.delay", time.Duration(s.Filter.Delay), s.Filter.Delay >= 0, "must be 0 or more"},
		oneOfCheck("variants.objectEnvelope", v.ObjectEnvelope, "", "data", "link"),
		oneOfCheck("variants.listEnvelope", v.ListEnvelope, "", "data", "links", "items"),
		oneOfCheck("variants.fieldStyle", v.FieldStyle, "camel", "snake", "alias"),
		{"variants.createStatus", v.CreateStatus, v.CreateStatus == 200 || v.CreateStatus == 201, "must be 200 or 201"},
		{"variants.changeStatus", v.ChangeStatus, v.ChangeStatus == 200 || v.ChangeStatus == 204, "must be 200 or 204"},
		{"variants.deleteStatus", v.DeleteStatus, v.DeleteStatus == 200 || v.DeleteStatus == 204, "must be 200 or 204"},
		oneOfCheck("variants.paging", v.Paging, "none", "cursor", "next", "link", "offset"),
		{"churn.delete", s.Churn.Delete, s.Churn.Delete >= 0, "must be 0 or more"},
		{"churn.create", s.Churn.Create, s.Churn.Create >= 0, "must be 0 or more"},
		{"variants.pageSize", v.PageSize, v.PageSize > 0, "must be above 0"},
		oneOfCheck("variants.utmStyle", v.UTMStyle, "object", "prefixed", "absent", "merged"),
		oneOfCheck("variants.timeFormat", v.TimeFormat, "millis", "seconds", "offset"),
	} {
		if !c.ok {
			return &SettingError{Name: c.name, Value: c.value, Want: c.want}
		}
	}
	return nil
}

// settingCheck is one check of Validate: ok, or value is not what it must be.
type settingCheck struct {
	name  string
	value any
	ok    bool
	want  string
}

// oneOfCheck is the check of a setting that takes one of a few words.
func oneOfCheck(name, value string, allowed ...string) settingCheck {
	var quoted []string
	for _, a := range allowed {
		if a != "" {
			quoted = append(quoted, strconv.Quote(a))
		}
	}
	want := "must be one of " + strings.Join(quoted, ", ")
	if slices.Contains(allowed, "") {
		want += ` (or "", the default)`
	}
	return settingCheck{name, strconv.Quote(value), slices.Contains(allowed, value), want}
}

// Duration is a time.Duration that reads and writes JSON as "1.5s" (or a
// number of nanoseconds), so the admin API is pleasant to use with curl.
type Duration time.Duration

// String is the duration as a setting is written, such as "1.5s", for
// messages.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string such as "1.5s".
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// UnmarshalJSON reads a string such as "1.5s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		parsed, err := time.ParseDuration(string(b[1 : len(b)-1]))
		if err != nil {
			return err
		}
		*d = Duration(parsed)
		return nil
	}
	// A whole number of nanoseconds, in any JSON spelling (1e9 is a
	// second); a fraction of one, or anything else, is refused rather than
	// read up to where it stops making sense (1.5 read as 1 ns).
	n, ok := new(big.Float).SetString(string(b))
	if !ok || !n.IsInt() || n.Cmp(big.NewFloat(math.MaxInt64)) > 0 || n.Cmp(big.NewFloat(math.MinInt64)) < 0 {
		return fmt.Errorf("duration %s: want a string such as \"2s\" or a whole number of nanoseconds", b)
	}
	ns, _ := n.Int64()
	*d = Duration(ns)
	return nil
}
