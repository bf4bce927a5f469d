// What the provider reads beyond the service's contract, through the
// Client: answers that lack fields of the link (completed from the list,
// never guessed), a list that says it has more but names no next page,
// HTML error pages of proxies. EMULATOR.md ("What the provider reads
// beyond the contract") points here. These tests stand alone because each
// crosses the tolerant reader (decode.go) and the operation that acts on
// what it read (links.go, paging.go, errors.go); the unit tests of each
// of those files are in its own _test.go.

package client

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// An answer that lacks fields of the link is completed from the list, never
// guessed.
func TestCreateLinkCompletesPartialAnswerFromList(t *testing.T) {
	list := step{body: `{"data":[{"id":"other"},` + linkJSON + `]}`}
	tests := []struct {
		name     string
		answer   string
		list     step
		want     Link
		requests []string // method of each request
	}{
		{
			name: "complete answer: no listing", answer: linkJSON, list: list,
			want: canonical, requests: []string{"POST"},
		},
		{
			name: "only id and short URL", answer: `{"id":"l-1","shortUrl":"https://sho.rt/abc"}`, list: list,
			want:     canonical,
			requests: []string{"POST", "GET"},
		},
		{
			name: "wrapped, expiresAt left out instead of null", answer: `{"link":{"id":"l-1","destination":"https://example.com/a","domain_id":"d-1","slug":"abc","short_url":"https://sho.rt/abc","created_at":"2026-01-02T03:04:05.678Z"}}`,
			list:     step{body: `[{"id":"l-1","expiresAt":"2027-01-31T23:59:59Z","qrCode":"https://sho.rt/abc.png","utm":null,"updatedAt":"2026-01-02T03:04:05.678Z"}]`},
			want:     with(func(l *Link) { l.ExpiresAt = tp("2027-01-31T23:59:59Z") }),
			requests: []string{"POST", "GET"},
		},
		{
			name: "the answer wins over the list for what it carries", answer: `{"id":"l-1","destination":"https://answer.example/","slug":"abc"}`,
			list:     list,
			want:     with(func(l *Link) { l.Destination = "https://answer.example/" }),
			requests: []string{"POST", "GET"},
		},
		{
			name: "listing refused (a write-only key): the partial link, no error", answer: `{"id":"l-1","slug":"abc"}`,
			list:     step{status: 403, body: `{"error":"insufficient_scope"}`},
			want:     Link{ID: "l-1", Slug: "abc"},
			requests: []string{"POST", "GET"},
		},
		{
			name: "link not in the list yet: the partial link", answer: `{"id":"l-1","slug":"abc"}`,
			list:     step{body: `[]`},
			want:     Link{ID: "l-1", Slug: "abc"},
			requests: []string{"POST", "GET"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, step{status: 201, body: tt.answer}, tt.list)
			got, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
			if err != nil {
				t.Fatalf("CreateLink: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("link\n got %+v\nwant %+v", *got, tt.want)
			}
			var methods []string
			for _, r := range s.requests() {
				methods = append(methods, r.Method)
			}
			if !reflect.DeepEqual(methods, tt.requests) {
				t.Fatalf("requests %v, want %v", methods, tt.requests)
			}
		})
	}
}

func TestChangeDestinationWithoutWholeLinkLeavesItToTheList(t *testing.T) {
	for name, body := range map[string]string{
		"JSON null":                    "null",
		"acknowledgement":              `{"updated":true}`,
		"acknowledgement in data":      `{"data":{"updated":true}}`,
		"id only":                      `{"id":"l-1"}`,
		"wrapped link without created": `{"data":{"id":"l-1","destination":"https://e/","domainId":"d","slug":"s","shortUrl":"https://sho.rt/s","expiresAt":null}}`,
	} {
		t.Run(name, func(t *testing.T) {
			s, srv := serve(t, step{status: 200, body: body})
			got, err := newTestClient(t, srv).ChangeDestination(context.Background(), "l-1", ChangeDestinationInput{Destination: "https://e/"})
			if err != nil || got != nil {
				t.Fatalf("got %+v, %v; want nil, nil", got, err)
			}
			if n := s.count(); n != 1 {
				t.Fatalf("%d requests, want 1: the caller lists", n)
			}
		})
	}
}

func TestListHasMoreWithoutNextPage(t *testing.T) {
	pg := servePager(t, 1, func(*pager, int) (string, map[string]string) {
		return `{"data":[{"id":"l-1"}],"hasMore":true}`, nil
	})
	_, err := pagerClient(t, pg).ListLinks(context.Background())
	if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "names no next page") {
		t.Fatalf("error = %v, want one saying the page names no next page", err)
	}
}

func TestHTMLErrorPages(t *testing.T) {
	tests := []struct {
		name, body, contentType, wantText string
	}{
		{
			"the emulator's page", "<!DOCTYPE html><html><head><title>422 Unprocessable Entity</title></head><body><h1>Unprocessable Entity</h1>" +
				"<p>destination: rejected by the fraud filter (rule &#34;blocked.example&#34;)</p></body></html>\n",
			"text/html; charset=utf-8", `Unprocessable Entity destination: rejected by the fraud filter (rule "blocked.example")`,
		},
		{
			"nginx", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			"text/html", "502 Bad Gateway nginx",
		},
		{
			"scripts, styles and comments are not text", `<html><head><STYLE>h1{color:red}</STYLE><script type="x">if (a<b) alert("x")</SCRIPT></head>` +
				`<body><!-- <p>hidden</p> -->Service &amp; Co. is <b>down</b></body></html>`,
			"", "Service & Co. is down",
		},
		{"only a title", "<html><head><title>Maintenance</title></head><body></body></html>", "text/html", "Maintenance"},
		{"unlabelled but HTML", "  <p>Forbidden</p>", "application/octet-stream", "Forbidden"},
		{"plain text is not a page", "Forbidden\n", "text/plain", ""},
		{"unterminated tag", "<html><body>Gone<p class=", "text/html", "Gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := map[string]string{}
			if tt.contentType != "" {
				header["Content-Type"] = tt.contentType
			}
			_, srv := serve(t, step{status: 422, body: tt.body, header: header})
			_, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v, want an *APIError", err)
			}
			if apiErr.PageText != tt.wantText || apiErr.Code != "blocked_by_filter" || !errors.Is(err, ErrBlocked) {
				t.Fatalf("PageText %q code %q; want %q and the status's code", apiErr.PageText, apiErr.Code, tt.wantText)
			}
			if tt.wantText != "" && !strings.Contains(err.Error(), `HTML page "`) {
				t.Errorf("Error() = %q, want it to quote the page's text", err)
			}
		})
	}
}
