package client

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseExport(t *testing.T) {
	emulatorCSV := "clicked_at,link_id,slug,short_url,destination,referrer,user_agent\r\n" +
		"2026-01-02T03:04:05.678Z,l-1,spring,https://go.example.test/spring,\"https://example.com/?a=1,b\",,\"Mozilla/5.0 \"\"quoted\"\"\"\r\n" +
		"2026-01-02T03:04:06.000Z,l-1,spring,https://go.example.test/spring,https://example.com/,\"https://ref.example/\nline two\",curl/8\r\n"
	tests := []struct {
		name    string
		body    string
		columns []string
		rows    []map[string]string
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
			columns: []string{"a"}, rows: []map[string]string{{"a": "1"}},
		},
		{
			name: "empty fields", body: "a,b,c\n,,\n",
			columns: []string{"a", "b", "c"}, rows: []map[string]string{{"a": "", "b": "", "c": ""}},
		},
		{name: "empty body", body: "", err: "expected a header row"},
		{name: "only a byte order mark", body: "\uFEFF", err: "expected a header row"},
		{name: "row with too many fields", body: "a,b\n1,2\n1,2,3\n", err: "line 3 has 3 fields, but the header row names 2 columns"},
		{name: "row with too few fields", body: "a,b,c\n1,2\n", err: "line 2 has 2 fields, but the header row names 3 columns"},
		{name: "trailing empty field is still a field", body: "a,b\n1,2,\n", err: "has 3 fields"},
		{name: "duplicate column", body: "a,a\n1,2\n", err: `names the column "a" twice`},
		{name: "unterminated quote", body: "a\n\"open\n", err: "extraneous or missing"},
		{name: "quote inside an unquoted field", body: "a,b\n1,x\"y\n", err: "bare \""},
		{name: "broken header", body: "\"a,b\n", err: "header row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			columns, rows, err := ParseExport([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				if columns != nil || rows != nil {
					t.Fatalf("got %q %q with an error, want nothing", columns, rows)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(columns, tt.columns) || !reflect.DeepEqual(rows, tt.rows) {
				t.Errorf("got\n%q\n%q\nwant\n%q\n%q", columns, rows, tt.columns, tt.rows)
			}
		})
	}
}
