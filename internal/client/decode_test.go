package client

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func tp(s string) *time.Time { t := utc(s); return &t }

// canonical is what linkJSON decodes to.
var canonical = Link{
	ID: "l-1", Destination: "https://example.com/a", DomainID: "d-1", Slug: "abc",
	ShortURL: "https://sho.rt/abc", QRCodeURL: "https://sho.rt/abc.png",
	UTMKnown:  true,
	CreatedAt: utc("2026-01-02T03:04:05.678Z"), UpdatedAt: utc("2026-01-02T03:04:05.678Z"),
}

// with returns canonical changed by f.
func with(f func(*Link)) Link {
	l := canonical
	f(&l)
	return l
}

func TestDecodeLinkVariants(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   Link
	}{
		{"canonical, 201", 201, linkJSON, canonical},
		{"canonical, 200", 200, linkJSON, canonical},
		{"data envelope", 201, `{"data":` + linkJSON + `}`, canonical},
		{"link envelope", 201, `{"link":` + linkJSON + `}`, canonical},
		{"nested envelopes", 201, `{"data":{"link":` + linkJSON + `}}`, canonical},
		{
			"snake_case", 201,
			`{"id":"l-1","destination":"https://example.com/a","domain_id":"d-1","slug":"abc","short_url":"https://sho.rt/abc",` +
				`"qr_code_url":"https://sho.rt/abc.png","expires_at":null,"utm":null,"created_at":"2026-01-02T03:04:05.678Z","updated_at":"2026-01-02T03:04:05.678Z"}`,
			canonical,
		},
		{
			"shortLink and qrCode aliases", 201,
			`{"id":"l-1","destination":"https://example.com/a","domainId":"d-1","slug":"abc","shortLink":"https://sho.rt/abc","qrCode":"https://sho.rt/abc.png","utm":null,` +
				`"createdAt":"2026-01-02T03:04:05.678Z","updatedAt":"2026-01-02T03:04:05.678Z"}`,
			canonical,
		},
		{
			"qr_code alias", 201,
			`{"id":"l-1","qr_code":"q","utm":null}`,
			Link{ID: "l-1", QRCodeURL: "q", UTMKnown: true},
		},
		{
			"unknown fields ignored, no qr code", 201,
			`{"id":"l-1","clicks":{"total":3},"tags":["a"],"archived":false,"utm":null}`,
			Link{ID: "l-1", UTMKnown: true},
		},
		{"numeric id", 201, `{"id":42}`, Link{ID: "42"}},
		{"utm absent is unknown", 201, `{"id":"l-1"}`, Link{ID: "l-1"}},
		{"utm null is known and empty", 201, `{"id":"l-1","utm":null}`, Link{ID: "l-1", UTMKnown: true}},
		{"utm empty object is known and empty", 201, `{"id":"l-1","utm":{}}`, Link{ID: "l-1", UTMKnown: true}},
		{
			"utm object", 201,
			`{"id":"l-1","utm":{"source":"news","medium":"email","campaign":"spring","term":"t","content":"c","extra":1}}`,
			Link{ID: "l-1", UTMKnown: true, UTM: &UTM{"news", "email", "spring", "t", "c"}},
		},
		{
			"utm object with prefixed keys and nulls", 201,
			`{"id":"l-1","utm":{"utm_source":"news","medium":null}}`,
			Link{ID: "l-1", UTMKnown: true, UTM: &UTM{Source: "news"}},
		},
		{
			"top-level utm_ keys", 201,
			`{"id":"l-1","utm_source":"news","utm_medium":"email","utm_campaign":null}`,
			Link{ID: "l-1", UTMKnown: true, UTM: &UTM{Source: "news", Medium: "email"}},
		},
		{
			"top-level utm_ keys all null", 201,
			`{"id":"l-1","utm_source":null}`,
			Link{ID: "l-1", UTMKnown: true},
		},
		{
			"top-level camelCase utm keys", 201,
			`{"id":"l-1","utmSource":"news"}`,
			Link{ID: "l-1", UTMKnown: true, UTM: &UTM{Source: "news"}},
		},
		{
			"utm as a query string", 201,
			`{"id":"l-1","utm":"utm_source=news&utm_campaign=spring%20sale"}`,
			Link{ID: "l-1", UTMKnown: true, UTM: &UTM{Source: "news", Campaign: "spring sale"}},
		},
		{
			"timestamps without fractional seconds", 201,
			`{"id":"l-1","expiresAt":"2027-01-31T23:59:59Z","createdAt":"2026-01-02T03:04:05Z"}`,
			Link{ID: "l-1", ExpiresAt: tp("2027-01-31T23:59:59Z"), CreatedAt: utc("2026-01-02T03:04:05Z")},
		},
		{
			"timestamps with +00:00 and other offsets are converted to UTC", 201,
			`{"id":"l-1","expiresAt":"2027-01-31T23:59:59.000+00:00","createdAt":"2026-01-02T05:04:05.5+02:00","updatedAt":"2026-01-02T03:04:05+0000"}`,
			Link{ID: "l-1", ExpiresAt: tp("2027-01-31T23:59:59Z"), CreatedAt: utc("2026-01-02T03:04:05.5Z"), UpdatedAt: utc("2026-01-02T03:04:05Z")},
		},
		{
			"timestamps with microseconds and a space separator", 201,
			`{"id":"l-1","expires_at":"2027-01-31 23:59:59.123456Z"}`,
			Link{ID: "l-1", ExpiresAt: tp("2027-01-31T23:59:59.123456Z")},
		},
		{"empty expiresAt means none", 201, `{"id":"l-1","expiresAt":""}`, Link{ID: "l-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := serve(t, step{status: tt.status, body: tt.body})
			got, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
			if err != nil {
				t.Fatalf("CreateLink: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("link\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestChangeDestinationAnswers(t *testing.T) {
	tests := []struct {
		name     string
		answer   step
		wantNil  bool
		wantLink Link
	}{
		{"204 without a body", step{status: 204}, true, Link{}},
		{"200 with an empty body", step{status: 200}, true, Link{}},
		{"200 with whitespace", step{status: 200, body: " \n"}, true, Link{}},
		{"200 with the link", step{status: 200, body: linkJSON}, false, canonical},
		{"200 with a wrapped link", step{status: 200, body: `{"data":` + linkJSON + `}`}, false, canonical},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := serve(t, tt.answer)
			got, err := newTestClient(t, srv).ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://e/"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantNil {
				if got != nil {
					t.Fatalf("got %+v, want nil", got)
				}
				return
			}
			if got == nil || !reflect.DeepEqual(*got, tt.wantLink) {
				t.Fatalf("got %+v, want %+v", got, tt.wantLink)
			}
		})
	}
}

func TestDeleteAnswers(t *testing.T) {
	for _, st := range []step{{status: 204}, {status: 200}, {status: 200, body: linkJSON}, {status: 200, body: "<html>ok</html>"}} {
		_, srv := serve(t, st)
		if err := newTestClient(t, srv).DeleteLink(context.Background(), "l-1"); err != nil {
			t.Errorf("status %d body %q: %v", st.status, st.body, err)
		}
	}
}

// A 404 to a delete is "already gone" when the service says so in its
// JSON. A page or an empty body may come from something in front of the
// service: a listing decides, and a link still listed is not gone.
func TestDeleteAnsweredNotFound(t *testing.T) {
	page := step{status: 404, body: "<h1>404 Not Found</h1>nginx", header: map[string]string{"Content-Type": "text/html"}}
	for name, tc := range map[string]struct {
		steps    []step
		gone     bool // the error matches ErrNotFound
		requests int
	}{
		"the service's JSON":             {[]step{{status: 404, body: `{"error":"not_found"}`}}, true, 1},
		"a page, link not listed":        {[]step{page, {body: `[]`}}, true, 2},
		"a page, link still listed":      {[]step{page, {body: "[" + linkJSON + "]"}}, false, 2},
		"an empty body, listing refused": {[]step{{status: 404}, {status: 404}}, false, 2},
	} {
		t.Run(name, func(t *testing.T) {
			s, srv := serve(t, tc.steps...)
			err := newTestClient(t, srv).DeleteLink(context.Background(), "l-1")
			if err == nil || IsNotFound(err) != tc.gone {
				t.Fatalf("error %v; want one that says the link is gone: %v", err, tc.gone)
			}
			if s.count() != tc.requests {
				t.Fatalf("%d requests, want %d", s.count(), tc.requests)
			}
		})
	}
}

func TestDecodeListVariants(t *testing.T) {
	two := `[` + linkJSON + `,{"id":"l-2","utm":null}]`
	want := []string{"l-1", "l-2"}
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"bare array", two, want},
		{"empty array", `[]`, []string{}},
		{"data envelope", `{"data":` + two + `}`, want},
		{"links envelope", `{"links":` + two + `}`, want},
		{"items envelope", `{"items":` + two + `,"total":2}`, want},
		{"data null", `{"data":null}`, []string{}},
		{"HAL links object beside items", `{"links":{"self":"/api/links"},"items":` + two + `}`, want},
		{"wrapped items", `[{"data":` + linkJSON + `}]`, []string{"l-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := serve(t, step{body: tt.body})
			links, err := newTestClient(t, srv).ListLinks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(links); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ids %v, want %v", got, tt.want)
			}
			if all := linksOf(links); len(all) > 0 && !reflect.DeepEqual(all[0], canonical) && tt.name != "wrapped items" {
				t.Fatalf("first link %+v, want %+v", all[0], canonical)
			}
		})
	}
}

func ids(links Listing) []string {
	out := []string{}
	for l := range links.All() {
		out = append(out, l.ID)
	}
	return out
}

// linksOf is every link of a listing, in order.
func linksOf(links Listing) []Link {
	return slices.Collect(links.All())
}

func TestMalformedSuccessBodies(t *testing.T) {
	type op func(*Client) error
	create := func(c *Client) error {
		_, err := c.CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		return err
	}
	list := func(c *Client) error { _, err := c.ListLinks(context.Background()); return err }
	change := func(c *Client) error {
		_, err := c.ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://e/"})
		return err
	}
	tests := []struct {
		name      string
		op        op
		answer    step
		wantInErr []string
		ambiguous bool
	}{
		{"create: truncated JSON", create, step{status: 201, body: `{"id":"l-1","destin`}, []string{"201", "not valid JSON", `{\"id\":\"l-1\"`}, true},
		{"create: HTML with 200", create, step{status: 200, body: "<html><body>Sign in</body></html>", header: map[string]string{"Content-Type": "text/html; charset=utf-8"}}, []string{"200", "text/html", "<html><body>Sign in"}, true},
		{"create: empty body", create, step{status: 201}, []string{"empty"}, true},
		{"create: null", create, step{status: 201, body: "null"}, []string{"null"}, true},
		{"create: array", create, step{status: 201, body: "[]"}, []string{"an array"}, true},
		{"create: no id", create, step{status: 201, body: `{"destination":"https://e/"}`}, []string{`"id"`}, true},
		{"create: empty id", create, step{status: 201, body: `{"id":""}`}, []string{`no "id"`}, true},
		{"create: destination is a number", create, step{status: 201, body: `{"id":"l","destination":5}`}, []string{`"destination": expected a string, got a number`}, true},
		{"create: id is an object", create, step{status: 201, body: `{"id":{"v":1}}`}, []string{`"id"`, "an object"}, true},
		{"create: createdAt is a number", create, step{status: 201, body: `{"id":"l","createdAt":1700000000}`}, []string{`"createdAt"`, "a number"}, true},
		{"create: bad timestamp", create, step{status: 201, body: `{"id":"l","expiresAt":"31/01/2027"}`}, []string{`"expiresAt"`, "RFC 3339"}, true},
		{"create: utm is a number", create, step{status: 201, body: `{"id":"l","utm":3}`}, []string{`"utm"`}, true},
		{"create: utm source is a bool", create, step{status: 201, body: `{"id":"l","utm":{"source":true}}`}, []string{`"source"`}, true},
		{"create: top-level utm_source is a number", create, step{status: 201, body: `{"id":"l","utm_source":1}`}, []string{`"utm_source"`}, true},
		{"list: truncated JSON", list, step{body: `[{"id":"l-1"}`}, []string{"ends after item 0 of the list", "cut short"}, false},
		{"list: HTML with 200", list, step{body: "<!DOCTYPE html><html>", header: map[string]string{"Content-Type": "text/html"}}, []string{"text/html", "<!DOCTYPE html>"}, false},
		// A page is quoted once, by the text it shows.
		{"list: HTML page with 200", list, step{body: "<!DOCTYPE html><html><title>Portal</title><body>Sign in</body></html>", header: map[string]string{"Content-Type": "text/html"}}, []string{`text/html", expected a list of links: the answer is an HTML page "Sign in")`}, false},
		{"list: text with 200", list, step{body: "Sign in"}, []string{`the answer is not JSON; the answer begins "Sign in")`}, false},
		{"list: a word like JSON with 200", list, step{body: "nope"}, []string{`the answer is not JSON; the answer begins "nope")`}, false},
		{"list: object without a list", list, step{body: `{"count":0}`}, []string{"no list of links"}, false},
		{"list: data is a string", list, step{body: `{"data":"x"}`}, []string{"no list of links"}, false},
		{"list: item is a string", list, step{body: `["l-1"]`}, []string{"item 0"}, false},
		{"list: item has a wrong type", list, step{body: `[{"id":"l-1"},{"id":"l-2","slug":[]}]`}, []string{"item 1", `"slug"`}, false},
		{"change: HTML with 200", change, step{body: "<html></html>", header: map[string]string{"Content-Type": "text/html"}}, []string{"text/html"}, false},
		{"change: wrong type", change, step{body: `{"id":"l","shortUrl":1}`}, []string{`"shortUrl"`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, tt.answer)
			err := tt.op(newTestClient(t, srv))
			if !errors.Is(err, ErrUnexpectedResponse) {
				t.Fatalf("error = %v, want ErrUnexpectedResponse", err)
			}
			for _, want := range tt.wantInErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if got := errors.Is(err, ErrAmbiguous); got != tt.ambiguous {
				t.Errorf("errors.Is(err, ErrAmbiguous) = %v, want %v", got, tt.ambiguous)
			}
			if n := s.count(); n != 1 {
				t.Errorf("%d requests, want 1 (a malformed success is not retried)", n)
			}
		})
	}
}

func TestMissingFields(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{linkJSON, nil},
		{`{"id":"l"}`, []string{"destination", "domainId", "slug", "shortUrl", "expiresAt", "createdAt"}},
		{`{"id":"l","destination":null,"domain_id":"d","slug":"s","shortLink":"u","expires_at":null,"created_at":"2026-01-02T03:04:05Z"}`, []string{"destination"}},
		{`{"id":"l","destinationUrl":"https://e/","domainID":"d","slug":"s","short_link":"u","expiresAt":"2027-01-31T23:59:59Z","createdAt":null}`, []string{"createdAt"}},
	}
	for _, tt := range tests {
		_, missing, err := decodeLink([]byte(tt.body))
		if err != nil || !reflect.DeepEqual(missing, tt.want) {
			t.Errorf("decodeLink(%s) missing %v, %v; want %v", tt.body, missing, err, tt.want)
		}
	}
}

// Found by FuzzDecodeLink: percent-decoding a utm query string can yield
// bytes that are not UTF-8, which Terraform's state cannot hold.
func TestUTMQueryStringMustDecodeToText(t *testing.T) {
	_, _, err := decodeLink([]byte(`{"id":"l-1","utm":"utm_campaign=spring%80"}`))
	if err == nil || !strings.Contains(err.Error(), "not UTF-8") {
		t.Fatalf("error = %v, want one saying the value is not UTF-8", err)
	}
	l, _, err := decodeLink([]byte(`{"id":"l-1","utm":"utm_campaign=fr%C3%BChling"}`))
	if err != nil || l.UTM == nil || l.UTM.Campaign != "frühling" {
		t.Fatalf("got %+v, %v", l, err)
	}
}
