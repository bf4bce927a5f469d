package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestExportAnalytics(t *testing.T) {
	csv := "\ufefflink_id,clicked_at,destination\r\nl-1,2026-01-02T03:04:05Z,\"https://e/?a=1,b\"\r\n"
	tests := []struct {
		name      string
		answer    step
		want      string
		wantErrIs error
	}{
		{"CSV returned byte for byte", step{body: csv, header: map[string]string{"Content-Type": "text/csv; charset=utf-8"}}, csv, nil},
		{"empty export", step{header: map[string]string{"Content-Type": "text/csv"}}, "", nil},
		{"unlabelled body is still returned", step{body: csv, header: map[string]string{"Content-Type": "application/octet-stream"}}, csv, nil},
		{"HTML page with 200", step{body: "<html>login</html>", header: map[string]string{"Content-Type": "text/html; charset=utf-8"}}, "", ErrUnexpectedResponse},
		{"403 insufficient scope", step{status: 403, body: `{"error":"insufficient_scope"}`}, "", ErrForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := serve(t, tt.answer)
			got, err := newTestClient(t, srv).ExportAnalytics(context.Background(), "l-1")
			if tt.wantErrIs != nil {
				if !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("error = %v, want %v", err, tt.wantErrIs)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// streamBody answers 200 with n bytes: an opening bracket and spaces.
func streamBody(n int64, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = io.WriteString(w, "[")
		_, _ = io.Copy(w, io.LimitReader(spaces{}, n-1))
	}
}

type spaces struct{}

var spaceBlock = bytes.Repeat([]byte(" "), 64<<10)

func (spaces) Read(p []byte) (int, error) {
	n := copy(p, spaceBlock)
	return n, nil
}

func TestOversizedBodies(t *testing.T) {
	t.Run("a body of exactly the limit is read", func(t *testing.T) {
		body := "[" + strings.Repeat(" ", 1022) + "]"
		_, srv := serve(t, step{body: body})
		c := newTestClient(t, srv)
		resp, err := c.do(context.Background(), call{method: "GET", path: pathLinks, url: c.endpoint(pathLinks, nil), accept: "application/json", limit: 1024})
		if err != nil || len(resp.body) != 1024 {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("list beyond the limit", func(t *testing.T) {
		s := &script{}
		srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.reqs = append(s.reqs, recorded{})
			s.mu.Unlock()
			streamBody(MaxJSONBodyBytes+1, "application/json")(w, r)
		})
		_, err := newTestClient(t, srv).ListLinks(context.Background())
		if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "32 MiB") {
			t.Fatalf("error = %v, want one naming the 32 MiB limit", err)
		}
		if s.count() != 1 {
			t.Fatalf("%d requests, want 1: an oversized body is not fetched again", s.count())
		}
	})
	t.Run("create beyond the limit is ambiguous", func(t *testing.T) {
		srv := newRawServer(t, streamBody(MaxJSONBodyBytes+1, "application/json"))
		_, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		if !errors.Is(err, ErrAmbiguous) || !strings.Contains(err.Error(), "32 MiB") {
			t.Fatalf("error = %v", err)
		}
	})
	t.Run("CSV limit", func(t *testing.T) {
		// The export's limit is 512 MiB; the mechanism is the same, so it
		// is exercised here with a small one rather than half a gigabyte.
		s, srv := serve(t, step{body: strings.Repeat("a,b\n", 300), header: map[string]string{"Content-Type": "text/csv"}})
		c := newTestClient(t, srv)
		_, err := c.do(context.Background(), call{method: "GET", path: pathExport, url: c.endpoint(pathExport, nil), accept: "text/csv", limit: 1 << 10})
		var tooLarge *bodyTooLargeError
		if !errors.As(err, &tooLarge) || s.count() != 1 {
			t.Fatalf("error = %v after %d requests, want a bodyTooLargeError after 1", err, s.count())
		}
		if MaxCSVBodyBytes != 512<<20 || MaxJSONBodyBytes != 32<<20 {
			t.Fatal("documented limits changed")
		}
	})
}
