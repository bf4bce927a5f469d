package client

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shortlink/terraform-provider-shortlink/internal/analytics"
)

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
	t.Run("list item beyond the bound of one link", func(t *testing.T) {
		s := &script{}
		srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.reqs = append(s.reqs, recorded{})
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `[{"id":"l-1"},{"id":"l-2","destination":"https://example.com/`+strings.Repeat("a", MaxLinkRecordBytes)+`"}]`)
		})
		_, err := newTestClient(t, srv).ListLinks(context.Background())
		if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "item 1 of the list is larger than 64 KiB") ||
			!strings.Contains(err.Error(), `begins "{\"id\":\"l-2\"`) {
			t.Fatalf("error = %v, want one naming item 1, the 64 KiB bound and how it begins", err)
		}
		if s.count() != 1 {
			t.Fatalf("%d requests, want 1: an oversized body is not fetched again", s.count())
		}
	})
	t.Run("create beyond the limit is ambiguous", func(t *testing.T) {
		srv := newRawServer(t, serveSpaces(MaxJSONBodyBytes+1, "application/json"))
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

// serveSpaces answers 200 with n bytes: an opening bracket and spaces.
func serveSpaces(n int64, contentType string) http.HandlerFunc {
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

// A body that starts with a UTF-8 byte order mark, which RFC 8259 lets a
// JSON reader ignore, is read as the JSON it is: a list, a created link, an
// error.
func TestBodyAfterAByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	t.Run("list", func(t *testing.T) {
		_, srv := serve(t, step{body: bom + "[" + linkJSON + "]"})
		links, err := newTestClient(t, srv).ListLinks(context.Background())
		if err != nil || links.Len() != 1 {
			t.Fatalf("ListLinks = %v links, %v; want the one link", links, err)
		}
	})
	t.Run("create", func(t *testing.T) {
		_, srv := serve(t, step{status: 201, body: bom + linkJSON})
		l, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		if err != nil || l.ID != "l-1" {
			t.Fatalf("CreateLink = %+v, %v; want link l-1", l, err)
		}
	})
	t.Run("error", func(t *testing.T) {
		_, srv := serve(t, step{status: 409, body: bom + `{"error":"slug_taken","message":"taken"}`})
		_, err := newTestClient(t, srv).CreateLink(context.Background(), CreateLinkInput{Destination: "https://e/", DomainID: "d"})
		var e *APIError
		if !errors.As(err, &e) || e.Code != "slug_taken" || e.Message != "taken" {
			t.Fatalf("error = %v; want slug_taken with its message", err)
		}
	})
}

func TestReadFailureMidBodyIsRetriedForGET(t *testing.T) {
	var calls atomic.Int32
	srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			// Promise more than is sent: the server then drops the connection.
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, `[{"id":`)
			return
		}
		_, _ = io.WriteString(w, `[{"id":"l-1"}]`)
	})
	links, err := newTestClient(t, srv).ListLinks(context.Background())
	if err != nil || links == nil || links.Len() != 1 || calls.Load() != 2 {
		t.Fatalf("links %v, err %v, calls %d; want 1 link after 2 calls", links, err, calls.Load())
	}
}

// A streamed body (the export's) is bounded like one read into memory:
// boundedBody tells a body of exactly the limit from a longer one.
func TestStreamedBodyBounds(t *testing.T) {
	t.Run("a streamed body beyond the limit", func(t *testing.T) {
		s, srv := serve(t, step{body: strings.Repeat("a,b\n", 300), header: map[string]string{"Content-Type": "text/csv"}})
		c := newTestClient(t, srv)
		var got reading
		cl := call{method: "GET", path: pathExport, url: c.endpoint(pathExport, nil), accept: "text/csv", limit: 1 << 10}
		cl.stream = func(resp *http.Response) error {
			return analytics.Read(resp.Body, analytics.Query{}, nil, &got, func(s string) string { return s })
		}
		_, err := c.do(context.Background(), cl)
		var tooLarge *bodyTooLargeError
		if !errors.As(err, &tooLarge) || s.count() != 1 {
			t.Fatalf("error = %v after %d requests, want a bodyTooLargeError after 1", err, s.count())
		}
	})
	t.Run("a streamed body of exactly the limit", func(t *testing.T) {
		body := strings.Repeat("a,b\n", 256)
		_, srv := serve(t, step{body: body, header: map[string]string{"Content-Type": "text/csv"}})
		c := newTestClient(t, srv)
		var got reading
		cl := call{method: "GET", path: pathExport, url: c.endpoint(pathExport, nil), accept: "text/csv", limit: int64(len(body))}
		cl.stream = func(resp *http.Response) error {
			return analytics.Read(resp.Body, analytics.Query{}, nil, &got, func(s string) string { return s })
		}
		if _, err := c.do(context.Background(), cl); err != nil || len(got.rows) != 255 {
			t.Fatalf("%d rows, %v; want 255", len(got.rows), err)
		}
	})
}
