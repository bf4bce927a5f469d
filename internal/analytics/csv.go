package analytics

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// Read reads an export as RFC 4180 CSV: a header row naming the
// columns, then one record per click. Quoted fields may hold commas,
// quotes and line breaks; lines may end in CRLF or LF; a leading byte order
// mark (as spreadsheets write) is ignored. needed are the columns the
// reading cannot do without.
//
// Malformed input is an error, never a guess: a column named twice, a
// record whose number of fields differs from the header's, broken quoting,
// a record over MaxRecordBytes, text that is not UTF-8, a time that
// cannot be read where one is needed.
func Read(body io.Reader, q Query, needed []Column, v Visitor, redact func(string) string) error {
	r := newExportReader(body, redact)
	header, err := r.header()
	if err != nil {
		return err
	}
	v.Begin(header)
	timeColumn := -1
	if len(header.Columns) > 0 {
		for _, role := range needed {
			if role.find(header.Columns) < 0 {
				return missingColumn(header.Columns, role, redact)
			}
		}
		if q.hasRange() || hasRole(needed, ClickedAt) {
			timeColumn = ClickedAt.find(header.Columns)
			if timeColumn < 0 {
				return missingColumn(header.Columns, ClickedAt, redact)
			}
		}
	}
	for {
		row, err := r.next(len(header.Columns))
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if timeColumn >= 0 {
			t, err := wire.ParseTime(row.Fields[timeColumn])
			if err != nil {
				return r.malformed("column %q: %v", header.Columns[timeColumn], err)
			}
			if !q.includes(t) {
				continue
			}
			row.ClickedAt = t
		}
		v.Row(row)
	}
}

// exportReader reads an export record by record, holding one at a time.
type exportReader struct {
	rec    *recorder
	csv    *csv.Reader
	bom    int64 // length of the byte order mark skipped, 0 or 3
	line   int   // line of the last record read, for messages
	redact func(string) string
}

var byteOrderMark = []byte("\uFEFF")

func newExportReader(body io.Reader, redact func(string) string) *exportReader {
	rec := &recorder{r: body}
	br := bufio.NewReaderSize(rec, readAhead)
	r := &exportReader{rec: rec, redact: redact}
	if b, _ := br.Peek(len(byteOrderMark)); bytes.Equal(b, byteOrderMark) {
		_, _ = br.Discard(len(byteOrderMark))
		r.bom = int64(len(byteOrderMark))
	}
	r.csv = csv.NewReader(br)  // uses br itself: it is large enough
	r.csv.FieldsPerRecord = -1 // checked by next, with a clearer message
	r.csv.ReuseRecord = true
	return r
}

// header reads the header row. A body without one (empty, or only white
// space) is an export without clicks.
func (r *exportReader) header() (Header, error) {
	record, err := r.read()
	if errors.Is(err, io.EOF) {
		return Header{Columns: []string{}, Raw: r.rec.take(r.bom + r.csv.InputOffset())}, nil
	}
	if err != nil {
		return Header{}, err
	}
	h := Header{Raw: r.rec.take(r.bom + r.csv.InputOffset())}
	if !utf8.Valid(h.Raw) {
		return Header{}, r.malformed("the header row is not UTF-8 text")
	}
	if len(record) == 1 && strings.TrimSpace(record[0]) == "" {
		return Header{Columns: []string{}, Raw: h.Raw}, nil
	}
	h.Columns = append([]string(nil), record...) // record is reused
	seen := make(map[string]bool, len(h.Columns))
	for _, name := range h.Columns {
		if seen[name] {
			return Header{}, r.malformed("the header row names the column %q twice", wire.Snippet(r.redact(name), 100))
		}
		seen[name] = true
	}
	return h, nil
}

// next reads the next record, which must have one field per column.
func (r *exportReader) next(columns int) (Row, error) {
	record, err := r.read()
	if err != nil {
		return Row{}, err
	}
	raw := r.rec.take(r.bom + r.csv.InputOffset())
	if len(record) != columns {
		return Row{}, r.malformed("the record has %d fields, but the header row names %d columns", len(record), columns)
	}
	if !utf8.Valid(raw) {
		return Row{}, r.malformed("the record is not UTF-8 text")
	}
	return Row{Fields: record, Raw: raw}, nil
}

// read is csv.Reader.Read with its errors explained. A transport error is
// returned as it is, so that the request is retried.
func (r *exportReader) read() ([]string, error) {
	record, err := r.csv.Read()
	var parseErr *csv.ParseError
	switch {
	case err == nil:
		r.line, _ = r.csv.FieldPos(0)
		return record, nil
	case errors.As(err, &parseErr):
		return nil, fmt.Errorf("%w: %w", ErrMalformed, parseErr)
	case errors.Is(err, errRecordTooLarge):
		return nil, fmt.Errorf("%w: the record after line %d is longer than %d MiB, the most one click may take", ErrMalformed, r.line, MaxRecordBytes>>20)
	}
	return nil, err
}

// malformed is an error about the record (or header) read last. It may
// quote the export, so it is redacted.
func (r *exportReader) malformed(format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrMalformed, r.line, r.redact(fmt.Sprintf(format, args...)))
}

var errRecordTooLarge = errors.New("record too large")

// recorder keeps the bytes of the body from the start of the record being
// read, so that each record can be handed on as it was sent, and refuses a
// record longer than MaxRecordBytes before it is held in memory.
type recorder struct {
	r     io.Reader
	buf   []byte // body bytes from the start of the previous record on
	head  int    // buf[head:] begins at the current record
	start int64  // body offset of buf[head]
	read  int64  // body bytes read so far
}

func (c *recorder) Read(p []byte) (int, error) {
	if c.read-c.start > MaxRecordBytes+readAhead {
		return 0, errRecordTooLarge
	}
	if c.head > 0 && len(c.buf)+len(p) > cap(c.buf) {
		// The records before head were handed on already: reuse their room.
		c.buf = c.buf[:copy(c.buf, c.buf[c.head:])]
		c.head = 0
	}
	n, err := c.r.Read(p)
	c.buf = append(c.buf, p[:n]...)
	c.read += int64(n)
	return n, err
}

// take returns the body from the start of the current record up to the
// offset end, where the next record starts. The bytes stay valid until the
// next Read.
func (c *recorder) take(end int64) []byte {
	n := c.head + int(end-c.start)
	raw := c.buf[c.head:n:n]
	c.head, c.start = n, end
	return raw
}
