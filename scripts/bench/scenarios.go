package main

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Throttle scenario: 40 links, a write budget of 10 per 2 s window.
const (
	throttleLinks  = 40
	throttleBudget = 10
	throttleWindow = 2 * time.Second
	throttleDelay  = 100 * time.Millisecond // the fraud filter on every create
)

func (h *harness) throttleScenario(report *bytes.Buffer) error {
	floor := time.Duration(throttleLinks/throttleBudget-1) * throttleWindow
	fmt.Fprintf(report, "## Applying under a write budget\n\n"+
		"**Method** one `terraform apply` of %d links (parallelism 10); %d writes per %s window, filter %s per create; "+
		"`writes` spans the first to the last write received. **Floor** %d windows, %s. **Command** `go run ./scripts/bench -only throttle -runs %d` (%s).\n\n",
		throttleLinks, throttleBudget, throttleWindow, throttleDelay, throttleLinks/throttleBudget-1, seconds(floor), h.o.runs, today())
	fmt.Fprintf(report, "| run | wall | wall / floor | writes | writes / floor | requests | answered 429 |\n|---|---|---|---|---|---|---|\n")
	config := countedLinks(throttleLinks, "budget")
	for i := 1; i <= h.o.runs; i++ {
		settings := emulator.DefaultSettings()
		settings.Limits.Write, settings.Limits.Window = throttleBudget, emulator.Duration(throttleWindow)
		settings.Filter.Delay = emulator.Duration(throttleDelay)
		es, err := startEmulator(settings)
		if err != nil {
			return err
		}
		w, err := h.workdir(fmt.Sprintf("throttle-%d", i), es, map[string]string{"main.tf": config})
		if err != nil {
			return err
		}
		w.Setenv("TF_VAR_domain_id=" + es.fx.DomainID)
		logf("throttle run %d: applying %d links", i, throttleLinks)
		wall, err := w.terraform("apply", "-auto-approve", "-input=false", "-parallelism=10")
		if err != nil {
			es.close()
			return err
		}
		writes := time.Duration(es.lastWrite.Load() - es.firstWrite.Load())
		total, refused := es.srv.TotalRequests(), es.srv.CountStatus(http.StatusTooManyRequests)
		if n := len(es.srv.Links(es.fx.AccountID)); n != throttleLinks {
			es.close()
			return fmt.Errorf("the service holds %d links after the apply, want %d", n, throttleLinks)
		}
		fmt.Fprintf(report, "| %d | %s | %.2f× | %s | %.2f× | %d | %d (%.1f%%) |\n", i, seconds(wall), wall.Seconds()/floor.Seconds(),
			seconds(writes), writes.Seconds()/floor.Seconds(), total, refused, 100*float64(refused)/float64(total))
		es.close()
	}
	fmt.Fprintln(report)
	return nil
}

// Refresh scenario.
func (h *harness) refreshScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## Refresh at scale\n\n"+
		"**Method** N links imported, then `terraform plan` (refresh, no change), median of %d; cursor paging of %d links, 600 reads per 60 s "+
		"(lifted for `bulk_refresh = false`, which lists once per resource). **Floor** `terraform_data` planning N resources. "+
		"**Command** `go run ./scripts/bench -only refresh`.\n\n",
		h.o.runs, h.o.pageSize)
	fmt.Fprintf(report, "| N | plan | terraform_data floor | ratio | list requests (pages) | import | 429 during import | provider peak RSS | plan, bulk_refresh = false | list requests |\n|---|---|---|---|---|---|---|---|---|---|\n")
	return writeRows(report, h.o.sizes, h.refreshRow, "with %d links")
}

func (h *harness) refreshRow(n int) (string, error) {
	pages := (n + h.o.pageSize - 1) / h.o.pageSize
	floor, err := h.terraformDataFloor(n)
	if err != nil {
		return "", err
	}
	on, err := h.refreshPlan(n, true)
	if err != nil {
		return "", err
	}
	off := "not measured"
	offLists := "–"
	if n <= h.o.offLimit {
		m, err := h.refreshPlan(n, false)
		if err != nil {
			return "", err
		}
		off, offLists = seconds(m.plan), fmt.Sprint(m.lists)
	}
	return fmt.Sprintf("| %d | %s | %s | %.2f× | %d (%d) | %s | %d | %.0f MB | %s | %s |",
		n, seconds(on.plan), seconds(floor), on.plan.Seconds()/floor.Seconds(), on.lists, pages,
		seconds(on.importTime), on.import429, float64(on.peakKB)/1024, off, offLists), nil
}

type refreshMeasure struct {
	plan, importTime time.Duration
	lists, import429 int
	peakKB           int64
}

// linksFile is the seeded links as the configuration reads them.
func linksFile(links []emulator.Link) string {
	m := make(map[string]map[string]string, len(links))
	for _, l := range links {
		m[l.Slug] = map[string]string{"id": l.ID, "destination": l.Destination}
	}
	return writeJSON(m)
}

func (h *harness) refreshPlan(n int, bulk bool) (refreshMeasure, error) {
	var m refreshMeasure
	settings := emulator.DefaultSettings()
	settings.Variants.Paging, settings.Variants.PageSize = "cursor", h.o.pageSize
	if !bulk {
		settings.Limits.Read = 100_000_000
	}
	es, err := startEmulator(settings)
	if err != nil {
		return m, err
	}
	defer es.close()
	links, err := es.srv.SeedLinks(es.fx.DomainID, "bench", n)
	if err != nil {
		return m, err
	}
	config := importConfig(bulk, es.fx.DomainID)
	w, err := h.workdir(fmt.Sprintf("refresh-%d-%t", n, bulk), es, map[string]string{"main.tf": config, "links.json": linksFile(links)})
	if err != nil {
		return m, err
	}
	logf("N=%d bulk_refresh=%t: importing", n, bulk)
	if m.importTime, err = w.terraform("apply", "-auto-approve", "-input=false"); err != nil {
		return m, err
	}
	m.import429 = es.srv.CountStatus(http.StatusTooManyRequests)
	var times []time.Duration
	for i := 0; i < h.o.runs; i++ {
		es.srv.ResetCounts()
		logf("N=%d bulk_refresh=%t: plan %d", n, bulk, i+1)
		elapsed, peak, err := timedPlan(w)
		if err != nil {
			return m, err
		}
		times = append(times, elapsed)
		m.lists = max(m.lists, es.srv.Count(http.MethodGet, "/api/links"))
		m.peakKB = max(m.peakKB, peak)
	}
	m.plan = median(times)
	return m, nil
}

// floorEntries are n links as the floors' configurations read them, with
// the slugs and destinations the emulator seeds.
func floorEntries(n int) []emulator.Link {
	links := make([]emulator.Link, n)
	for i := range links {
		links[i] = emulator.Link{ID: fmt.Sprint(i), Slug: fmt.Sprintf("bench-%d", i), Destination: fmt.Sprintf("https://example.com/bench/%d", i)}
	}
	return links
}

func (h *harness) terraformDataFloor(n int) (time.Duration, error) {
	links := floorEntries(n)
	w, err := h.workdir(fmt.Sprintf("floor-%d", n), nil, map[string]string{"main.tf": terraformDataConfig, "links.json": linksFile(links)})
	if err != nil {
		return 0, err
	}
	logf("N=%d terraform_data: applying", n)
	if _, err := w.terraform("apply", "-auto-approve", "-input=false"); err != nil {
		return 0, err
	}
	var times []time.Duration
	for i := 0; i < h.o.runs; i++ {
		elapsed, err := w.terraform("plan", "-input=false", "-lock=false", "-detailed-exitcode")
		if err != nil {
			return 0, err
		}
		times = append(times, elapsed)
	}
	return median(times), nil
}

// importConfig brings the links of links.json (as linksFile writes them)
// under management with import blocks.
func importConfig(bulk bool, domainID string) string {
	return providerBlock + fmt.Sprintf(`
provider "shortlink" {
  bulk_refresh = %t
}

locals {
  links = jsondecode(file("${path.module}/links.json"))
}

import {
  for_each = local.links
  to       = shortlink_link.l[each.key]
  id       = each.value.id
}

resource "shortlink_link" "l" {
  for_each    = local.links
  domain_id   = %q
  slug        = each.key
  destination = each.value.destination
}
`, bulk, domainID)
}
