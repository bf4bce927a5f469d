package client

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"time"
)

const pathExport = "/api/analytics/export"

// MaxExportRecordBytes bounds one record (one click) of the analytics
// export. The export is read one record at a time, so this bound, not the
// size of the export, is what a reading holds in memory. A click takes a
// few hundred bytes; a record thousands of times longer is a broken export.
const MaxExportRecordBytes = 1 << 20

// exportReadAhead is how much of the body is read at a time.
const exportReadAhead = 64 << 10

// ExportQuery selects the clicks of an analytics export. The service
// filters by link itself; it has no date filter, so Since and Until are
// applied while the export is read.
type ExportQuery struct {
	// LinkID is the link whose clicks are read; "" for every link of the
	// account (including deleted links).
	LinkID string
	// Since keeps clicks at or after this instant (inclusive); zero for
	// no lower bound.
	Since time.Time
	// Until keeps clicks before this instant (exclusive); zero for no
	// upper bound. Consecutive ranges that share a bound never count a
	// click twice.
	Until time.Time
}

func (q ExportQuery) hasRange() bool { return !q.Since.IsZero() || !q.Until.IsZero() }

func (q ExportQuery) includes(t time.Time) bool {
	return (q.Since.IsZero() || !t.Before(q.Since)) && (q.Until.IsZero() || t.Before(q.Until))
}

// ExportHeader is the header row of an export.
type ExportHeader struct {
	// Columns are the column names, in order. Empty when the service sent
	// an empty body (or only white space), which is read as an export
	// without clicks.
	Columns []string
	// Raw is the header row as sent: a byte order mark, quoting and the
	// line end included.
	Raw []byte
}

// ExportRow is one click of an export. Its slices belong to the reader
// and are valid only during the call to ExportVisitor.Row.
type ExportRow struct {
	// Fields holds one value per column of the header.
	Fields []string
	// Raw is the record as sent, with its line end and any blank line
	// before it: the header's Raw followed by every row's Raw is the
	// export, up to blank lines at its end.
	Raw []byte
	// ClickedAt is the time of the click, in UTC, when the reading needed
	// it (a query with a range); zero otherwise.
	ClickedAt time.Time
}

// ExportVisitor receives one reading of an export: Begin with its header,
// then Row for every click in the query's range, in the export's order.
// A reading cut short by a lost connection is retried from the start:
// Begin is then called again and must forget the rows it was given.
type ExportVisitor interface {
	Begin(ExportHeader)
	Row(ExportRow)
}

// ReadExport reads the analytics export as a stream and hands v the clicks
// in q's range. Rows outside it are dropped as they are read, so the memory
// a reading needs does not grow with the export. A range needs a column
// that holds the time of each click (clicked_at, or another usual
// spelling, see roleClickedAt).
//
// Besides the errors of every request (an *APIError; 404 when q.LinkID is
// not a link of the account), a body that is not a readable export is an
// error wrapping ErrUnexpectedResponse that says what came back: an HTML
// page, broken CSV, a record of another length than the header, a missing
// column, a time that is not RFC 3339, text that is not UTF-8.
func (c *Client) ReadExport(ctx context.Context, q ExportQuery, v ExportVisitor) error {
	var needed []columnRole
	if q.hasRange() {
		needed = []columnRole{roleClickedAt}
	}
	return c.readExport(ctx, q, needed, v)
}

func (c *Client) readExport(ctx context.Context, q ExportQuery, needed []columnRole, v ExportVisitor) error {
	var query url.Values
	if q.LinkID != "" {
		query = url.Values{"linkId": {q.LinkID}}
	}
	cl := call{method: http.MethodGet, path: pathExport, url: c.endpoint(pathExport, query), accept: "text/csv", limit: MaxCSVBodyBytes}
	cl.stream = func(resp *http.Response) error {
		// A 200 HTML page is a proxy's (a login or maintenance page), not CSV.
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" {
			return c.htmlInsteadOfCSV(resp)
		}
		return readExportBody(resp.Body, q, needed, v, c.redact)
	}
	_, err := c.do(ctx, cl)
	return err
}

func (c *Client) htmlInsteadOfCSV(resp *http.Response) error {
	begin, _, _ := readBounded(resp.Body, 200)
	return fmt.Errorf("%w: status %d, Content-Type %q, expected CSV: the body is an HTML page; it begins %q",
		ErrUnexpectedResponse, resp.StatusCode, resp.Header.Get("Content-Type"), c.redact(snippet(string(begin), 200)))
}
