package client

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
)

const pathExport = "/api/analytics/export"

// ReadExport reads the analytics export as a stream and hands v the clicks
// in q's range (analytics.Read); needed are the columns the reading cannot
// do without (a range needs the time of each click in any case). Rows
// outside the range are dropped as they are read, so the memory a reading
// needs does not grow with the export. It is an analytics.ReadFunc.
//
// Besides the errors of every request (an *APIError; 404 when q.LinkID is
// not a link of the account), a body that is not a readable export is an
// error wrapping ErrUnexpectedResponse (and analytics.ErrMalformed, unless
// it is an HTML page) that says what came back.
func (c *Client) ReadExport(ctx context.Context, q analytics.Query, needed []analytics.Column, v analytics.Visitor) error {
	var query url.Values
	if q.LinkID != "" {
		query = url.Values{"linkId": {q.LinkID}}
	}
	cl := call{method: http.MethodGet, path: pathExport, url: c.endpoint(pathExport, query), accept: "text/csv", limit: MaxCSVBodyBytes}
	cl.stream = func(resp *http.Response) error {
		// A 200 HTML page is a proxy's (a login or maintenance page), and
		// JSON an error body with the wrong status: neither is CSV.
		if kind := notCSV(resp.Header.Get("Content-Type")); kind != "" {
			return c.notCSVError(resp, kind)
		}
		err := analytics.Read(resp.Body, q, needed, v, c.redact)
		if errors.Is(err, analytics.ErrMalformed) {
			return fmt.Errorf("%w: status %d, Content-Type %q: %w", ErrUnexpectedResponse, resp.StatusCode, resp.Header.Get("Content-Type"), err)
		}
		return err
	}
	_, err := c.do(ctx, cl)
	return err
}

// notCSV names what a body of media type contentType is when it cannot be
// the export's CSV ("" when it may be: an unlabelled body is read).
func notCSV(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == "text/html":
		return "an HTML page"
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "JSON"
	}
	return ""
}

func (c *Client) notCSVError(resp *http.Response, kind string) error {
	begin, _, _ := readBounded(resp.Body, 200+int64(len(c.apiKey))) // a key across byte 200 is still found whole
	return fmt.Errorf("%w: status %d, Content-Type %q, expected CSV: the body is %s; it begins %q",
		ErrUnexpectedResponse, resp.StatusCode, resp.Header.Get("Content-Type"), kind, redactedSnippet(c.secret, string(begin), 200))
}
