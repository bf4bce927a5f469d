package client

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
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

// columnRole is a column the reader looks for by meaning, since the
// specification does not show the export's columns: any of its spellings
// matches, ignoring case, '_', '-', '.' and spaces.
type columnRole struct {
	meaning   string
	spellings []string // in order of preference
}

var (
	roleClickedAt = columnRole{"the time of each click", []string{"clicked_at", "click_time", "clicked_on", "timestamp", "time", "occurred_at", "created_at", "date_time"}}
	roleLinkID    = columnRole{"the link of each click", []string{"link_id", "short_link_id"}}
	roleReferrer  = columnRole{"the referrer of each click", []string{"referrer", "referer", "referrer_url", "referer_url", "http_referer", "http_referrer"}}
)

// find returns the index of the role's column in columns, or -1.
func (r columnRole) find(columns []string) int {
	for _, spelling := range r.spellings {
		want := normalizeColumn(spelling)
		for i, c := range columns {
			if normalizeColumn(c) == want {
				return i
			}
		}
	}
	return -1
}

func normalizeColumn(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(name)))
}

// missingColumn explains a header row without a column the reading needs.
func missingColumn(columns []string, r columnRole, redact func(string) string) error {
	return fmt.Errorf("%w: export: the header row names the columns %s, none of which holds %s (looked for %s)",
		ErrUnexpectedResponse, redact(snippet(quoteAll(columns), 300)), r.meaning, strings.Join(r.spellings, ", "))
}

func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(quoted, ", ")
}

// readExportBody reads an export as RFC 4180 CSV: a header row naming the
// columns, then one record per click. Quoted fields may hold commas,
// quotes and line breaks; lines may end in CRLF or LF; a leading byte order
// mark (as spreadsheets write) is ignored. needed are the columns the
// reading cannot do without.
//
// Malformed input is an error, never a guess: a column named twice, a
// record whose number of fields differs from the header's, broken quoting,
// a record over MaxExportRecordBytes, text that is not UTF-8, a time that
// cannot be read where one is needed.
func readExportBody(body io.Reader, q ExportQuery, needed []columnRole, v ExportVisitor, redact func(string) string) error {
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
		if q.hasRange() || hasRole(needed, roleClickedAt) {
			timeColumn = roleClickedAt.find(header.Columns)
			if timeColumn < 0 {
				return missingColumn(header.Columns, roleClickedAt, redact)
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
			t, err := parseTime(row.Fields[timeColumn])
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

func hasRole(roles []columnRole, r columnRole) bool {
	for _, x := range roles {
		if x.meaning == r.meaning {
			return true
		}
	}
	return false
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
	br := bufio.NewReaderSize(rec, exportReadAhead)
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
func (r *exportReader) header() (ExportHeader, error) {
	record, err := r.read()
	if errors.Is(err, io.EOF) {
		return ExportHeader{Columns: []string{}, Raw: r.rec.take(r.bom + r.csv.InputOffset())}, nil
	}
	if err != nil {
		return ExportHeader{}, err
	}
	h := ExportHeader{Raw: r.rec.take(r.bom + r.csv.InputOffset())}
	if !utf8.Valid(h.Raw) {
		return ExportHeader{}, r.malformed("the header row is not UTF-8 text")
	}
	if len(record) == 1 && strings.TrimSpace(record[0]) == "" {
		return ExportHeader{Columns: []string{}, Raw: h.Raw}, nil
	}
	h.Columns = append([]string(nil), record...) // record is reused
	seen := make(map[string]bool, len(h.Columns))
	for _, name := range h.Columns {
		if seen[name] {
			return ExportHeader{}, r.malformed("the header row names the column %q twice", snippet(name, 100))
		}
		seen[name] = true
	}
	return h, nil
}

// next reads the next record, which must have one field per column.
func (r *exportReader) next(columns int) (ExportRow, error) {
	record, err := r.read()
	if err != nil {
		return ExportRow{}, err
	}
	raw := r.rec.take(r.bom + r.csv.InputOffset())
	if len(record) != columns {
		return ExportRow{}, r.malformed("the record has %d fields, but the header row names %d columns", len(record), columns)
	}
	if !utf8.Valid(raw) {
		return ExportRow{}, r.malformed("the record is not UTF-8 text")
	}
	return ExportRow{Fields: record, Raw: raw}, nil
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
		return nil, fmt.Errorf("%w: export: %w", ErrUnexpectedResponse, parseErr)
	case errors.Is(err, errRecordTooLarge):
		return nil, fmt.Errorf("%w: export: the record after line %d is longer than %d MiB, the most one click may take", ErrUnexpectedResponse, r.line, MaxExportRecordBytes>>20)
	}
	return nil, err
}

// malformed is an error about the record (or header) read last. It may
// quote the export, so it is redacted.
func (r *exportReader) malformed(format string, args ...any) error {
	return fmt.Errorf("%w: export: line %d: %s", ErrUnexpectedResponse, r.line, r.redact(fmt.Sprintf(format, args...)))
}

var errRecordTooLarge = errors.New("record too large")

// recorder keeps the bytes of the body from the start of the record being
// read, so that each record can be handed on as it was sent, and refuses a
// record longer than MaxExportRecordBytes before it is held in memory.
type recorder struct {
	r     io.Reader
	buf   []byte // body bytes from the start of the previous record on
	head  int    // buf[head:] begins at the current record
	start int64  // body offset of buf[head]
	read  int64  // body bytes read so far
}

func (c *recorder) Read(p []byte) (int, error) {
	if c.read-c.start > MaxExportRecordBytes+exportReadAhead {
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

// TopReferrers is how many referrers a ClickSummary ranks.
const TopReferrers = 10

// MaxTrackedReferrers bounds the distinct referrers a ClickSummary counts
// at once, and so its memory; see referrerCounter.
const MaxTrackedReferrers = 10_000

// ClickSummary counts the clicks of an export. Its size grows with the
// links and days that had clicks, never with the number of clicks.
type ClickSummary struct {
	Total int64
	// ByLink maps a link ID to its clicks; links without clicks are absent.
	ByLink map[string]int64
	// ByDay maps a UTC date (YYYY-MM-DD) to its clicks; days without clicks
	// are absent.
	ByDay map[string]int64
	// FirstClick and LastClick are the earliest and latest click, in UTC;
	// zero without clicks.
	FirstClick, LastClick time.Time
	// TopReferrers are the most frequent referrers, at most TopReferrers:
	// most clicks first, ties in byte order of the referrer. A click
	// without a referrer counts for "".
	TopReferrers []ReferrerClicks
	// ReferrersExact is false when the clicks came from more than
	// MaxTrackedReferrers distinct referrers: TopReferrers then holds
	// upper bounds (see referrerCounter).
	ReferrersExact bool
}

// ReferrerClicks is a referrer and its clicks.
type ReferrerClicks struct {
	Referrer string
	Clicks   int64
}

// SummarizeClicks reads the export of q as ReadExport does and counts its
// clicks: in total, per link, per UTC day and per referrer. The export must
// name the time, the link and the referrer of each click.
func (c *Client) SummarizeClicks(ctx context.Context, q ExportQuery) (*ClickSummary, error) {
	var counter clickCounter
	if err := c.readExport(ctx, q, summaryColumns, &counter); err != nil {
		return nil, err
	}
	return counter.summary(), nil
}

// summaryColumns are the columns SummarizeClicks needs.
var summaryColumns = []columnRole{roleClickedAt, roleLinkID, roleReferrer}

// clickCounter is the ExportVisitor of SummarizeClicks.
type clickCounter struct {
	linkColumn, referrerColumn int
	total                      int64
	byLink                     map[string]int64
	byDay                      map[int64]int64 // days since 1970-01-01
	first, last                time.Time
	referrers                  *referrerCounter
}

func (s *clickCounter) Begin(h ExportHeader) {
	*s = clickCounter{
		linkColumn:     roleLinkID.find(h.Columns),
		referrerColumn: roleReferrer.find(h.Columns),
		byLink:         map[string]int64{},
		byDay:          map[int64]int64{},
		referrers:      newReferrerCounter(MaxTrackedReferrers),
	}
}

func (s *clickCounter) Row(r ExportRow) {
	s.total++
	increment(s.byLink, r.Fields[s.linkColumn])
	s.byDay[daysSinceEpoch(r.ClickedAt)]++
	if s.first.IsZero() || r.ClickedAt.Before(s.first) {
		s.first = r.ClickedAt
	}
	if r.ClickedAt.After(s.last) {
		s.last = r.ClickedAt
	}
	s.referrers.add(r.Fields[s.referrerColumn])
}

// increment counts key, copying it on first sight: a field read from the
// export shares its memory with the whole record.
func increment(m map[string]int64, key string) {
	if n, ok := m[key]; ok {
		m[key] = n + 1
		return
	}
	m[strings.Clone(key)] = 1
}

const secondsPerDay = 24 * 60 * 60

func daysSinceEpoch(t time.Time) int64 {
	s := t.Unix()
	d := s / secondsPerDay
	if s%secondsPerDay < 0 {
		d-- // round towards the past for times before 1970
	}
	return d
}

func (s *clickCounter) summary() *ClickSummary {
	out := &ClickSummary{
		Total:          s.total,
		ByLink:         s.byLink,
		ByDay:          make(map[string]int64, len(s.byDay)),
		FirstClick:     s.first,
		LastClick:      s.last,
		TopReferrers:   s.referrers.top(TopReferrers),
		ReferrersExact: s.referrers.exact(),
	}
	for d, n := range s.byDay {
		out.ByDay[time.Unix(d*secondsPerDay, 0).UTC().Format(time.DateOnly)] = n
	}
	return out
}

// referrerCounter counts clicks per referrer in bounded memory. Up to its
// capacity of distinct referrers the counts are exact. Past it, it is the
// Space-Saving algorithm (Metwally, Agrawal and El Abbadi, 2005): a new
// referrer takes the place of the one with the fewest clicks and inherits
// its count plus one. Every referrer with more than total/capacity clicks
// is then still counted, and the counts are upper bounds, over by at most
// total/capacity. Which referrer gives
// way among equals is fixed (the greatest in byte order), so a reading of
// the same export always gives the same result.
type referrerCounter struct {
	capacity int
	entries  map[string]*referrerEntry
	byClicks referrerHeap // built once the capacity is reached
	evicted  bool
}

type referrerEntry struct {
	referrer string
	clicks   int64
	index    int // in byClicks
}

func newReferrerCounter(capacity int) *referrerCounter {
	return &referrerCounter{capacity: capacity, entries: map[string]*referrerEntry{}}
}

func (c *referrerCounter) add(referrer string) {
	if e, ok := c.entries[referrer]; ok {
		e.clicks++
		if c.byClicks != nil {
			heap.Fix(&c.byClicks, e.index)
		}
		return
	}
	if len(c.entries) < c.capacity {
		referrer = strings.Clone(referrer) // see increment
		c.entries[referrer] = &referrerEntry{referrer: referrer, clicks: 1}
		return
	}
	if c.byClicks == nil {
		c.byClicks = make(referrerHeap, 0, len(c.entries))
		for _, e := range c.entries {
			e.index = len(c.byClicks)
			c.byClicks = append(c.byClicks, e)
		}
		heap.Init(&c.byClicks)
	}
	fewest := c.byClicks[0]
	delete(c.entries, fewest.referrer)
	fewest.referrer = strings.Clone(referrer)
	fewest.clicks++
	c.entries[fewest.referrer] = fewest
	heap.Fix(&c.byClicks, 0)
	c.evicted = true
}

func (c *referrerCounter) exact() bool { return !c.evicted }

// top returns the n referrers with the most clicks, ties in byte order.
func (c *referrerCounter) top(n int) []ReferrerClicks {
	all := make([]ReferrerClicks, 0, len(c.entries))
	for _, e := range c.entries {
		all = append(all, ReferrerClicks{Referrer: e.referrer, Clicks: e.clicks})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Clicks != all[j].Clicks {
			return all[i].Clicks > all[j].Clicks
		}
		return all[i].Referrer < all[j].Referrer
	})
	return all[:min(n, len(all))]
}

// referrerHeap orders entries by clicks, fewest first; among equals the
// greatest referrer first, the one to give way.
type referrerHeap []*referrerEntry

func (h referrerHeap) Len() int { return len(h) }
func (h referrerHeap) Less(i, j int) bool {
	if h[i].clicks != h[j].clicks {
		return h[i].clicks < h[j].clicks
	}
	return h[i].referrer > h[j].referrer
}

func (h referrerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *referrerHeap) Push(x any) {
	e := x.(*referrerEntry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *referrerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
