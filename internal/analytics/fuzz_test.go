package analytics

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/wire"
)

// FuzzParseExport feeds the reader of the analytics export. Whatever it
// reads is a table with one value per column, the Raw it hands on makes up
// the body (up to blank lines at the end) and reads as the same table, and
// a range keeps exactly the rows whose time is in it.
func FuzzParseExport(f *testing.F) {
	for _, s := range []string{
		"clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n" +
			"2026-01-02T03:04:05.678Z,l-1,spring,https://go.example.test/spring,\"https://example.com/?a=1,b\",,\"say \"\"hi\"\"\"\r\n",
		"a,b\r\n", "\uFEFFa,b\n1,2\n", "a\n\n1\n", "a,b\n\"x\r\ny\",2\n",
		"", "a,a\n1,2\n", "a,b\n1,2,3\n", "a,b,c\n1\n", "a\n\"open\n", "a,b\n1,x\"y\n", "\"a,b\n",
		"clicked_at\n2027-03-01T10:00:00Z\n2027-03-01T12:00:00+02:00\n2027-03-01T11:00:00.000Z\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := readAll(string(body), Query{})
		if err != nil {
			return
		}
		columns, rows := r.columns, r.maps()
		checkTable(t, columns, rows)
		raw := r.raw.String()
		if rest, ok := strings.CutPrefix(string(body), raw); !ok || strings.Trim(rest, "\r\n") != "" {
			t.Fatalf("the Raw of the rows, %q, is not the body %q up to blank lines", raw, body)
		}
		again, err := readAll(raw, Query{})
		if err != nil || !reflect.DeepEqual(again.columns, columns) || !reflect.DeepEqual(again.maps(), rows) {
			t.Fatalf("the Raw of the rows reads as %q %q, %v; want %q %q", again.columns, again.maps(), err, columns, rows)
		}
		// Written back fully quoted and read again, the table is the same,
		// up to the CRLFs the reader turns into LFs inside quoted fields;
		// unless that reading makes two column names one (a column "\r\n"
		// beside one "\n"), and the reader refuses the header.
		if len(columns) > 0 {
			r2, err := readAll(string(writeCSV(columns, rows)), Query{})
			header := make([]string, len(columns))
			for i, c := range columns {
				header[i] = strings.ReplaceAll(c, "\r\n", "\n") // one reading
			}
			switch {
			case len(slices.Compact(slices.Sorted(slices.Values(header)))) < len(header):
				if err == nil || !strings.Contains(err.Error(), "twice") {
					t.Fatalf("rewritten, the columns %q become %q, yet the export reads: %v", columns, header, err)
				}
			case err != nil:
				t.Fatalf("re-reading the rewritten export: %v", err)
			case !reflect.DeepEqual(normTable(columns, rows), normTable(r2.columns, r2.maps())):
				t.Fatalf("rewriting changed the table: %q %q / %q %q", columns, rows, r2.columns, r2.maps())
			}
		}
		// A range keeps the rows whose time is in it, and only those.
		q := Query{Since: time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC), Until: time.Date(2027, 3, 1, 11, 0, 0, 0, time.UTC)}
		timeColumn := ClickedAt.find(columns)
		ranged, err := readAll(string(body), q)
		if len(columns) == 0 || timeColumn < 0 || err != nil {
			return // a missing column or a time that is not RFC 3339
		}
		var want [][]string
		for _, row := range r.rows {
			if tm, _ := wire.ParseTime(row[timeColumn]); q.includes(tm) {
				want = append(want, row)
			}
		}
		if !reflect.DeepEqual(ranged.rows, want) {
			t.Fatalf("the range kept %q, want %q", ranged.rows, want)
		}
	})
}

// normTable spells a table with every CRLF in its values turned into LF, as
// a CSV reader does inside quoted fields, until none is left ("\r\r\n"
// takes two readings to become "\n").
func normTable(columns []string, rows []map[string]string) [][]string {
	norm := func(s string) string {
		for strings.Contains(s, "\r\n") {
			s = strings.ReplaceAll(s, "\r\n", "\n")
		}
		return s
	}
	out := [][]string{}
	line := make([]string, len(columns))
	for i, c := range columns {
		line[i] = norm(c)
	}
	out = append(out, line)
	for _, row := range rows {
		line := make([]string, len(columns))
		for i, c := range columns {
			line[i] = norm(row[c])
		}
		out = append(out, line)
	}
	return out
}

// checkTable checks what every parsed export satisfies.
func checkTable(t *testing.T, columns []string, rows []map[string]string) {
	t.Helper()
	if len(columns) == 0 && len(rows) != 0 {
		t.Fatalf("%d rows without columns", len(rows))
	}
	seen := map[string]bool{}
	for _, c := range columns {
		if seen[c] {
			t.Fatalf("column %q twice", c)
		}
		seen[c] = true
	}
	for i, row := range rows {
		if len(row) != len(columns) {
			t.Fatalf("row %d has %d values for %d columns", i, len(row), len(columns))
		}
		for k := range row {
			if !seen[k] {
				t.Fatalf("row %d has a value for %q, not a column", i, k)
			}
		}
	}
}

// writeCSV writes a table with every field quoted, CRLF line ends.
func writeCSV(columns []string, rows []map[string]string) []byte {
	var b bytes.Buffer
	line := func(fields []string) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		}
		b.WriteString("\r\n")
	}
	line(columns)
	for _, row := range rows {
		fields := make([]string, len(columns))
		for i, c := range columns {
			fields[i] = row[c]
		}
		line(fields)
	}
	return b.Bytes()
}
