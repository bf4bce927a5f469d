package analytics

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/testclock"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// reading is an Visitor that keeps everything it is given.
type reading struct {
	begins  int
	columns []string
	rows    [][]string
	times   []time.Time
	raw     bytes.Buffer // the header's and the rows' Raw, in order
}

func (r *reading) Begin(h Header) {
	r.begins++
	r.columns, r.rows, r.times = h.Columns, nil, nil
	r.raw.Reset()
	r.raw.Write(h.Raw)
}

func (r *reading) Row(row Row) {
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
func readAll(body string, q Query) (*reading, error) {
	var needed []Column
	if q.hasRange() {
		needed = []Column{ClickedAt}
	}
	r := &reading{}
	err := Read(strings.NewReader(body), q, needed, r, noRedaction)
	return r, err
}

func TestReadExportRange(t *testing.T) {
	body := testsupport.ExportHeader +
		testsupport.ExportClick("2027-03-01T09:59:59.999Z", "l-1", "a") +
		testsupport.ExportClick("2027-03-01T10:00:00.000Z", "l-1", "b") + // == since: in
		testsupport.ExportClick("2027-03-01T12:00:00+02:00", "l-1", "c") + // 10:00 UTC, another spelling: in
		testsupport.ExportClick("2027-03-01T10:30:00Z", "l-1", "d") +
		testsupport.ExportClick("2027-03-01T11:00:00.000Z", "l-1", "e") + // == until: out
		testsupport.ExportClick("2027-03-01T11:00:00.001Z", "l-1", "f")
	since, until := testclock.Parse(t, "2027-03-01T10:00:00Z"), testclock.Parse(t, "2027-03-01T11:00:00Z")
	referrers := func(r *reading) []string {
		var out []string
		for _, row := range r.rows {
			out = append(out, row[5])
		}
		return out
	}
	for _, tt := range []struct {
		name string
		q    Query
		want []string
	}{
		{"no range", Query{}, []string{"a", "b", "c", "d", "e", "f"}},
		{"since is inclusive, until exclusive", Query{Since: since, Until: until}, []string{"b", "c", "d"}},
		{"only since", Query{Since: since}, []string{"b", "c", "d", "e", "f"}},
		{"only until", Query{Until: until}, []string{"a", "b", "c", "d"}},
		{"a range without clicks", Query{Since: testclock.Parse(t, "2027-04-01T00:00:00Z")}, nil},
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
			want.WriteString(testsupport.ExportHeader)
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
		before, err := readAll(body, Query{Until: since})
		if err != nil {
			t.Fatal(err)
		}
		after, err := readAll(body, Query{Since: since})
		if err != nil {
			t.Fatal(err)
		}
		if len(before.rows)+len(after.rows) != 6 {
			t.Fatalf("%d + %d rows, want 6", len(before.rows), len(after.rows))
		}
	})
}

func TestReadExportErrors(t *testing.T) {
	since := Query{Since: testclock.Parse(t, "2027-01-01T00:00:00Z")}
	tests := []struct {
		name string
		body string
		q    Query
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
			if !errors.Is(err, ErrMalformed) || !strings.Contains(fmt.Sprint(err), tt.err) {
				t.Fatalf("error = %v, want ErrMalformed containing %q", err, tt.err)
			}
		})
	}
}

func TestReadExportBounds(t *testing.T) {
	t.Run("a record of the most a click may take", func(t *testing.T) {
		referrer := strings.Repeat("r", MaxRecordBytes-200)
		got, err := readAll(testsupport.ExportHeader+testsupport.ExportClick("2027-03-01T10:00:00Z", "l-1", referrer), Query{})
		if err != nil || len(got.rows) != 1 || got.rows[0][5] != referrer {
			t.Fatalf("%d rows, %v", len(got.rows), err)
		}
	})
}
