package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A slow write is never cut short by the per-attempt bound of reads: only
// the operation's deadline ends it. A hung read is cut and sent again.
func TestReadAttemptTimeoutSparesSlowWrites(t *testing.T) {
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			time.Sleep(300 * time.Millisecond) // the fraud filter
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"l1","destination":"https://example.com/","domainId":"d1","slug":"s","shortUrl":"https://go.example.test/s","qrCodeUrl":"https://go.example.test/qr/s.png","createdAt":"2026-11-21T00:00:00Z","updatedAt":"2026-11-21T00:00:00Z","expiresAt":null,"utm":null}`))
		case http.MethodGet:
			if gets.Add(1) == 1 {
				select { // the first listing hangs
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			_, _ = w.Write([]byte(`[]`))
		}
	}))
	defer ts.Close()
	c, err := New(Config{BaseURL: ts.URL, APIKey: "k", HTTPClient: ts.Client(),
		ReadAttemptTimeout: 50 * time.Millisecond, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	link, err := c.CreateLink(ctx, CreateLinkInput{Destination: "https://example.com/", DomainID: "d1"})
	if err != nil || link.ID != "l1" {
		t.Fatalf("a 300ms create under a 50ms read bound: %v, %v", link, err)
	}
	start := time.Now()
	if _, err := c.ListLinks(ctx); err != nil {
		t.Fatalf("list after a hung attempt: %v", err)
	}
	if n := gets.Load(); n != 2 {
		t.Fatalf("%d GET attempts, want the hung one cut and one more", n)
	}
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Fatalf("the hung read was waited on for %v", elapsed)
	}
}
