package main

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Shared-key scenario: several applies at once on one key, with the write
// budget of the throttle scenario.
const sharedLinksPerRun = 30

func (h *harness) sharedScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## One key, several runs at once\n\n"+
		"**Method** N `terraform apply` processes started together on one key, %d links each; %d writes per %s window, filter %s per create; "+
		"`total` until the last exits, `requests` and `429` count reads too. "+
		"**Floor** (N × %d / %d − 1) windows. **Command** `go run ./scripts/bench -only shared`.\n\n",
		sharedLinksPerRun, throttleBudget, throttleWindow, throttleDelay, sharedLinksPerRun, throttleBudget)
	fmt.Fprintf(report, "| runs | total | floor | total / floor | requests | answered 429 | failed applies | links |\n|---|---|---|---|---|---|---|---|\n")
	for _, n := range h.o.sharedRuns {
		row, err := h.sharedRow(n, 0)
		if err != nil {
			return fmt.Errorf("%d runs: %w", n, err)
		}
		fmt.Fprintln(report, row)
	}
	if h.o.sharedReadLinks == 0 {
		fmt.Fprintln(report)
		return nil
	}
	fmt.Fprintf(report, "\n**Method** two applies as above beside a `terraform plan` importing %d links with `bulk_refresh = false` "+
		"(a listing each; reads lifted to 2,000 a window); `writes done` when the second apply exits. **Floor** of the writes alone.\n\n", h.o.sharedReadLinks)
	fmt.Fprintf(report, "| runs | writes done | floor of the writes | writes / floor | reader | requests | answered 429 (reads, writes) | failed runs | links |\n|---|---|---|---|---|---|---|---|---|\n")
	row, err := h.sharedRow(2, h.o.sharedReadLinks)
	if err != nil {
		return fmt.Errorf("2 runs and a reader: %w", err)
	}
	fmt.Fprintln(report, row)
	fmt.Fprintln(report)
	return nil
}

// sharedRow runs writers applies (and, if readLinks > 0, a plan reading
// that many links) at once on one key and reports them as a table row.
func (h *harness) sharedRow(writers, readLinks int) (string, error) {
	settings := emulator.DefaultSettings()
	settings.Limits.Write, settings.Limits.Window = throttleBudget, emulator.Duration(throttleWindow)
	settings.Filter.Delay = emulator.Duration(throttleDelay)
	if readLinks > 0 {
		settings.Limits.Read = 2000
	}
	es, err := startEmulator(settings)
	if err != nil {
		return "", err
	}
	defer es.close()
	var runs []func() error
	h.sharedRows++
	for i := range writers {
		w, err := h.workdir(fmt.Sprintf("shared-%d-%d-%d-%d", h.sharedRows, writers, readLinks, i), es, map[string]string{"main.tf": sharedConfig(i)})
		if err != nil {
			return "", err
		}
		w.Setenv("TF_VAR_domain_id=" + es.fx.DomainID)
		runs = append(runs, func() error {
			_, err := w.terraform("apply", "-auto-approve", "-input=false", "-parallelism=10")
			return err
		})
	}
	if readLinks > 0 {
		reader, err := h.sharedReader(es, readLinks)
		if err != nil {
			return "", err
		}
		runs = append(runs, reader)
	}
	es.srv.ResetCounts()
	logf("shared key: %d applies and %d links read, at once", writers, readLinks)
	start := time.Now()
	errs := make([]error, len(runs))
	took := make([]time.Duration, len(runs))
	var wg sync.WaitGroup
	for i, run := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = run()
			took[i] = time.Since(start)
		}()
	}
	wg.Wait()
	total := time.Since(start)
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			logf("a run failed: %v", err)
		}
	}
	created := writers * sharedLinksPerRun
	links := len(es.srv.Links(es.fx.AccountID)) - readLinks
	floor := time.Duration(created/throttleBudget-1) * throttleWindow
	requests, refused := es.srv.TotalRequests(), es.srv.CountStatus(http.StatusTooManyRequests)
	if readLinks == 0 {
		return fmt.Sprintf("| %d | %s | %s | %.2f× | %d | %d (%.1f%%) | %d | %d of %d |", writers, seconds(total), seconds(floor),
			total.Seconds()/floor.Seconds(), requests, refused, 100*float64(refused)/float64(requests), failed, links, created), nil
	}
	writes := slices.Max(took[:writers])
	refusedReads := 0
	for k, v := range es.srv.Counts() {
		if k.Method == http.MethodGet && k.Status == http.StatusTooManyRequests {
			refusedReads += v
		}
	}
	return fmt.Sprintf("| %d + a reader | %s | %s | %.2f× | %s | %d | %d, %d (%.1f%%) | %d | %d of %d |", writers, seconds(writes), seconds(floor),
		writes.Seconds()/floor.Seconds(), seconds(took[writers]), requests, refusedReads, refused-refusedReads,
		100*float64(refused)/float64(requests), failed, links, created), nil
}

func sharedConfig(run int) string {
	return providerBlock + fmt.Sprintf(`
provider "shortlink" {}

variable "domain_id" { type = string }

resource "shortlink_link" "l" {
  count       = %d
  domain_id   = var.domain_id
  slug        = "run%d-${count.index}"
  destination = "https://example.com/run%d/${count.index}"
}
`, sharedLinksPerRun, run, run)
}

// sharedReader seeds n links and returns a run that plans their import
// with bulk_refresh = false: a listing for each.
func (h *harness) sharedReader(es *emulatorServer, n int) (func() error, error) {
	links, err := es.srv.SeedLinks(es.fx.DomainID, "seeded", n)
	if err != nil {
		return nil, err
	}
	config := importConfig(false, es.fx.DomainID)
	w, err := h.workdir(fmt.Sprintf("shared-reader-%d", n), es, map[string]string{"main.tf": config, "links.json": linksFile(links)})
	if err != nil {
		return nil, err
	}
	return func() error {
		_, err := w.terraform("plan", "-input=false", "-lock=false")
		return err
	}, nil
}
