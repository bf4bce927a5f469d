//go:build sharedsim

// The shared-key simulation: several Clients on one key against the
// emulator, without Terraform, to tune keyShare in seconds rather than
// minutes. It prints the figures the shared scenario of scripts/bench
// measures with the real CLI, and a request log with SIM_LOG=1:
//
//	SIM_CLIENTS=5 go test -tags sharedsim -run TestSharedSim -v ./internal/client/
//
// It stands alone, behind its build tag, because it is a tuning tool
// rather than a test of one file: it runs throttle.go and share.go through
// whole Clients and prints what they did, failing only when a create fails
// or a link goes missing.
package client

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

type simLog struct {
	next  http.Handler
	start time.Time
	mu    sync.Mutex
	lines []string
}

func (l *simLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	at := time.Since(l.start)
	l.next.ServeHTTP(sw, r)
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf("%7.3f %s %d rem=%s", at.Seconds(), r.Header.Get("X-Sim-Client"), sw.status, sw.Header().Get("X-RateLimit-Remaining")))
	l.mu.Unlock()
}

type tagTransport struct {
	next http.RoundTripper
	tag  string
}

func (t tagTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Sim-Client", t.tag)
	return t.next.RoundTrip(r)
}

func TestSharedSim(t *testing.T) {
	clients, links, par := envInt("SIM_CLIENTS", 3), envInt("SIM_LINKS", 30), envInt("SIM_PAR", 10)
	limit, window := envInt("SIM_LIMIT", 10), time.Duration(envInt("SIM_WINDOW_MS", 2000))*time.Millisecond
	log := &simLog{start: time.Now()}
	svc := testsupport.Start(t, testsupport.Options{
		Settings: func(s *emulator.Settings) {
			s.Limits.Write, s.Limits.Window = limit, emulator.Duration(window)
			s.Filter.Delay = emulator.Duration(time.Duration(envInt("SIM_DELAY_MS", 100)) * time.Millisecond)
		},
		Wrap: func(h http.Handler) http.Handler { log.next = h; return log },
	})
	fx, srv := svc.Fixture, svc.Server
	start := time.Now()
	var wg sync.WaitGroup
	ends := make([]string, clients)
	stagger := time.Duration(envInt("SIM_STAGGER_MS", 0)) * time.Millisecond
	for ci := range clients {
		c, err := New(Config{BaseURL: svc.URL, APIKey: fx.APIKey, MaxRetries: new(8),
			HTTPClient: &http.Client{Transport: tagTransport{next: http.DefaultTransport.(*http.Transport).Clone(), tag: fmt.Sprint(ci)}}})
		if err != nil {
			t.Fatal(err)
		}
		work := make(chan int, links)
		for i := range links {
			work <- i
		}
		close(work)
		// Terraform processes started together reach their first create
		// at different times; SIM_STAGGER_MS spreads the clients' starts
		// evenly over that long.
		var delay time.Duration
		if clients > 1 {
			delay = stagger * time.Duration(ci) / time.Duration(clients-1)
		}
		var cwg sync.WaitGroup
		for range par {
			cwg.Add(1)
			go func() {
				defer cwg.Done()
				time.Sleep(delay)
				for i := range work {
					if _, err := c.CreateLink(context.Background(), CreateLinkInput{DomainID: fx.DomainID, Destination: fmt.Sprintf("https://example.com/%d/%d", ci, i)}); err != nil {
						t.Errorf("client %d: %v", ci, err)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cwg.Wait()
			ends[ci] = fmt.Sprintf("%.1f", time.Since(start).Seconds())
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	total := clients * links
	floor := time.Duration((total+limit-1)/limit-1) * window
	if os.Getenv("SIM_LOG") != "" {
		for _, l := range log.lines {
			fmt.Println(l)
		}
	}
	if got := len(srv.Links(fx.AccountID)); got != total {
		t.Errorf("the service holds %d links, want %d", got, total)
	}
	n429 := srv.CountStatus(http.StatusTooManyRequests)
	fmt.Printf("clients=%d wall=%.2fs floor=%.2fs ratio=%.3f requests=%d 429=%d (%.1f%%) links=%d/%d ends=%v\n",
		clients, wall.Seconds(), floor.Seconds(), wall.Seconds()/floor.Seconds(), srv.TotalRequests(), n429,
		100*float64(n429)/float64(srv.TotalRequests()), len(srv.Links(fx.AccountID)), total, ends)
}
