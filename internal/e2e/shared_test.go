package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// TestShared_runsAtOnce: five pipelines apply at once on one key whose
// small allowance they share (12 links each on 10 writes per 2 s), with
// max_retries = 0. Every apply finishes, each link is created exactly
// once, and every plan after is empty: the runs pace themselves from the
// service's counts, and a write refused all the same is waited out within
// its timeout rather than counted as a failure (when max_retries counted
// a write's 429s, such an apply failed at its first refusal).
func TestShared_runsAtOnce(t *testing.T) {
	t.Parallel()
	const runs, links = 5, 12
	s := newService(t, func(st *emulator.Settings) {
		st.Filter.Delay = emulator.Duration(20 * time.Millisecond)
		st.Limits.Write, st.Limits.Window = 10, emulator.Duration(2*time.Second)
	})
	workdirs := make([]*clitest.Workdir, runs)
	for i := range workdirs {
		workdirs[i] = s.workdir(t, fmt.Sprintf("shared-%d", i), pipeline(s.fx.DomainID, i, links))
	}
	ctx := context.Background()
	outs, errs := make([]string, runs), make([]error, runs)
	var wg sync.WaitGroup
	for i, w := range workdirs {
		wg.Go(func() {
			outs[i], errs[i] = runCLI(ctx, w, "apply", "-auto-approve")
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("apply %d failed: %v", i, err)
		}
	}
	t.Logf("%d requests in all, %d answered 429", s.srv.TotalRequests(), s.srv.CountStatus(http.StatusTooManyRequests))

	created := map[string]int{}
	for _, l := range s.srv.Links(s.fx.AccountID) {
		created[l.Destination]++
	}
	if len(created) != runs*links {
		t.Errorf("the service holds links to %d destinations, want %d", len(created), runs*links)
	}
	for destination, n := range created {
		if n != 1 || !strings.HasPrefix(destination, "https://example.com/pipeline") {
			t.Errorf("%d links to %s, want one of each pipeline's", n, destination)
		}
	}
	for i, w := range workdirs {
		if plan, err := runCLI(ctx, w, "plan", "-detailed-exitcode"); err != nil {
			t.Errorf("the plan of pipeline %d after its apply is not empty: %v\n%s", i, err, plan)
		}
	}
}

// pipeline is one pipeline's configuration: n links of its own, half with
// a slug, UTM parameters on every third, and no retries after failures.
func pipeline(domainID string, run, n int) string {
	var b strings.Builder
	b.WriteString("provider \"shortlink\" {\n  max_retries = 0\n}\n")
	for i := range n {
		fmt.Fprintf(&b, "\nresource \"shortlink_link\" \"l%02d\" {\n  domain_id   = %q\n  destination = \"https://example.com/pipeline%d/%d\"\n", i, domainID, run, i)
		if i%2 == 0 {
			fmt.Fprintf(&b, "  slug        = \"pipeline%d-%d\"\n", run, i)
		}
		if i%3 == 0 {
			b.WriteString("  utm = {\n    source   = \"newsletter\"\n    campaign = \"spring\"\n  }\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}
