// Tests of render.go's pieces called directly. variants_test.go checks the
// variants through HTTP; here the rendered bytes are decoded whole, so a
// wrong or missing field fails whichever handler would have written it.

package emulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
	"unicode/utf8"
)

// appendJSONString skips the encoder for plain strings; whatever path it
// takes, a client must read back what json.Marshal would have given it.
func TestAppendJSONString(t *testing.T) {
	cases := []struct{ name, s string }{
		{"empty", ""},
		{"plain ASCII", "https://example.com/spring-sale_2026?ref=1"},
		{"DEL is not a control character in JSON", "a\x7fb"},
		{"quote", `say "hi"`},
		{"backslash", `C:\path\n`},
		{"newline and tab", "a\nb\tc"},
		{"NUL", "a\x00b"},
		{"unit separator 0x1f", "a\x1fb"},
		{"non-ASCII UTF-8", "café ünïcode 日本 🎉"},
		{"invalid UTF-8", "a\xffb\xc3"},
		{"line and paragraph separators", "a\u2028b\u2029c"},
		{"HTML characters", "<script>a&b</script>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := appendJSONString([]byte("x:"), c.s)
			if !bytes.HasPrefix(got, []byte("x:")) {
				t.Fatalf("dst not kept: %q", got)
			}
			out := got[2:]
			var decoded string
			if err := json.Unmarshal(out, &decoded); err != nil {
				t.Fatalf("%q is not a JSON string: %v", out, err)
			}
			marshalled, _ := json.Marshal(c.s)
			var want string
			_ = json.Unmarshal(marshalled, &want)
			if decoded != want {
				t.Errorf("decodes to %q, want %q as from json.Marshal", decoded, want)
			}
			// encoding/json reads raw invalid UTF-8 and U+2028 without
			// complaint, so decoding alone misses them: JSON text must be
			// UTF-8 (RFC 8259), and the separators end a line in older
			// JavaScript.
			if !utf8.Valid(out) {
				t.Errorf("%q is not valid UTF-8", out)
			}
			if bytes.ContainsAny(out, "\u2028\u2029") {
				t.Errorf("%q holds a raw U+2028 or U+2029", out)
			}
		})
	}
}

func TestAppendLink(t *testing.T) {
	// Non-UTC instants with milliseconds, to see the conversion to UTC and
	// the truncation of the fraction.
	cet := time.FixedZone("CET", 3600)
	expires := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)
	base := func(domainID string) Link {
		return Link{
			ID: "lnk_render", DomainID: domainID, Slug: "spring", Destination: "https://example.com/p?x=1",
			CreatedAt: time.Date(2026, 3, 1, 12, 0, 0, 123e6, cet),
			UpdatedAt: time.Date(2026, 3, 2, 9, 30, 45, 987e6, cet),
			ExpiresAt: &expires,
			UTM:       &UTM{Source: "news", Medium: "email"},
		}
	}
	snake := map[string]string{"domainId": "domain_id", "shortUrl": "short_url", "qrCodeUrl": "qr_code_url",
		"createdAt": "created_at", "updatedAt": "updated_at", "expiresAt": "expires_at"}
	cases := []struct {
		name   string
		change func(*Settings)
		link   func(*Link)
		rename map[string]string // canonical name → name in this style
		drop   []string
		set    map[string]any // nil is JSON null
	}{
		{name: "canonical: camel, millis, utm object"},
		{name: "snake field names", change: func(s *Settings) { s.Variants.FieldStyle = "snake" }, rename: snake},
		{
			name:   "alias field names",
			change: func(s *Settings) { s.Variants.FieldStyle = "alias" },
			rename: map[string]string{"shortUrl": "shortLink", "qrCodeUrl": "qrCode"},
		},
		{
			name:   "seconds truncate the fraction",
			change: func(s *Settings) { s.Variants.TimeFormat = "seconds" },
			set:    map[string]any{"createdAt": "2026-03-01T11:00:00Z", "updatedAt": "2026-03-02T08:30:45Z", "expiresAt": "2027-01-31T23:59:59Z"},
		},
		{
			name:   "offset writes +00:00",
			change: func(s *Settings) { s.Variants.TimeFormat = "offset" },
			set: map[string]any{"createdAt": "2026-03-01T11:00:00.123+00:00", "updatedAt": "2026-03-02T08:30:45.987+00:00",
				"expiresAt": "2027-01-31T23:59:59.000+00:00"},
		},
		{
			name:   "no expiry is null, not left out",
			change: func(s *Settings) { s.Variants.FieldStyle = "snake" },
			link:   func(l *Link) { l.ExpiresAt = nil },
			rename: snake,
			set:    map[string]any{"expires_at": nil},
		},
		{name: "utm object without UTM is null", link: func(l *Link) { l.UTM = nil }, set: map[string]any{"utm": nil}},
		{name: "utm object with empty UTM is null", link: func(l *Link) { l.UTM = &UTM{} }, set: map[string]any{"utm": nil}},
		{
			name:   "prefixed writes the set parameters only",
			change: func(s *Settings) { s.Variants.UTMStyle = "prefixed" },
			drop:   []string{"utm"},
			set:    map[string]any{"utm_source": "news", "utm_medium": "email"},
		},
		{
			name:   "prefixed without UTM writes none",
			change: func(s *Settings) { s.Variants.UTMStyle = "prefixed" },
			link:   func(l *Link) { l.UTM = nil },
			drop:   []string{"utm"},
		},
		{name: "absent", change: func(s *Settings) { s.Variants.UTMStyle = "absent" }, drop: []string{"utm"}},
		{
			name:   "merged into the destination",
			change: func(s *Settings) { s.Variants.UTMStyle = "merged" },
			drop:   []string{"utm"},
			set:    map[string]any{"destination": "https://example.com/p?x=1&utm_medium=email&utm_source=news"},
		},
		{
			// A link whose domain is gone still renders, with a host
			// that cannot resolve rather than an empty one.
			name: "unknown domain",
			link: func(l *Link) { l.DomainID = "dom_gone" },
			set: map[string]any{"domainId": "dom_gone", "shortUrl": "https://unknown.invalid/spring",
				"qrCodeUrl": "https://unknown.invalid/qr/spring.png"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var change []func(*Settings)
			if c.change != nil {
				change = append(change, c.change)
			}
			e := newEnv(t, change...)
			e.srv.mu.Lock()
			lw := e.srv.linkWriterLocked()
			e.srv.mu.Unlock()
			l := base(e.fx.DomainID)
			if c.link != nil {
				c.link(&l)
			}

			want := map[string]any{
				"id": "lnk_render", "destination": "https://example.com/p?x=1", "slug": "spring", "domainId": e.fx.DomainID,
				"shortUrl": "https://go.example.test/spring", "qrCodeUrl": "https://go.example.test/qr/spring.png",
				"createdAt": "2026-03-01T11:00:00.123Z", "updatedAt": "2026-03-02T08:30:45.987Z",
				"expiresAt": "2027-01-31T23:59:59.000Z", "utm": map[string]any{"source": "news", "medium": "email"},
			}
			for from, to := range c.rename {
				want[to] = want[from]
				delete(want, from)
			}
			for _, k := range c.drop {
				delete(want, k)
			}
			for k, v := range c.set {
				want[k] = v
			}

			out := lw.appendLink(nil, &l)
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("not a JSON object: %v: %s", err, out)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("link = %s\nwant   %v", out, want)
			}
		})
	}
}

func TestMergeUTM(t *testing.T) {
	cases := []struct {
		name, dest string
		utm        *UTM
		want       string
	}{
		// Not parsed and re-encoded, which would reorder the query.
		{"no parameters: as given", "https://example.com/p?b=2&a=1", &UTM{}, "https://example.com/p?b=2&a=1"},
		{"replaces a parameter already in the query", "https://example.com/p?utm_source=old&x=1", &UTM{Source: "new"},
			"https://example.com/p?x=1&utm_source=new"},
		{"keeps every other pair as written", "https://example.com/p?ref=a%20b&x=1;2&d=20%", &UTM{Source: "news"},
			"https://example.com/p?ref=a%20b&x=1;2&d=20%&utm_source=news"},
		{"goes before the fragment", "https://example.com/p#top", &UTM{Source: "news"}, "https://example.com/p?utm_source=news#top"},
		{"escapes the values", "https://example.com/", &UTM{Campaign: "a b&c"}, "https://example.com/?utm_campaign=a+b%26c"},
		{"unparseable destination: as given", "https://example.com/%zz", &UTM{Source: "news"}, "https://example.com/%zz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mergeUTM(c.dest, c.utm); got != c.want {
				t.Errorf("mergeUTM(%q) = %q, want %q", c.dest, got, c.want)
			}
		})
	}
}

func TestParseCursor(t *testing.T) {
	links := []*Link{{Seq: 41}, {Seq: 42}, {Seq: 43}}
	_, next := pageAfter(links, 0, 2) // the cursor a client is given
	cases := []struct {
		name, cursor string
		want         int64
		wantErr      bool
	}{
		{"none: from the start", "", 0, false},
		{"from pageAfter", next, 42, false},
		{"not base64", "!!", 0, true},
		// Read as 0 it would restart the list, and a client would loop.
		{"base64 of a non-number", base64.RawURLEncoding.EncodeToString([]byte("abc")), 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseCursor(c.cursor)
			if (err != nil) != c.wantErr || got != c.want {
				t.Errorf("parseCursor(%q) = %d, %v; want %d, error %t", c.cursor, got, err, c.want, c.wantErr)
			}
		})
	}
}

// The next page's URL must keep the scheme the list was asked over, or a
// client behind TLS is sent to plain HTTP.
func TestAbsoluteURL(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, scheme+"://emu.test:8443/api/links", http.NoBody)
			want := scheme + "://emu.test:8443/api/links?cursor=abc"
			if got := absoluteURL(r, "/api/links?cursor=abc"); got != want {
				t.Errorf("absoluteURL = %q, want %q", got, want)
			}
		})
	}
}
