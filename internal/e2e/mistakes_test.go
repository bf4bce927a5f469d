package e2e

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestMistakes_badBaseURL: a plan of 15 links in the state against a
// base_url that cannot work fails with one error that says what is wrong,
// not one per link, and without retrying each link for minutes. The time
// is logged (not asserted: machines are shared and noisy).
func TestMistakes_badBaseURL(t *testing.T) {
	for name, tc := range map[string]struct {
		baseURL func(s *service) string
		summary string
		detail  string
	}{
		"unreachable": {
			baseURL: func(*service) string { return "http://" + closedPort(t) },
			summary: "Error: Cannot reach the short-link service",
			detail:  "connection refused",
		},
		"wrong path": {
			baseURL: func(s *service) string { return s.url + "/api" },
			summary: "Error: base_url does not lead to the short-link service's API",
			detail:  "/api/api/links",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newService(t, func(st *emulator.Settings) { st.Filter.Delay = 0 })
			w := s.workdir(t, "bad-base-url-"+strings.ReplaceAll(name, " ", "-"), campaign(s.fx.DomainID, 15, halfWithSlugs))
			ctx := context.Background()
			if _, err := w.Terraform(ctx, runLimit, "apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
				t.Fatal(err)
			}
			w.Setenv("SHORTLINK_BASE_URL=" + tc.baseURL(s))
			start := time.Now()
			out, err := w.Terraform(ctx, runLimit, "plan", "-input=false", "-no-color")
			t.Logf("%s: the plan of 15 links failed after %s", name, time.Since(start).Round(100*time.Millisecond))
			if err == nil {
				t.Fatalf("the plan succeeded against a bad base_url:\n%s", out)
			}
			if n := strings.Count(out, "Error: "); n != 1 || !strings.Contains(out, tc.summary) || !strings.Contains(out, tc.detail) {
				t.Fatalf("want exactly one error, %q naming %q; got %d errors:\n%s", tc.summary, tc.detail, n, out)
			}
			if strings.Contains(out, "deleted outside Terraform") {
				t.Fatalf("a bad base_url made links look deleted:\n%s", out)
			}
			if st, _ := w.State(); len(st) != 15 {
				t.Fatalf("the state holds %d links after the failed plan, want all 15", len(st))
			}
		})
	}
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
