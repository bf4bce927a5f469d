// Fuzz targets of the tolerant reader: the link decoder (decode.go), the
// list decoder and its paging (decode.go, paging.go), the export's CSV
// reader (export.go) and the reader of error bodies (errors.go). Whatever
// the service (or a proxy in front of it) answers, decoding returns a
// value or an error, never panics, and what it returns is consistent. Seed
// corpora covering each variant of DESIGN.md are in
// testdata/fuzz/<FuzzName>/ and below; `make fuzz` runs each target for a
// short while. The targets stand together, apart from each file's tests,
// because they share their checks of what a decoded value may be
// (checkLink, checkTable) and are run as a set, by `make fuzz`.

package client

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"
)

// FuzzDecodeLink feeds the link decoder (create and change answers, list
// items).
func FuzzDecodeLink(f *testing.F) {
	for _, s := range []string{
		linkJSON,
		`{"data":` + linkJSON + `}`,
		`{"link":` + linkJSON + `}`,
		`{"data":{"link":{"id":"l-1"}}}`,
		`{"id":"l-1","destination":"https://example.com/a","domain_id":"d-1","slug":"abc","short_url":"https://sho.rt/abc","qr_code_url":"q","expires_at":"2027-01-31T23:59:59Z","created_at":"2026-01-02T03:04:05+00:00","utm":null}`,
		`{"id":"l-1","shortLink":"https://sho.rt/abc","qrCode":"q","expiresAt":"2027-01-31T23:59:59.000+00:00"}`,
		`{"id":42,"utm_source":"news","utm_medium":null,"utmCampaign":"spring"}`,
		`{"id":"l-1","utm":{"source":"news","utm_medium":"email","term":null}}`,
		`{"id":"l-1","utm":"utm_source=news&campaign=spring%20sale"}`,
		`{"id":"l-1","destination":"https://example.com/?utm_source=news&utm_medium=email"}`,
		`{"id":"l-1","expires_at":"2027-01-31 23:59:59.123456Z","createdAt":"2026-01-02T03:04:05+0000"}`,
		`{"updated":true}`, `null`, `[]`, `"x"`, ``, `{"id":""}`, `{"id":{"v":1}}`, `{"id":"l","createdAt":1}`,
		`<html><body>Sign in</body></html>`, `{"id":"l-1","destin`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		l, missing, err := decodeLink(body)
		if err != nil {
			if l != nil || missing != nil {
				t.Fatalf("error %v with a result %+v, %v", err, l, missing)
			}
			return
		}
		checkLink(t, l)
		for _, name := range missing {
			if !slices.ContainsFunc(linkFields, func(f linkField) bool { return f.name == name }) {
				t.Fatalf("missing names %q, not a link field", name)
			}
		}
		// What was read, written back in the canonical shape, reads the same.
		again, _, err := decodeLink(encodeLink(l))
		if err != nil {
			t.Fatalf("re-decoding %s: %v", encodeLink(l), err)
		}
		if !sameLink(l, again) {
			t.Fatalf("round trip changed the link:\n%+v utm %+v\n%+v utm %+v", *l, l.UTM, *again, again.UTM)
		}
	})
}

// FuzzDecodeListPage feeds the list decoder and the paging that follows it:
// a page body and a Link header. A next page is only ever on the
// configured origin, and the Link header's target is one it named.
func FuzzDecodeListPage(f *testing.F) {
	two := `[` + linkJSON + `,{"id":"l-2","utm":null}]`
	for _, s := range []struct{ body, link string }{
		{two, ""},
		{`{"data":` + two + `}`, ""},
		{`{"links":` + two + `,"next":null}`, ""},
		{`{"items":` + two + `,"total":2}`, ""},
		{`{"data":[{"id":"l-1"}],"nextCursor":"MQ"}`, ""},
		{`{"data":[{"id":"l-1"}],"next_cursor":"MQ","has_more":true}`, ""},
		{`{"data":[{"id":"l-1"}],"cursor":12}`, ""},
		{`{"data":[{"id":"l-1"}],"meta":{"nextCursor":"c2"}}`, ""},
		{`{"data":[{"id":"l-1"}],"next":"https://api.example.test/prefix/api/links?cursor=MQ"}`, ""},
		{`{"data":[{"id":"l-1"}],"next":"/prefix/api/links?cursor=MQ"}`, ""},
		{`{"data":[{"id":"l-1"}],"next":"https://evil.example/api/links?cursor=MQ"}`, ""},
		{`{"data":[],"hasMore":true}`, ""},
		{`[{"id":"l-1"}]`, `<https://api.example.test/prefix/api/links?cursor=MQ>; rel="next", </x>; rel="prev"`},
		{`[{"id":"l-1"}]`, `</prefix/api/links?page=2>; title="a,b"; rel=next`},
		{`[]`, `<http://[::1]:80/x>; rel="next"`},
		{`{"links":{"self":"/api/links"},"items":[]}`, `garbage>, <unterminated; rel="next"`},
		{`{"data":"x"}`, ""}, {`[{"id":"l-1"}`, ""}, {`["l-1"]`, ""}, {``, ""}, {`<!DOCTYPE html>`, ""},
	} {
		f.Add([]byte(s.body), s.link)
	}
	c, err := New(Config{BaseURL: "https://api.example.test/prefix", APIKey: testKey})
	if err != nil {
		f.Fatal(err)
	}
	cur, _ := url.Parse("https://api.example.test/prefix/api/links?cursor=MA")
	f.Fuzz(func(t *testing.T, body []byte, link string) {
		header := http.Header{}
		if link != "" {
			header.Set("Link", link)
		}
		if target := linkHeaderNext(header.Values("Link")); target != "" && !strings.Contains(link, "<"+target+">") {
			t.Fatalf("Link header %q: next %q is not one of its targets", link, target)
		}
		links, p, err := newListStream(bytes.NewReader(body)).decodeList()
		links2, p2, err2 := newListStream(iotest.OneByteReader(bytes.NewReader(body))).decodeList()
		if (err == nil) != (err2 == nil) || (err == nil && (!reflect.DeepEqual(linksOf(links), linksOf(links2)) || !reflect.DeepEqual(p, p2))) {
			t.Fatalf("read whole and a byte at a time, the list differs: %v, %v", err, err2)
		}
		if err != nil {
			return
		}
		for l := range links.All() {
			checkLink(t, &l)
		}
		if want, ok := itemsOneByOne(body); ok && !reflect.DeepEqual(linksOf(links), want) {
			t.Fatalf("the list's links\n%+v\ndiffer from its items read one by one\n%+v", linksOf(links), want)
		}
		next, err := c.nextPage(cur, p, header)
		if err != nil || next == "" {
			return
		}
		u, err := url.Parse(next)
		if err != nil {
			t.Fatalf("next page %q is not a URL: %v", next, err)
		}
		if origin(u) != origin(c.baseURL) {
			t.Fatalf("next page %q leaves %s", next, origin(c.baseURL))
		}
		if u.Fragment != "" {
			t.Fatalf("next page %q keeps a fragment", next)
		}
	})
}

// itemsOneByOne reads a bare array's items with the link decoder, each
// link once, in its first place, as its last version: what the streamed
// list must hold. ok is false for a body that is not such an array.
func itemsOneByOne(body []byte) ([]Link, bool) {
	var items []json.RawMessage
	if json.Unmarshal(body, &items) != nil || items == nil {
		return nil, false
	}
	var out []Link
	place := map[string]int{}
	for _, item := range items {
		l, _, err := decodeLink(item)
		if err != nil {
			return nil, false
		}
		// One link per ID as LinkSet compares IDs: a UUID in capitals is the
		// same link (ComparableID).
		if i, seen := place[ComparableID(l.ID)]; seen {
			out[i] = *l
			continue
		}
		place[ComparableID(l.ID)] = len(out)
		out = append(out, *l)
	}
	return out, true
}

// FuzzErrorBody feeds the reader of error bodies: JSON in its variants,
// HTML pages from proxies, anything else.
func FuzzErrorBody(f *testing.F) {
	for _, s := range []string{
		`{"error":"blocked_by_filter","message":"destination: rejected"}`,
		`{"error":{"code":"slug_taken","message":"taken"}}`,
		`{"code":"invalid_request","detail":"slug: bad"}`,
		`{"error":"Link not found"}`,
		"<!DOCTYPE html><html><head><title>422 Unprocessable Entity</title></head><body><h1>Unprocessable Entity</h1><p>destination: &#34;x&#34;</p></body></html>\n",
		"<html><head><style>p{}</style><script>if(a<b){}</script></head><body><!-- c -->502 Bad Gateway</body></html>",
		"<p class=", "<!--", "<script>", "Unauthorized\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		code, message, isJSON := parseErrorBody(body)
		if !isJSON && (code != "" || message != "") {
			t.Fatalf("a non-JSON body gave code %q, message %q", code, message)
		}
		text := htmlText(body)
		if text != strings.TrimSpace(text) || strings.Contains(text, "  ") {
			t.Fatalf("page text %q is not collapsed", text)
		}
		if utf8.Valid(body) && !utf8.ValidString(text) {
			t.Fatalf("page text %q of valid UTF-8 is not valid UTF-8", text)
		}
		e := newAPIError("POST", "/api/links", &response{status: 422, body: body, header: http.Header{"Content-Type": {"text/html"}}, contentType: "text/html"}, NewSecret(""))
		_ = e.Error()
	})
}

// checkLink checks what every decoded link satisfies.
func checkLink(t *testing.T, l *Link) {
	t.Helper()
	if l.ID == "" {
		t.Fatalf("decoded a link without an ID: %+v", l)
	}
	for _, tm := range []*time.Time{l.ExpiresAt, &l.CreatedAt, &l.UpdatedAt} {
		if tm != nil && !tm.IsZero() && tm.Location() != time.UTC {
			t.Fatalf("timestamp %v is not in UTC", tm)
		}
	}
	if l.UTM != nil && (*l.UTM == UTM{}) {
		t.Fatal("an empty UTM must be nil")
	}
	if l.UTM != nil && !l.UTMKnown {
		t.Fatal("UTM set but not known")
	}
}

// encodeLink writes l in the canonical shape of the contract.
func encodeLink(l *Link) []byte {
	o := map[string]any{"id": l.ID}
	for k, v := range map[string]string{
		"destination": l.Destination, "domainId": l.DomainID, "slug": l.Slug, "shortUrl": l.ShortURL, "qrCodeUrl": l.QRCodeURL,
	} {
		if v != "" {
			o[k] = v
		}
	}
	o["expiresAt"] = nil
	if l.ExpiresAt != nil {
		o["expiresAt"] = l.ExpiresAt.Format(time.RFC3339Nano)
	}
	if !l.CreatedAt.IsZero() {
		o["createdAt"] = l.CreatedAt.Format(time.RFC3339Nano)
	}
	if !l.UpdatedAt.IsZero() {
		o["updatedAt"] = l.UpdatedAt.Format(time.RFC3339Nano)
	}
	if l.UTMKnown {
		o["utm"] = nil
		if l.UTM != nil {
			o["utm"] = utmBody(*l.UTM)
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}

func sameLink(a, b *Link) bool {
	sameTime := func(x, y *time.Time) bool {
		if x == nil || y == nil {
			return x == nil && y == nil
		}
		return x.Equal(*y)
	}
	ac, bc := *a, *b
	ac.ExpiresAt, bc.ExpiresAt = nil, nil
	ac.CreatedAt, bc.CreatedAt = time.Time{}, time.Time{}
	ac.UpdatedAt, bc.UpdatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(ac, bc) && sameTime(a.ExpiresAt, b.ExpiresAt) &&
		a.CreatedAt.Equal(b.CreatedAt) && a.UpdatedAt.Equal(b.UpdatedAt)
}
