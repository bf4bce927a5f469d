package main

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"syscall"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
	"github.com/shortlink/terraform-provider-shortlink/internal/testsupport"
)

// Interrupt scenario: an apply of 20 links against writes that take 4 s,
// interrupted with SIGINT while writes are in flight.
const (
	interruptLinks = 20
	interruptDelay = 4 * time.Second
	// interruptMargin is what the target allows beyond the longest write
	// in flight: Terraform's own shutdown and state write.
	interruptMargin = 2 * time.Second
)

func (h *harness) interruptScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## Stopping on SIGINT\n\n"+
		"**Method** an apply of %d links, filter %s per write, sent SIGINT once 5 writes are answered and 3 or more are in flight; "+
		"`links` compares service and state after the exit. **Target** exit within the longest write in flight plus %s. "+
		"**Command** `go run ./scripts/bench -only interrupt`.\n\n",
		interruptLinks, interruptDelay, interruptMargin)
	fmt.Fprintf(report, "| run | SIGINT → exit | longest write in flight | its answer after the signal | target | writes in flight | links (service / state) |\n|---|---|---|---|---|---|---|\n")
	return writeRows(report, oneTo(h.o.runs), h.interruptRun, "run %d")
}

func (h *harness) interruptRun(i int) (string, error) {
	settings := emulator.DefaultSettings()
	settings.Filter.Delay = emulator.Duration(interruptDelay)
	es, err := startEmulator(settings)
	if err != nil {
		return "", err
	}
	defer es.close()
	writes := testsupport.NewWriteTracker(es.srv)
	ts := httptest.NewServer(writes)
	defer ts.Close()
	es.url = ts.URL
	w, err := h.workdir(fmt.Sprintf("interrupt-%d", i), es, map[string]string{"main.tf": providerBlock + interruptConfig(es.fx.DomainID)})
	if err != nil {
		return "", err
	}
	logf("interrupt run %d: applying %d links, SIGINT mid-apply", i, interruptLinks)
	run, err := w.Start("apply", "-auto-approve", "-input=false")
	if err != nil {
		return "", err
	}
	for inFlight, answered := writes.Counts(); answered < 5 || inFlight < 3; inFlight, answered = writes.Counts() {
		time.Sleep(10 * time.Millisecond)
	}
	signalled := time.Now()
	if err := run.Signal(syscall.SIGINT); err != nil {
		return "", err
	}
	if _, err := run.Wait(terraformLimit); clitest.ExitCode(err) <= 0 {
		return "", fmt.Errorf("the interrupted apply ended with %w; want a stopped run", err)
	}
	exit := run.Exited.Sub(signalled)
	if err := writes.WaitIdle(2 * interruptDelay); err != nil {
		return "", err
	}
	var longest, after time.Duration
	inFlight := writes.InFlightAt(signalled)
	for _, s := range inFlight {
		longest = max(longest, s.End.Sub(s.Start))
		after = max(after, s.End.Sub(signalled))
	}
	state, err := w.State()
	if err != nil {
		return "", err
	}
	target := longest + interruptMargin
	met := "met"
	if exit > target {
		met = "missed"
	}
	return fmt.Sprintf("| %d | %s | %s | %s | %s (%s) | %d | %d / %d |", i, seconds(exit), seconds(longest), seconds(after),
		seconds(target), met, len(inFlight), len(es.srv.Links(es.fx.AccountID)), len(state)), nil
}

func interruptConfig(domainID string) string {
	return fmt.Sprintf(`
provider "shortlink" {}

resource "shortlink_link" "l" {
  count       = %d
  domain_id   = %q
  slug        = count.index %% 2 == 0 ? "stop-${count.index}" : null
  destination = "https://example.com/stop/${count.index}"
  utm         = count.index %% 3 == 0 ? { source = "newsletter", medium = null, campaign = "spring", term = null, content = null } : null
}
`, interruptLinks, domainID)
}
