package analytics

import (
	"reflect"
	"strings"
	"testing"
)

// The CSV dialect of the export, as Read reads it.
func TestReadExportCSV(t *testing.T) {
	emulatorCSV := "clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n" +
		"2026-01-02T03:04:05.678Z,l-1,spring,https://go.example.test/spring,\"https://example.com/?a=1,b\",,\"Mozilla/5.0 \"\"quoted\"\"\"\r\n" +
		"2026-01-02T03:04:06.000Z,l-1,spring,https://go.example.test/spring,https://example.com/,\"https://ref.example/\nline two\",curl/8\r\n"
	tests := []struct {
		name    string
		body    string
		columns []string
		rows    []map[string]string
		raw     string // what the Raw of the header and rows make up, when not the body
		err     string
	}{
		{
			name: "the emulator's export", body: emulatorCSV,
			columns: []string{"clicked_at", "link_id", "slug", "short_url", "destination", "referrer", "user_agent"},
			rows: []map[string]string{
				{
					"clicked_at": "2026-01-02T03:04:05.678Z", "link_id": "l-1", "slug": "spring", "short_url": "https://go.example.test/spring",
					"destination": "https://example.com/?a=1,b", "referrer": "", "user_agent": `Mozilla/5.0 "quoted"`,
				},
				{
					"clicked_at": "2026-01-02T03:04:06.000Z", "link_id": "l-1", "slug": "spring", "short_url": "https://go.example.test/spring",
					"destination": "https://example.com/", "referrer": "https://ref.example/\nline two", "user_agent": "curl/8",
				},
			},
		},
		{name: "header only", body: "a,b\r\n", columns: []string{"a", "b"}, rows: []map[string]string{}},
		{name: "header without a line end", body: "a,b", columns: []string{"a", "b"}, rows: []map[string]string{}},
		{
			name: "LF line ends and a byte order mark", body: "\uFEFFa,b\n1,2\n",
			columns: []string{"a", "b"}, rows: []map[string]string{{"a": "1", "b": "2"}},
		},
		{
			name: "blank lines are skipped", body: "a\n\n1\n\n",
			columns: []string{"a"}, rows: []map[string]string{{"a": "1"}}, raw: "a\n\n1\n",
		},
		{
			name: "empty fields", body: "a,b,c\n,,\n",
			columns: []string{"a", "b", "c"}, rows: []map[string]string{{"a": "", "b": "", "c": ""}},
		},
		{name: "empty body: an export without clicks", body: "", columns: []string{}, rows: []map[string]string{}},
		{name: "only a byte order mark", body: "\uFEFF", columns: []string{}, rows: []map[string]string{}},
		{name: "only line ends", body: "\r\n\n", columns: []string{}, rows: []map[string]string{}},
		{name: "only white space", body: " \r\n", columns: []string{}, rows: []map[string]string{}},
		{name: "row with too many fields", body: "a,b\n1,2\n1,2,3\n", err: "line 3: the record has 3 fields, but the header row names 2 columns"},
		{name: "row with too few fields", body: "a,b,c\n1,2\n", err: "line 2: the record has 2 fields, but the header row names 3 columns"},
		{name: "trailing empty field is still a field", body: "a,b\n1,2,\n", err: "has 3 fields"},
		{name: "duplicate column", body: "a,a\n1,2\n", err: `names the column "a" twice`},
		{name: "unterminated quote", body: "a\n\"open\n", err: "extraneous or missing"},
		{name: "quote inside an unquoted field", body: "a,b\n1,x\"y\n", err: "bare \""},
		{name: "broken header", body: "\"a,b\n", err: "line 1, column 6: extraneous or missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(tt.body, Query{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.columns, tt.columns) || !reflect.DeepEqual(got.maps(), tt.rows) {
				t.Errorf("got\n%q\n%q\nwant\n%q\n%q", got.columns, got.maps(), tt.columns, tt.rows)
			}
			raw := tt.body
			if tt.raw != "" {
				raw = tt.raw
			}
			if got.raw.String() != raw {
				t.Errorf("raw %q, want %q", got.raw.String(), raw)
			}
		})
	}
}
