// Package validate holds the plan-time validators of the provider's
// attributes, so a bad value is reported on its own attribute before any
// request is sent.
package validate

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/shortlink/terraform-provider-shortlink/internal/client"
)

// MaxDestinationLength bounds destination URLs; browsers and most services
// stop around 2,000 characters.
const MaxDestinationLength = 2048

// MaxSlugLength is the longest slug accepted.
const MaxSlugLength = 64

// UUID accepts identifiers such as 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60.
func UUID() validator.String {
	return stringCheck{
		description: "must be a UUID such as 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60",
		check:       UUIDProblem,
	}
}

// UUIDProblem explains why v is not a UUID, or returns "".
func UUIDProblem(v string) string {
	if !client.IsUUID(v) {
		return fmt.Sprintf("%q is not a UUID; copy the ID from the dashboard (it looks like 2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60)", v)
	}
	return ""
}

// HTTPURL accepts absolute http and https URLs of a sane length.
func HTTPURL() validator.String {
	return stringCheck{
		description: fmt.Sprintf("must be an absolute http or https URL without white space or credentials, of at most %d characters", MaxDestinationLength),
		check:       checkHTTPURL,
	}
}

func checkHTTPURL(v string) string {
	if v == "" {
		// Most often a variable or a CSV cell left empty.
		return "is empty; write an absolute URL such as https://example.com/sale"
	}
	if n := utf8.RuneCountInString(v); n > MaxDestinationLength {
		return fmt.Sprintf("is %d characters long; at most %d are allowed", n, MaxDestinationLength)
	}
	// White space passes url.Parse in a path or a query, and a link to it
	// leads nowhere.
	if problem := edgeSpaceProblem(v); problem != "" {
		return problem
	}
	if i := strings.IndexFunc(v, unicode.IsSpace); i >= 0 {
		return fmt.Sprintf("%q contains white space at character %d; a URL holds none: write a space as %%20", v, utf8.RuneCountInString(v[:i])+1)
	}
	if r, at := firstInvisible(v, false); at > 0 {
		return fmt.Sprintf("%q contains the invisible character %U at character %d (pasted text often carries one); remove it", v, r, at)
	}
	u, err := url.Parse(v)
	if err != nil {
		return fmt.Sprintf("%q is not a URL: %v", v, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return fmt.Sprintf("%q must start with http:// or https://", v)
	}
	if u.Host == "" {
		return fmt.Sprintf("%q has no host; write an absolute URL such as https://example.com/sale", v)
	}
	// A short link is public: credentials in its destination are
	// published with it (and with the plan and the state), and browsers
	// warn visitors of such links, a phishing trick. Not quoted here.
	if u.User != nil {
		return fmt.Sprintf("holds a user name or password before its host (…@%s); a short link is public, so they would be too, and browsers warn visitors of such links: remove them", u.Host)
	}
	// url.Parse checks that a port is digits, not that it is one.
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("%q has port %s; a port is 1 to 65535", v, port)
		}
	}
	return ""
}

// LeaveOutForNone is how an optional attribute holds no value, said to
// whoever wrote it empty (most often a variable or a CSV cell left empty):
// an empty string is a value, and null is what sets none.
const LeaveOutForNone = "leave it out or set it to null (a variable's default = null)"

// slugDescription says what a slug, and so the beginning of one, may hold.
var slugDescription = fmt.Sprintf("must be 1 to %d characters without '/', '?', '#', spaces, control or invisible characters", MaxSlugLength)

// Slug accepts a path segment: no '/', '?', '#', no white space, control or
// invisible characters, at most MaxSlugLength characters.
func Slug() validator.String { return stringCheck{description: slugDescription, check: slugProblem} }

func slugProblem(v string) string {
	if v == "" {
		// Most often a variable or a CSV cell left empty.
		return fmt.Sprintf("is empty: to give none, %s; a slug is 1 to %d characters", LeaveOutForNone, MaxSlugLength)
	}
	if len([]rune(v)) > MaxSlugLength {
		return fmt.Sprintf("must be 1 to %d characters long", MaxSlugLength)
	}
	return slugCharProblem(v, "a slug is")
}

// slugCharProblem names the first character of v no slug can hold.
func slugCharProblem(v, what string) string {
	for _, r := range v {
		if r == '/' || r == '?' || r == '#' || unicode.IsSpace(r) || invisible(r, false) {
			return fmt.Sprintf("%q contains %q; %s one path segment without '/', '?', '#', spaces, control or invisible characters", v, r, what)
		}
	}
	return ""
}

// SlugPrefix accepts the beginning of a slug. A prefix no slug can begin
// with would silently match nothing, so it is refused with the reason.
func SlugPrefix() validator.String {
	return stringCheck{description: slugDescription, check: SlugPrefixProblem}
}

// SlugPrefixProblem explains why v cannot begin a slug, or returns "".
func SlugPrefixProblem(v string) string {
	switch {
	case v == "":
		return "is empty; remove it to match every slug"
	case len([]rune(v)) > MaxSlugLength:
		return fmt.Sprintf("is longer than a slug can be (%d characters)", MaxSlugLength)
	}
	return slugCharProblem(v, "a slug, and so its beginning, is")
}

// HostName accepts a bare host name such as shop.example.com: what a
// filter on a URL's host compares with, without scheme, port or path.
func HostName() validator.String {
	return stringCheck{
		description: "must be a host name such as shop.example.com, or an IP address, without scheme, port or path",
		check:       HostNameProblem,
	}
}

// HostNameProblem explains why v is not a bare host name, or returns "".
// Users paste whole URLs; the message then names the host to write.
func HostNameProblem(v string) string {
	if v == "" {
		return "is empty; remove it to match every destination"
	}
	if net.ParseIP(v) != nil || strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") && net.ParseIP(v[1:len(v)-1]) != nil {
		return "" // an IP address, an IPv6 one with or without its brackets
	}
	if strings.Contains(v, "://") {
		if u, err := url.Parse(v); err == nil && u.Hostname() != "" {
			return fmt.Sprintf("%q is a URL; write only its host, %q", v, u.Hostname())
		}
		return fmt.Sprintf("%q is a URL; write only its host, such as shop.example.com", v)
	}
	if i := strings.IndexFunc(v, func(r rune) bool {
		return strings.ContainsRune("/?#@", r) || unicode.IsSpace(r) || invisible(r, false)
	}); i >= 0 {
		r, _ := utf8.DecodeRuneInString(v[i:])
		return fmt.Sprintf("%q contains %q; write only a host name, such as shop.example.com", v, r)
	}
	u, err := url.Parse("//" + v)
	switch {
	case err != nil || u.Hostname() == "":
		return fmt.Sprintf("%q is not a host name; write one such as shop.example.com", v)
	case u.Port() != "":
		return fmt.Sprintf("%q has a port, which the filter ignores; write %q", v, u.Hostname())
	}
	return ""
}

// UTMValue accepts a UTM parameter's value: not empty. An empty value
// (common from a CSV cell left blank) would send the parameter with no
// value; leaving the attribute out sends none.
func UTMValue() validator.String {
	return stringCheck{
		description:    "must not be empty nor start or end with white space; leave the attribute out (or null) for no parameter",
		check:          UTMValueProblem,
		reportOnParent: true,
	}
}

// UTMValueProblem explains why v cannot be a UTM value, or returns "".
// White space within a value is the campaign's own ("spring sale"); at its
// ends it makes a value that analytics counts apart from the trimmed one.
func UTMValueProblem(v string) string {
	if v == "" {
		return "is empty: for a link without this parameter, " + LeaveOutForNone + ". From a CSV whose cell may be blank, write for example `content = each.value.content != \"\" ? each.value.content : null`"
	}
	if problem := edgeSpaceProblem(v); problem != "" {
		return problem
	}
	if r, at := firstInvisible(v, true); at > 0 {
		return fmt.Sprintf("%q contains the control or invisible character %U; analytics would count the value apart from the one without it: remove it", v, r)
	}
	return ""
}

// invisible reports a control character (a line break, a tab) or a format
// character (Unicode Cf: a zero-width space, a soft hyphen, a byte-order
// mark, the right-to-left override that makes "gnp.exe" read "exe.png"):
// pasted text carries them unseen, and a value holding one is not the value
// it reads as. Words need a few: the joiners of Persian and Indic scripts
// and of emoji sequences, the tags of subdivision flags, the number signs
// of Arabic and Syriac. Text (inText) needs the direction marks too, which
// a URL or a slug does not.
func invisible(r rune, inText bool) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case !unicode.Is(unicode.Cf, r), r == '\u200c', r == '\u200d', '\U000E0020' <= r && r <= '\U000E007F',
		'\u0600' <= r && r <= '\u0605', r == '\u06dd', r == '\u070f', r == '\u08e2', r == '\U000110BD', r == '\U000110CD':
		return false
	case r == '\u200e', r == '\u200f', r == '\u061c':
		return !inText
	}
	return true
}

// firstInvisible returns v's first invisible character (see invisible) and
// its place, counted in characters from 1 (0: none).
func firstInvisible(v string, inText bool) (rune, int) {
	i := strings.IndexFunc(v, func(r rune) bool { return invisible(r, inText) })
	if i < 0 {
		return 0, 0
	}
	r, _ := utf8.DecodeRuneInString(v[i:])
	return r, utf8.RuneCountInString(v[:i]) + 1
}

// edgeSpaceProblem reports white space at either end of v, which mostly
// comes with a pasted value or a CSV cell.
func edgeSpaceProblem(v string) string {
	if strings.TrimSpace(v) != v {
		return fmt.Sprintf("%q starts or ends with white space; remove it (from a CSV cell, with trimspace())", v)
	}
	return ""
}

// stringCheck adapts a check that returns a problem ("" when none) to a
// framework validator.
type stringCheck struct {
	description string
	check       func(string) string
	// reportOnParent puts the error on the enclosing attribute (utm for
	// utm.source), naming the whole path in its text: Terraform shows the
	// line of an attribute, but not of a key within an object's value,
	// for which it shows the resource's first line.
	reportOnParent bool
}

var _ validator.String = stringCheck{}

func (c stringCheck) Description(context.Context) string         { return c.description }
func (c stringCheck) MarkdownDescription(context.Context) string { return c.description }

func (c stringCheck) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if problem := c.check(req.ConfigValue.ValueString()); problem != "" {
		at := req.Path
		if c.reportOnParent {
			at = at.ParentPath()
		}
		resp.Diagnostics.AddAttributeError(at, "Invalid "+req.Path.String(), req.Path.String()+" "+problem)
	}
}

// NotEmptyObject rejects an object whose attributes are all null, such as
// utm = {}: the service would store no parameters and the plan could never
// match.
func NotEmptyObject() validator.Object { return notEmptyObject{} }

type notEmptyObject struct{}

var _ validator.Object = notEmptyObject{}

func (notEmptyObject) Description(context.Context) string {
	return "must set at least one attribute"
}
func (v notEmptyObject) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (notEmptyObject) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	for _, v := range req.ConfigValue.Attributes() {
		if !v.IsNull() {
			return
		}
	}
	// Terraform drops an attribute name the object does not have before the
	// provider sees it, so a misspelt one ends here: name the right ones.
	names := slices.Sorted(maps.Keys(req.ConfigValue.Attributes()))
	resp.Diagnostics.AddAttributeError(req.Path, "Empty "+req.Path.String(),
		fmt.Sprintf("%s sets no attribute; set at least one of %s (a name spelt otherwise is dropped by Terraform), or remove it to clear the parameters.", req.Path, strings.Join(names, ", ")))
}

// WholeNumber accepts a whole number from lo to hi. A Terraform number may
// have a fraction, which an Int64 attribute reports as "always an error in
// the provider": settings that count are numbers, checked here on their
// attribute, and read with Whole.
func WholeNumber(lo, hi int64) validator.Number { return wholeNumber{lo: lo, hi: hi} }

// Whole returns n as an int64 when it is a whole number from lo to hi.
func Whole(n *big.Float, lo, hi int64) (int64, bool) {
	if n == nil || !n.IsInt() {
		return 0, false
	}
	i, exact := n.Int64()
	return i, exact == big.Exact && lo <= i && i <= hi
}

type wholeNumber struct{ lo, hi int64 }

var _ validator.Number = wholeNumber{}

func (v wholeNumber) Description(context.Context) string {
	if v.hi == math.MaxInt64 {
		return fmt.Sprintf("must be a whole number, at least %d", v.lo)
	}
	return fmt.Sprintf("must be a whole number from %d to %d", v.lo, v.hi)
}
func (v wholeNumber) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v wholeNumber) ValidateNumber(ctx context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	n := req.ConfigValue.ValueBigFloat()
	if _, ok := Whole(n, v.lo, v.hi); !ok {
		want := v.Description(ctx)
		if n.Cmp(new(big.Float).SetInt64(v.hi)) > 0 {
			// "at least 1; got 1e+30" would refuse a number for a bound it meets.
			want = fmt.Sprintf("must be a whole number from %d to %d", v.lo, v.hi)
		}
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+req.Path.String(),
			fmt.Sprintf("%s %s; got %s.", req.Path, want, n.Text('g', -1)))
	}
}

// Duration accepts a Go duration ("5s", "90m", "24h") between lo and hi.
func Duration(lo, hi time.Duration) validator.String {
	return stringCheck{
		description: fmt.Sprintf("must be a duration such as \"30s\" or \"24h\", from %s to %s", lo, hi),
		check: func(v string) string {
			d, problem := parseDuration(v)
			switch {
			case problem != "" && durationShape.MatchString(v):
				// Written as a duration, but past the longest one.
				return fmt.Sprintf("%q is outside the allowed range, %s to %s", v, lo, hi)
			case problem != "":
				return problem
			case d < lo || d > hi:
				return fmt.Sprintf("%q is outside the allowed range, %s to %s", v, lo, hi)
			}
			return ""
		},
	}
}

// AnyDuration accepts any Go duration; its range is checked elsewhere
// (timeouts, whose bound is a plan's check that names the operation). It
// is for a key of an object's value, such as timeouts.create: reported on
// the object, whose line Terraform shows, as UTMValue is.
func AnyDuration() validator.String {
	return stringCheck{
		reportOnParent: true,
		description:    "must be a duration such as \"30s\" or \"24h\"",
		check: func(v string) string {
			_, problem := parseDuration(v)
			return problem
		},
	}
}

// parseDuration reads a Go duration, or says what is wrong with it:
// days, the commonest slip, are named, as Go durations have none.
func parseDuration(v string) (time.Duration, string) {
	d, err := time.ParseDuration(v)
	switch {
	case err == nil:
		return d, ""
	case durationShape.MatchString(v):
		// Written as a duration, but past the longest one (about 2562047h).
		return 0, fmt.Sprintf("%q is longer than the longest duration, about 2562047h", v)
	case inDays.MatchString(v):
		days, _ := strconv.ParseFloat(strings.TrimSuffix(v, "d"), 64)
		return 0, fmt.Sprintf("%q is not a duration: durations have no unit for days; write it in hours, %q", v, strconv.FormatFloat(days*24, 'f', -1, 64)+"h")
	case v == "":
		return 0, "is empty; write a number and a unit, such as \"30s\", \"15m\" or \"24h\""
	}
	return 0, fmt.Sprintf("%q is not a duration; write a number and a unit, such as \"30s\", \"15m\" or \"24h\"", v)
}

// inDays is a number of days, as a person writes a duration ("7d").
var inDays = regexp.MustCompile(`^\d+(\.\d+)?d$`)

// durationShape is what time.ParseDuration reads: numbers, each with a
// unit. A value of this shape that it refuses is too long to be held.
var durationShape = regexp.MustCompile(`^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$`)
