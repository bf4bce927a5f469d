// Package analytics reads the service's click analytics: the CSV export,
// one click at a time, and the counts kept of it (per link, per day, per
// referrer). It knows nothing of HTTP: the client hands it the export's
// body as a stream (client.ReadExport).
package analytics

import (
	"errors"
	"time"
)

// ErrMalformed marks an export that cannot be read: broken CSV, a record
// of another length than the header, a missing column, a time that is not
// RFC 3339, text that is not UTF-8.
var ErrMalformed = errors.New("export")

// MaxRecordBytes bounds one record (one click) of the analytics
// export. The export is read one record at a time, so this bound, not the
// size of the export, is what a reading holds in memory. A click takes a
// few hundred bytes; a record thousands of times longer is a broken export.
const MaxRecordBytes = 1 << 20

// readAhead is how much of the body is read at a time.
const readAhead = 64 << 10

// Query selects the clicks of an analytics export. The service
// filters by link itself; it has no date filter, so Since and Until are
// applied while the export is read.
type Query struct {
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

func (q Query) hasRange() bool { return !q.Since.IsZero() || !q.Until.IsZero() }

func (q Query) includes(t time.Time) bool {
	return (q.Since.IsZero() || !t.Before(q.Since)) && (q.Until.IsZero() || t.Before(q.Until))
}

// Header is the header row of an export.
type Header struct {
	// Columns are the column names, in order. Empty when the service sent
	// an empty body (or only white space), which is read as an export
	// without clicks.
	Columns []string
	// Raw is the header row as sent: a byte order mark, quoting and the
	// line end included.
	Raw []byte
}

// Row is one click of an export. Its slices belong to the reader
// and are valid only during the call to Visitor.Row.
type Row struct {
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

// Visitor receives one reading of an export: Begin with its header,
// then Row for every click in the query's range, in the export's order.
// A reading cut short by a lost connection is retried from the start:
// Begin is then called again and must forget the rows it was given.
type Visitor interface {
	Begin(Header)
	Row(Row)
}
