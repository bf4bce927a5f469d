package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// reading is an ExportVisitor that keeps everything it is given.
type reading struct {
	begins  int
	columns []string
	rows    [][]string
	times   []time.Time
	raw     bytes.Buffer // the header's and the rows' Raw, in order
}

func (r *reading) Begin(h ExportHeader) {
	r.begins++
	r.columns, r.rows, r.times = h.Columns, nil, nil
	r.raw.Reset()
	r.raw.Write(h.Raw)
}

func (r *reading) Row(row ExportRow) {
	r.rows = append(r.rows, slices.Clone(row.Fields))
	r.times = append(r.times, row.ClickedAt)
	r.raw.Write(row.Raw)
}

// maps returns the rows as column → value maps.
func (r *reading) maps() []map[string]string {
	out := []map[string]string{}
	for _, fields := range r.rows {
		m := make(map[string]string, len(fields))
		for i, c := range r.columns {
			m[c] = fields[i]
		}
		out = append(out, m)
	}
	return out
}

func noRedaction(s string) string { return s }

// readAll reads an export held in memory as ReadExport reads a body.
func readAll(body string, q ExportQuery) (*reading, error) {
	var needed []columnRole
	if q.hasRange() {
		needed = []columnRole{roleClickedAt}
	}
	r := &reading{}
	err := readExportBody(strings.NewReader(body), q, needed, r, noRedaction)
	return r, err
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

const csvHeader = "clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n"

// click is one record in the emulator's layout.
func click(at, linkID, referrer string) string {
	var b bytes.Buffer
	fields := []string{at, linkID, "s", "https://go.example.test/s", "https://example.com/", referrer, "curl/8"}
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		if strings.ContainsAny(f, ",\"\r\n") {
			f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
		}
		b.WriteString(f)
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestReadExport(t *testing.T) {
	csv := "\ufefflink_id,clicked_at,destination\r\nl-1,2026-01-02T03:04:05Z,\"https://e/?a=1,b\"\r\n"
	csvHeaders := map[string]string{"Content-Type": "text/csv; charset=utf-8"}
	tests := []struct {
		name      string
		answer    step
		columns   []string
		rows      [][]string
		wantErrIs error
		wantErr   string
	}{
		{name: "CSV read as sent", answer: step{body: csv, header: csvHeaders},
			columns: []string{"link_id", "clicked_at", "destination"}, rows: [][]string{{"l-1", "2026-01-02T03:04:05Z", "https://e/?a=1,b"}}},
		{name: "empty export", answer: step{header: map[string]string{"Content-Type": "text/csv"}}, columns: []string{}},
		{name: "unlabelled body is still read", answer: step{body: csv, header: map[string]string{"Content-Type": "application/octet-stream"}},
			columns: []string{"link_id", "clicked_at", "destination"}, rows: [][]string{{"l-1", "2026-01-02T03:04:05Z", "https://e/?a=1,b"}}},
		{name: "HTML page with 200", answer: step{body: "<html>Please log in</html>", header: map[string]string{"Content-Type": "text/html; charset=utf-8"}},
			wantErrIs: ErrUnexpectedResponse, wantErr: `status 200, Content-Type "text/html; charset=utf-8", expected CSV: the body is an HTML page; it begins "<html>Please log in</html>"`},
		{name: "broken quoting", answer: step{body: "a,b\n1,x\"y\n", header: csvHeaders},
			wantErrIs: ErrUnexpectedResponse, wantErr: `GET /api/analytics/export: unexpected response from the service: export: parse error on line 2, column 4: bare " in non-quoted-field`},
		{name: "403 insufficient scope", answer: step{status: 403, body: `{"error":"insufficient_scope"}`}, wantErrIs: ErrForbidden},
		{name: "404 unknown link", answer: step{status: 404, body: `{"error":"not_found"}`}, wantErrIs: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, tt.answer)
			got := &reading{}
			err := newTestClient(t, srv).ReadExport(context.Background(), ExportQuery{LinkID: "l-1"}, got)
			if tt.wantErrIs != nil {
				if !errors.Is(err, tt.wantErrIs) || !strings.Contains(fmt.Sprint(err), tt.wantErr) {
					t.Fatalf("error = %v, want %v containing %q", err, tt.wantErrIs, tt.wantErr)
				}
				if errors.Is(tt.wantErrIs, ErrUnexpectedResponse) && s.count() != 1 {
					t.Fatalf("%d requests, want 1: the same body would come again", s.count())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.columns, tt.columns) || !reflect.DeepEqual(got.rows, tt.rows) {
				t.Fatalf("got %q %q, want %q %q", got.columns, got.rows, tt.columns, tt.rows)
			}
			if got.raw.String() != tt.answer.body {
				t.Fatalf("raw %q, want the body as sent, %q", got.raw.String(), tt.answer.body)
			}
		})
	}
}

func TestReadExportRange(t *testing.T) {
	body := csvHeader +
		click("2027-03-01T09:59:59.999Z", "l-1", "a") +
		click("2027-03-01T10:00:00.000Z", "l-1", "b") + // == since: in
		click("2027-03-01T12:00:00+02:00", "l-1", "c") + // 10:00 UTC, another spelling: in
		click("2027-03-01T10:30:00Z", "l-1", "d") +
		click("2027-03-01T11:00:00.000Z", "l-1", "e") + // == until: out
		click("2027-03-01T11:00:00.001Z", "l-1", "f")
	since, until := mustTime(t, "2027-03-01T10:00:00Z"), mustTime(t, "2027-03-01T11:00:00Z")
	referrers := func(r *reading) []string {
		var out []string
		for _, row := range r.rows {
			out = append(out, row[5])
		}
		return out
	}
	for _, tt := range []struct {
		name string
		q    ExportQuery
		want []string
	}{
		{"no range", ExportQuery{}, []string{"a", "b", "c", "d", "e", "f"}},
		{"since is inclusive, until exclusive", ExportQuery{Since: since, Until: until}, []string{"b", "c", "d"}},
		{"only since", ExportQuery{Since: since}, []string{"b", "c", "d", "e", "f"}},
		{"only until", ExportQuery{Until: until}, []string{"a", "b", "c", "d"}},
		{"a range without clicks", ExportQuery{Since: mustTime(t, "2027-04-01T00:00:00Z")}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(body, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(referrers(got), tt.want) {
				t.Fatalf("kept %q, want %q", referrers(got), tt.want)
			}
			// The rows kept, as sent: the header and their own records.
			var want strings.Builder
			want.WriteString(csvHeader)
			for _, line := range strings.SplitAfter(body, "\r\n")[1:] {
				if line != "" && slices.Contains(tt.want, strings.Split(line, ",")[5]) {
					want.WriteString(line)
				}
			}
			if got.raw.String() != want.String() {
				t.Fatalf("raw\n%q\nwant\n%q", got.raw.String(), want.String())
			}
			for i, tm := range got.times {
				if tt.q.hasRange() && (tm.IsZero() || tm.Location() != time.UTC) {
					t.Fatalf("row %d: ClickedAt %v, want the time in UTC", i, tm)
				}
			}
		})
	}
	t.Run("consecutive ranges count every click once", func(t *testing.T) {
		before, err := readAll(body, ExportQuery{Until: since})
		if err != nil {
			t.Fatal(err)
		}
		after, err := readAll(body, ExportQuery{Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(before.rows)+len(after.rows) != 6 {
			t.Fatalf("%d + %d rows, want 6", len(before.rows), len(after.rows))
		}
	})
}

func TestReadExportErrors(t *testing.T) {
	since := ExportQuery{Since: mustTime(t, "2027-01-01T00:00:00Z")}
	tests := []struct {
		name string
		body string
		q    ExportQuery
		err  string // "" for no error
	}{
		{name: "a range needs the time of each click", body: "link_id,referrer\r\nl-1,x\r\n", q: since,
			err: `export: the header row names the columns "link_id", "referrer", none of which holds the time of each click (looked for clicked_at, click_time,`},
		{name: "without a range the time is not needed", body: "link_id,referrer\r\nl-1,x\r\n"},
		{name: "a time that is not RFC 3339", body: "clicked_at,link_id\r\n2027-01-02T03:04:05Z,l-1\r\nyesterday,l-1\r\n", q: since,
			err: `export: line 3: column "clicked_at": "yesterday" is not an RFC 3339 timestamp`},
		{name: "an empty time", body: "clicked_at,link_id\r\n,l-1\r\n", q: since, err: `line 2: column "clicked_at": "" is not an RFC 3339 timestamp`},
		{name: "times are not read without a range", body: "clicked_at,link_id\r\nyesterday,l-1\r\n"},
		{name: "a quoted line break moves the line count", body: "clicked_at,referrer\r\n2027-01-02T03:04:05Z,\"a\nb\"\r\nlater,x\r\n", q: since, err: `line 4:`},
		{name: "a record longer than the header", body: "a,b\n1,2\n1,2,3\n", err: "line 3: the record has 3 fields, but the header row names 2 columns"},
		{name: "a record shorter than the header", body: "a,b,c\n1,2\n", err: "line 2: the record has 2 fields, but the header row names 3 columns"},
		{name: "a column named twice", body: "a,a\n1,2\n", err: `line 1: the header row names the column "a" twice`},
		{name: "unterminated quote", body: "a\n\"open\n", err: "extraneous or missing \" in quoted-field"},
		{name: "not UTF-8", body: "a,b\n1,\xff\n", err: "line 2: the record is not UTF-8 text"},
		{name: "header not UTF-8", body: "a,\xfe\n", err: "line 1: the header row is not UTF-8 text"},
		{name: "records after a blank header", body: " \n1,2\n", err: "the record has 2 fields, but the header row names 0 columns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAll(tt.body, tt.q)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(fmt.Sprint(err), tt.err) {
				t.Fatalf("error = %v, want ErrUnexpectedResponse containing %q", err, tt.err)
			}
		})
	}
}

// An export quoting the API key (a service echoing a request into a
// value) does not put the key into an error.
func TestReadExportErrorsAreRedacted(t *testing.T) {
	_, srv := serve(t, step{body: "clicked_at,link_id\r\n" + testKey + ",l-1\r\n", header: map[string]string{"Content-Type": "text/csv"}})
	err := newTestClient(t, srv).ReadExport(context.Background(), ExportQuery{Since: time.Unix(0, 0)}, &reading{})
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), redacted) {
		t.Fatalf("error = %v, want one with the key redacted", err)
	}
}

// A connection lost part-way through the export is read again from the
// start, and the visitor is told to begin again: nothing is counted twice.
func TestReadExportRetriesFromTheStart(t *testing.T) {
	body := csvHeader
	for i := range 2000 {
		body += click(fmt.Sprintf("2027-03-01T10:%02d:%02dZ", i/60%60, i%60), "l-1", "https://ref.example/")
	}
	var requests atomic.Int32
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 {
			// Promise the whole body, send half of it, hang up.
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:len(body)/2])
			_ = buf.Flush()
			_ = conn.Close()
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		_, _ = io.WriteString(w, body)
	})
	c := newTestClient(t, srv)
	got := &reading{}
	if err := c.ReadExport(context.Background(), ExportQuery{}, got); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 2 || got.begins != 2 || len(got.rows) != 2000 || got.raw.String() != body {
		t.Fatalf("%d requests, %d beginnings, %d rows; want 2, 2 and 2000 rows as sent", requests.Load(), got.begins, len(got.rows))
	}
	requests.Store(0)
	s, err := c.SummarizeClicks(context.Background(), ExportQuery{})
	if err != nil || s.Total != 2000 || s.ByLink["l-1"] != 2000 || s.TopReferrers[0].Clicks != 2000 {
		t.Fatalf("summary %+v, %v; want 2000 clicks counted once", s, err)
	}
}

func TestReadExportBounds(t *testing.T) {
	t.Run("a record longer than a click may be", func(t *testing.T) {
		body := csvHeader + click("2027-03-01T10:00:00Z", "l-1", "a") + click("2027-03-01T10:00:00Z", "l-1", strings.Repeat("r", 2*MaxExportRecordBytes))
		s, srv := serve(t, step{body: body, header: map[string]string{"Content-Type": "text/csv"}})
		err := newTestClient(t, srv).ReadExport(context.Background(), ExportQuery{}, &reading{})
		if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "the record after line 2 is longer than 1 MiB") || s.count() != 1 {
			t.Fatalf("error = %v after %d requests, want one naming the 1 MiB bound after 1", err, s.count())
		}
	})
	t.Run("a record of the most a click may take", func(t *testing.T) {
		referrer := strings.Repeat("r", MaxExportRecordBytes-200)
		got, err := readAll(csvHeader+click("2027-03-01T10:00:00Z", "l-1", referrer), ExportQuery{})
		if err != nil || len(got.rows) != 1 || got.rows[0][5] != referrer {
			t.Fatalf("%d rows, %v", len(got.rows), err)
		}
	})
}
