package client

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
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

// ParseExport reads an analytics export as RFC 4180 CSV: a header row naming
// the columns, then one record per row. Quoted fields may hold commas,
// quotes and line breaks; lines may end in CRLF or LF; a leading byte order
// mark (as spreadsheets write) is ignored. Each row maps every column name
// to its value.
//
// Malformed input is an error, never a guess: an empty body (no header
// row), a column named twice, a row whose number of fields differs from the
// header's, or broken quoting.
func ParseExport(body []byte) (columns []string, rows []map[string]string, err error) {
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(body, []byte("\uFEFF"))))
	r.FieldsPerRecord = -1 // checked below, with a clearer message
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, errors.New("export: the body is empty; expected a header row naming the columns")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("export: header row: %w", err)
	}
	seen := make(map[string]bool, len(header))
	for _, name := range header {
		if seen[name] {
			return nil, nil, fmt.Errorf("export: the header row names the column %q twice", name)
		}
		seen[name] = true
	}
	rows = []map[string]string{}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			return header, rows, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("export: %w", err)
		}
		if len(record) != len(header) {
			line, _ := r.FieldPos(0)
			return nil, nil, fmt.Errorf("export: the record on line %d has %d fields, but the header row names %d columns", line, len(record), len(header))
		}
		row := make(map[string]string, len(header))
		for i, name := range header {
			row[name] = record[i]
		}
		rows = append(rows, row)
	}
}
