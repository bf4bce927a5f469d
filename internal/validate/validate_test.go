package validate

import (
	"context"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func runString(v validator.String, value types.String) validator.StringResponse {
	var resp validator.StringResponse
	v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("attr"), ConfigValue: value}, &resp)
	return resp
}

func TestStringValidators(t *testing.T) {
	cases := []struct {
		name    string
		v       validator.String
		value   string
		wantErr string // "" = valid
	}{
		{"sent time", SentTime(), "2027-01-05T23:59:59Z", ""},
		{"sent time at the year 9999", SentTime(), "9999-12-31T23:59:59Z", ""},
		{"sent time at the year 0000", SentTime(), "0000-01-01T00:00:00Z", ""},
		{"sent time not a time (the type's to report)", SentTime(), "not a time", ""},
		{"sent time past the year 9999 in UTC", SentTime(), "9999-12-31T23:59:59-01:00", `attr is "9999-12-31T23:59:59-01:00", which is 10000-01-01T00:59:59Z in UTC: the service takes times in UTC, from the year 0000 to 9999`},
		{"sent time before the year 0000 in UTC", SentTime(), "0000-01-01T00:30:00+01:00", "which is -0001-12-31T23:30:00Z in UTC"},
		{"utm value", UTMValue(), "spring", ""},
		{"utm empty", UTMValue(), "", "is empty: for a link without this parameter, leave it out or set it to null"},
		{"utm inner space ok", UTMValue(), "spring sale", ""},
		{"utm trailing space", UTMValue(), "newsletter ", `"newsletter " starts or ends with white space; remove it (from a CSV cell, with trimspace())`},
		{"utm leading tab", UTMValue(), "\temail", "starts or ends with white space"},
		{"utm inner line break", UTMValue(), "a\nb", "contains the control or invisible character U+000A"},
		{"utm byte-order mark", UTMValue(), "\ufeffspring", "character U+FEFF"},
		{"utm emoji sequence ok", UTMValue(), "\U0001F469\u200d\U0001F4BB", ""},
		{"utm subdivision flag ok", UTMValue(), "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", ""},
		{"utm right-to-left mark in Hebrew ok", UTMValue(), "\u05e9\u05dc\u05d5\u05dd\u200f", ""},
		{"utm first-strong isolate", UTMValue(), "a\u2068b", "character U+2068"},
		{"utm soft hyphen", UTMValue(), "spring\u00adsale", "character U+00AD"},
		{"utm Arabic number sign ok", UTMValue(), "\u0600\u0661\u0662", ""},
		{"url right-to-left mark", HTTPURL(), "https://example.com/a\u200f", "invisible character U+200F"},
		{"slug left-to-right mark", Slug(), "spring\u200e", `contains '\u200e'`},
		{"uuid ok", UUID(), "2f1c6a1e-8d3b-4c2a-9f0e-1b2c3d4e5f60", ""},
		{"uuid upper ok", UUID(), "2F1C6A1E-8D3B-4C2A-9F0E-1B2C3D4E5F60", ""},
		{"uuid short", UUID(), "2f1c6a1e", "is not a UUID"},
		{"uuid name", UUID(), "my-domain", "copy the ID from the dashboard"},
		{"url https", HTTPURL(), "https://example.com/sale?x=1", ""},
		{"url http", HTTPURL(), "http://example.com", ""},
		// A scheme is case-insensitive (RFC 3986): the service reads HTTPS as https.
		{"url scheme in capitals ok", HTTPURL(), "HTTPS://example.com/sale", ""},
		{"url empty", HTTPURL(), "", "is empty; write an absolute URL such as https://example.com/sale"},
		{"url ftp", HTTPURL(), "ftp://example.com/file", "must start with http:// or https://"},
		{"url relative", HTTPURL(), "/sale", "must start with http://"},
		{"url no host", HTTPURL(), "https:///path", "has no host"},
		{"url javascript", HTTPURL(), "javascript:alert(1)", "must start with http"},
		{"url too long", HTTPURL(), "https://example.com/" + strings.Repeat("a", MaxDestinationLength), "at most 2048"},
		// The bound counts characters, as its message says, not bytes.
		{"url of 2048 characters in more bytes", HTTPURL(), "https://bücher.example/" + strings.Repeat("é", MaxDestinationLength-len("https://bücher.example/")+1), ""},
		{"url of 2049 characters", HTTPURL(), "https://bücher.example/" + strings.Repeat("é", MaxDestinationLength-len("https://bücher.example/")+2), "is 2049 characters long"},
		{"url malformed", HTTPURL(), "https://example.com/%zz", "is not a URL"},
		{"url trailing space", HTTPURL(), "https://example.com/sale ", "ends with white space; remove it (from a CSV cell, with trimspace())"},
		{"url leading space", HTTPURL(), " https://example.com/sale", "starts or ends with white space"},
		{"url trailing newline", HTTPURL(), "https://example.com/sale\n", "starts or ends with white space"},
		{"url inner space", HTTPURL(), "https://example.com/spring sale", "contains white space at character 27; a URL holds none: write a space as %20"},
		{"url space in query", HTTPURL(), "https://example.com/?q=a b", "at character 25"},
		{"url no-break space", HTTPURL(), "https://example.com/é\u00a0x", "at character 22"},
		{"url zero-width space", HTTPURL(), "https://example.com/\u200bsale", "contains the invisible character U+200B at character 21"},
		{"url right-to-left override", HTTPURL(), "https://example.com/\u202egnp.exe", "invisible character U+202E"},
		{"url zero-width non-joiner of a Persian word ok", HTTPURL(), "https://fa.example/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", ""},
		{"url encoded space ok", HTTPURL(), "https://example.com/spring%20sale", ""},
		{"url credentials", HTTPURL(), "https://user:s3cret@example.com/x", "holds a user name or password before its host (…@example.com)"},
		{"url user only", HTTPURL(), "https://trusted.example@evil.example/", "(…@evil.example)"},
		{"url port ok", HTTPURL(), "https://example.com:8443/x", ""},
		{"url port too high", HTTPURL(), "https://example.com:99999/x", "has port 99999; a port is 1 to 65535"},
		{"url port zero", HTTPURL(), "http://example.com:0/", "has port 0"},
		{"url highest port ok", HTTPURL(), "https://example.com:65535/x", ""},
		{"url port one past the highest", HTTPURL(), "https://example.com:65536/x", "has port 65536"},
		{"url at sign in path ok", HTTPURL(), "https://example.com/@brand", ""},
		{"slug ok", Slug(), "spring-sale_2027", ""},
		{"slug unicode ok", Slug(), "frühling", ""},
		{"slug empty", Slug(), "", "is empty: to give none, leave it out or set it to null"},
		{"slug slash", Slug(), "a/b", "contains '/'"},
		{"slug space", Slug(), "a b", "contains ' '"},
		{"slug control", Slug(), "a\x01b", "control or invisible characters"},
		{"slug zero-width space", Slug(), "spring\u200bsale", `contains '\u200b'`},
		{"slug query", Slug(), "a?b", "contains '?'"},
		{"slug fragment", Slug(), "a#b", "contains '#'"},
		// The bound counts characters, as its message says, not bytes.
		{"slug of 64 characters in more bytes ok", Slug(), strings.Repeat("ü", MaxSlugLength), ""},
		{"slug too long", Slug(), strings.Repeat("a", MaxSlugLength+1), "1 to 64 characters"},
		{"slug prefix ok", SlugPrefix(), "spring-", ""},
		{"slug prefix empty", SlugPrefix(), "", "remove it to match every slug"},
		{"slug prefix slash", SlugPrefix(), "campaigns/", "contains '/'"},
		{"slug prefix too long", SlugPrefix(), strings.Repeat("a", MaxSlugLength+1), "longer than a slug"},
		{"slug prefix as long as a slug ok", SlugPrefix(), strings.Repeat("a", MaxSlugLength), ""},
		{"host ok", HostName(), "Shop.Example.com", ""},
		{"host single label ok", HostName(), "localhost", ""},
		{"host empty", HostName(), "", "remove it to match every destination"},
		{"host url", HostName(), "https://shop.example.com/sale", `write only its host, "shop.example.com"`},
		{"host path", HostName(), "shop.example.com/sale", "contains '/'"},
		{"host with a user", HostName(), "admin@shop.example.com", "contains '@'"},
		{"host port", HostName(), "shop.example.com:8443", `write "shop.example.com"`},
		{"host space", HostName(), "shop example.com", "contains ' '"},
		{"host IPv4 ok", HostName(), "192.0.2.1", ""},
		{"host IPv6 ok", HostName(), "2001:db8::1", ""},
		{"host IPv6 in brackets ok", HostName(), "[2001:db8::1]", ""},
		{"host IPv6 with a port", HostName(), "[2001:db8::1]:443", `has a port, which the filter ignores; write "2001:db8::1"`},
		{"duration ok", Duration(0, time.Hour), "90s", ""},
		{"duration zero ok", Duration(0, time.Hour), "0s", ""},
		{"duration no unit", Duration(0, time.Hour), "30", "is not a duration"},
		{"duration words", Duration(0, time.Hour), "five seconds", "such as \"30s\""},
		{"duration negative", Duration(0, time.Hour), "-1s", "outside the allowed range, 0s to 1h0m0s"},
		{"duration in days", Duration(0, 1000*time.Hour), "7d", `"7d" is not a duration: durations have no unit for days; write it in hours, "168h"`},
		{"duration in half days", Duration(0, 1000*time.Hour), "1.5d", `write it in hours, "36h"`},
		{"duration empty", Duration(0, time.Hour), "", "is empty; write a number and a unit"},
		{"any duration", AnyDuration(), "-90m", ""},
		{"any duration in days", AnyDuration(), "1d", `durations have no unit for days; write it in hours, "24h"`},
		{"any duration past the longest one", AnyDuration(), "9999999h", "longer than the longest duration"},
		{"any duration without a unit", AnyDuration(), "90", `"90" is not a duration; write a number and a unit`},
		{"duration too long", Duration(0, time.Hour), "2h", "outside the allowed range"},
		{"duration past the longest one", Duration(0, time.Hour), "9999999h", `"9999999h" is outside the allowed range, 0s to 1h0m0s`},
		{"duration of many parts past the longest one", Duration(0, time.Hour), "2562047h60m", "outside the allowed range"},
		{"duration with a unit of its own", Duration(0, time.Hour), "1w", "is not a duration; write a number and a unit"},
		{"duration at its upper bound ok", Duration(0, time.Hour), "1h", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := runString(tc.v, types.StringValue(tc.value))
			if tc.wantErr == "" && resp.Diagnostics.HasError() {
				t.Fatalf("unexpected error: %v", resp.Diagnostics)
			}
			if tc.wantErr != "" {
				if !resp.Diagnostics.HasError() {
					t.Fatalf("no error for %q", tc.value)
				}
				d := resp.Diagnostics.Errors()[0]
				if !strings.Contains(d.Detail(), tc.wantErr) || !strings.HasPrefix(d.Detail(), "attr ") {
					t.Fatalf("detail %q, want it to name the attribute and say %q", d.Detail(), tc.wantErr)
				}
			}
			if resp.Diagnostics.WarningsCount() != 0 { // no validator warns: what it refuses is an error
				t.Fatalf("unexpected warning %v", resp.Diagnostics.Warnings())
			}
		})
	}
	for _, v := range []validator.String{UUID(), HTTPURL(), Slug(), SlugPrefix(), HostName(), Duration(0, time.Hour)} {
		if resp := runString(v, types.StringNull()); resp.Diagnostics.HasError() {
			t.Errorf("%T rejects null", v)
		}
		if resp := runString(v, types.StringUnknown()); resp.Diagnostics.HasError() {
			t.Errorf("%T rejects unknown", v)
		}
	}
}

// A destination's credentials are refused without being repeated: the
// value may come from a sensitive variable, and a message is printed.
func TestHTTPURLDoesNotQuoteCredentials(t *testing.T) {
	resp := runString(HTTPURL(), types.StringValue("https://mallory:s3cret@example.com/x"))
	if !resp.Diagnostics.HasError() {
		t.Fatal("credentials accepted")
	}
	if d := resp.Diagnostics.Errors()[0]; strings.Contains(d.Detail(), "s3cret") || strings.Contains(d.Detail(), "mallory") {
		t.Fatalf("detail %q repeats the credentials", d.Detail())
	}
}

// A UTM value's error is put on the utm attribute, whose line Terraform
// shows (it shows the resource's first line for a key within an object's
// value), and its text names the key.
func TestUTMValue_reportsOnTheEnclosingAttribute(t *testing.T) {
	var resp validator.StringResponse
	at := path.Root("utm").AtName("source")
	UTMValue().ValidateString(context.Background(), validator.StringRequest{Path: at, ConfigValue: types.StringValue("")}, &resp)
	if !resp.Diagnostics.HasError() {
		t.Fatal("an empty UTM value was accepted")
	}
	d, ok := resp.Diagnostics.Errors()[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(path.Root("utm")) {
		t.Fatalf("error %v is not on utm", resp.Diagnostics.Errors()[0])
	}
	if !strings.HasPrefix(d.Detail(), "utm.source ") {
		t.Fatalf("detail %q does not name utm.source", d.Detail())
	}
}

func TestNotEmptyObject(t *testing.T) {
	types2 := map[string]attr.Type{"source": types.StringType, "medium": types.StringType}
	empty := types.ObjectValueMust(types2, map[string]attr.Value{"source": types.StringNull(), "medium": types.StringNull()})
	set := types.ObjectValueMust(types2, map[string]attr.Value{"source": types.StringValue("x"), "medium": types.StringNull()})
	for name, tc := range map[string]struct {
		value   types.Object
		wantErr bool
	}{
		"empty": {empty, true}, "one set": {set, false}, "null": {types.ObjectNull(types2), false},
	} {
		var resp validator.ObjectResponse
		NotEmptyObject().ValidateObject(context.Background(), validator.ObjectRequest{Path: path.Root("utm"), ConfigValue: tc.value}, &resp)
		if resp.Diagnostics.HasError() != tc.wantErr {
			t.Errorf("%s: error = %v, want %v", name, resp.Diagnostics, tc.wantErr)
		}
		// A misspelt name reaches the provider as an empty object: the
		// message names the ones to write.
		if tc.wantErr && !strings.Contains(resp.Diagnostics.Errors()[0].Detail(), "at least one of medium, source (a name spelt otherwise") {
			t.Errorf("%s: detail %q does not name the attributes", name, resp.Diagnostics.Errors()[0].Detail())
		}
	}
}

func TestWholeNumber(t *testing.T) {
	huge, _ := new(big.Float).SetString("1e30")
	for name, tc := range map[string]struct {
		value  types.Number
		lo, hi int64
		want   string // "": accepted
	}{
		"within":          {types.NumberValue(big.NewFloat(100)), 0, 100, ""},
		"lowest":          {types.NumberValue(big.NewFloat(1)), 1, math.MaxInt64, ""},
		"a fraction":      {types.NumberValue(big.NewFloat(1.5)), 0, 100, "n must be a whole number from 0 to 100; got 1.5."},
		"above":           {types.NumberValue(big.NewFloat(101)), 0, 100, "n must be a whole number from 0 to 100; got 101."},
		"below, no upper": {types.NumberValue(big.NewFloat(0)), 1, math.MaxInt64, "n must be a whole number, at least 1; got 0."},
		"beyond int64":    {types.NumberValue(huge), 1, math.MaxInt64, "n must be a whole number from 1 to 9223372036854775807; got 1e+30."},
		"null":            {types.NumberNull(), 1, 100, ""},
		"unknown":         {types.NumberUnknown(), 1, 100, ""},
	} {
		var resp validator.NumberResponse
		WholeNumber(tc.lo, tc.hi).ValidateNumber(context.Background(), validator.NumberRequest{Path: path.Root("n"), ConfigValue: tc.value}, &resp)
		got := ""
		if resp.Diagnostics.HasError() {
			got = resp.Diagnostics.Errors()[0].Detail()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	if n, ok := Whole(big.NewFloat(42), 1, 100); n != 42 || !ok {
		t.Errorf("Whole(42) = %d, %v; want 42, true", n, ok)
	}
}
