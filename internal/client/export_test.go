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

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// reading is an analytics.Visitor that keeps the rows and the text it is
// given, and counts how often a reading began.
type reading struct {
	begins  int
	columns []string
	rows    [][]string
	raw     bytes.Buffer
}

func (r *reading) Begin(h analytics.Header) {
	r.begins++
	r.columns, r.rows = h.Columns, nil
	r.raw.Reset()
	r.raw.Write(h.Raw)
}

func (r *reading) Row(row analytics.Row) {
	r.rows = append(r.rows, slices.Clone(row.Fields))
	r.raw.Write(row.Raw)
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
		{name: "JSON error body with 200", answer: step{body: `{"error":"export_unavailable"}`, header: map[string]string{"Content-Type": "application/json"}},
			wantErrIs: ErrUnexpectedResponse, wantErr: `status 200, Content-Type "application/json", expected CSV: the body is JSON; it begins "{\"error\":\"export_unavailable\"}"`},
		{name: "broken quoting", answer: step{body: "a,b\n1,x\"y\n", header: csvHeaders},
			wantErrIs: ErrUnexpectedResponse, wantErr: `GET /api/analytics/export: unexpected response from the service: status 200, Content-Type "text/csv; charset=utf-8": export: parse error on line 2, column 4: bare " in non-quoted-field`},
		{name: "403 insufficient scope", answer: step{status: 403, body: `{"error":"insufficient_scope"}`}, wantErrIs: ErrForbidden},
		{name: "404 unknown link", answer: step{status: 404, body: `{"error":"not_found"}`}, wantErrIs: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := serve(t, tt.answer)
			got := &reading{}
			err := newTestClient(t, srv).ReadExport(context.Background(), analytics.Query{LinkID: "l-1"}, nil, got)
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

// An export quoting the API key (a service echoing a request into a
// value) does not put the key into an error.
func TestReadExportErrorsAreRedacted(t *testing.T) {
	_, srv := serve(t, step{body: "clicked_at,link_id\r\n" + testKey + ",l-1\r\n", header: map[string]string{"Content-Type": "text/csv"}})
	err := newTestClient(t, srv).ReadExport(context.Background(), analytics.Query{Since: time.Unix(0, 0)}, nil, &reading{})
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), Redacted) {
		t.Fatalf("error = %v, want one with the key redacted", err)
	}
}

// A connection lost part-way through the export is read again from the
// start, and the visitor is told to begin again: nothing is counted twice.
func TestReadExportRetriesFromTheStart(t *testing.T) {
	body := testsupport.ExportHeader
	for i := range 2000 {
		body += testsupport.ExportClick(fmt.Sprintf("2027-03-01T10:%02d:%02dZ", i/60%60, i%60), "l-1", "https://ref.example/")
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
	if err := c.ReadExport(context.Background(), analytics.Query{}, nil, got); err != nil {
		t.Fatal(err)
	}
	if requests.Load() != 2 || got.begins != 2 || len(got.rows) != 2000 || got.raw.String() != body {
		t.Fatalf("%d requests, %d beginnings, %d rows; want 2, 2 and 2000 rows as sent", requests.Load(), got.begins, len(got.rows))
	}
	requests.Store(0)
	s, err := analytics.Summarize(context.Background(), c.ReadExport, analytics.Query{})
	if err != nil || s.Total != 2000 || s.ByLink["l-1"] != 2000 || s.TopReferrers[0].Clicks != 2000 {
		t.Fatalf("summary %+v, %v; want 2000 clicks counted once", s, err)
	}
}

func TestReadExportBounds(t *testing.T) {
	t.Run("a record longer than a click may be", func(t *testing.T) {
		body := testsupport.ExportHeader + testsupport.ExportClick("2027-03-01T10:00:00Z", "l-1", "a") + testsupport.ExportClick("2027-03-01T10:00:00Z", "l-1", strings.Repeat("r", 2*analytics.MaxRecordBytes))
		s, srv := serve(t, step{body: body, header: map[string]string{"Content-Type": "text/csv"}})
		err := newTestClient(t, srv).ReadExport(context.Background(), analytics.Query{}, nil, &reading{})
		if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "the record after line 2 is longer than 1 MiB") || s.count() != 1 {
			t.Fatalf("error = %v after %d requests, want one naming the 1 MiB bound after 1", err, s.count())
		}
	})
}
