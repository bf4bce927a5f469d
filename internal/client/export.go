package client

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
)

const pathExport = "/api/analytics/export"

// ExportAnalytics returns the click statistics as the service's raw CSV,
// for all links when linkID is "" or for that link only. The columns are
// not specified, so the body is returned unparsed.
func (c *Client) ExportAnalytics(ctx context.Context, linkID string) ([]byte, error) {
	var q url.Values
	if linkID != "" {
		q = url.Values{"linkId": {linkID}}
	}
	cl := call{method: http.MethodGet, path: pathExport, url: c.endpoint(pathExport, q), accept: "text/csv", limit: MaxCSVBodyBytes}
	resp, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	// A 200 HTML page is a proxy's (a login or maintenance page), not CSV.
	if mt, _, _ := mime.ParseMediaType(resp.contentType); mt == "text/html" {
		return nil, c.unexpected(cl, resp, "CSV", errors.New("the body is an HTML page"))
	}
	return resp.body, nil
}
