package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// sharedCase is one shape of the shared-key scenario: runs applies of
// links links each, started together on one key of limit writes per window
// under a rate-limit model.
type sharedCase struct {
	model       string
	limit       int
	window      time.Duration
	runs, links int
	busy        bool          // a busy loop on every core beside the runs
	readLinks   int           // >0: two applies beside a plan reading this many links
	filter      time.Duration // the fraud filter's time per write (0: throttleDelay)
	rounding    string        // how the service makes its waits whole seconds (emulator.Limits.Rounding; "": up)
	parallelism int           // Terraform's -parallelism (0: defaults.TerraformParallelism)
}

// parallelismFlag is the case's -parallelism, for its applies and
// Terraform alone's.
func (c sharedCase) parallelismFlag() string {
	return fmt.Sprintf("-parallelism=%d", cmp.Or(c.parallelism, defaults.TerraformParallelism))
}

// filterDelay is how long the service takes to check each write's destination.
func (c sharedCase) filterDelay() time.Duration {
	return cmp.Or(c.filter, throttleDelay)
}

// String names the case as -shared-shapes matches it and errors show it.
func (c sharedCase) String() string {
	s := fmt.Sprintf("%s %d/%s %dx%d", c.model, c.limit, c.window, c.runs, c.links)
	if c.busy {
		s += " busy"
	}
	if c.readLinks > 0 {
		s += " reader"
	}
	if c.filter > 0 {
		s += " filter " + c.filter.String()
	}
	if c.rounding != "" {
		s += " rounded " + c.rounding
	}
	if c.parallelism != 0 {
		s += fmt.Sprintf(" parallelism %d", c.parallelism)
	}
	return s
}

// sharedCases is the subset of the pacing's matrix run with the real CLI:
// the spec's 60 writes a minute, a short window with four runs, and the
// 10 per 2 s shape with three and five runs, on each model of -shared-models,
// and two small applies whose writes all fit in one window of the spec's 60,
// and three runs at the emulator's own filter time (slower answers cost the
// pacing round trips in every window) and on a service that rounds its
// seconds down (whose waits end up to a second early), and five runs with
// -parallelism=3, which docs/guides/rate-limits-and-timeouts.md advises where each run's part of a
// window is small; then the 10 per 2 s shape under CPU
// load, and beside a reader. Those
// -shared-shapes does not name are left out.
func (o options) sharedCases() []sharedCase {
	var out []sharedCase
	for _, c := range o.allSharedCases() {
		if len(o.sharedShapes) == 0 || slices.ContainsFunc(o.sharedShapes, func(sh string) bool { return strings.HasPrefix(c.String(), sh) }) {
			out = append(out, c)
		}
	}
	return out
}

func (o options) allSharedCases() []sharedCase {
	var out []sharedCase
	for _, m := range o.sharedModels {
		out = append(out,
			sharedCase{model: m, limit: 60, window: time.Minute, runs: 3, links: 50},
			sharedCase{model: m, limit: 20, window: 5 * time.Second, runs: 4, links: 30},
			sharedCase{model: m, limit: throttleBudget, window: throttleWindow, runs: 3, links: 30},
			sharedCase{model: m, limit: throttleBudget, window: throttleWindow, runs: 5, links: 30},
			sharedCase{model: m, limit: 60, window: time.Minute, runs: 2, links: 20},
			sharedCase{model: m, limit: throttleBudget, window: throttleWindow, runs: 3, links: 30, filter: time.Duration(emulator.DefaultSettings().Filter.Delay)},
			sharedCase{model: m, limit: throttleBudget, window: throttleWindow, runs: 3, links: 30, rounding: emulator.RoundDown},
			sharedCase{model: m, limit: throttleBudget, window: throttleWindow, runs: 5, links: 30, parallelism: 3})
	}
	first := emulator.ModelFirstRequest
	out = append(out, sharedCase{model: first, limit: throttleBudget, window: throttleWindow, runs: 3, links: 30, busy: true})
	if o.sharedReadLinks > 0 {
		out = append(out, sharedCase{model: first, limit: throttleBudget, window: throttleWindow, runs: 2, links: 30, readLinks: o.sharedReadLinks})
	}
	return out
}

func (h *harness) sharedScenario(report *bytes.Buffer) error {
	fmt.Fprintf(report, "## One key, several runs at once\n\n"+
		"**Method** N `terraform apply` processes (parallelism 10, where a row names no other) started together on one key, each creating its links; filter %s per create (where a row names another, that); "+
		"every shape run %d times: the median and worst `total / floor`, the worst share of requests answered 429 (reads count too), "+
		"and the longest one create took in any run, as Terraform reports it (`Creation complete after`), which the create timeout bounds. "+
		"**Floor** the windows the writes need at the limit (on the clock model, the first is what was left of the window the first write arrived in: "+
		"less the part gone when the runs started, or more when it ended while Terraform was still planning), "+
		"plus Terraform alone: the same applies, started together in the same conditions, on a framework provider of the same schema that does no I/O "+
		"(`scripts/bench/noio`); `total / windows` leaves Terraform's own time in the ratio; part of that time overlaps the windows, "+
		"so a shape at the floor can read just under 1.00×. "+
		"**Command** `go run ./scripts/bench -only shared -runs %d` (`-shared-models`, `-shared-shapes`; %s).\n\n", throttleDelay, h.o.runs, h.o.runs, today())
	fmt.Fprintf(report, "| model | limit | runs × links | windows (median) | Terraform alone (median) | total (median) | total / floor (median, worst) | total / windows (median) | answered 429 (worst) | longest create | failed applies | links |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range h.o.sharedCases() {
		row, err := h.sharedRow(c)
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		fmt.Fprintln(report, row)
	}
	fmt.Fprintln(report)
	return nil
}

// sharedRow runs the case h.o.runs times and reports it as a table row.
func (h *harness) sharedRow(c sharedCase) (string, error) {
	var totals, ratios, windowRatios, alone, floors, refusedShares []float64
	failed, links, created := 0, 0, 0
	var longest time.Duration
	for range h.o.runs {
		r, err := h.sharedOnce(c)
		if err != nil {
			return "", err
		}
		totals, ratios = append(totals, r.total.Seconds()), append(ratios, r.total.Seconds()/(r.windows+r.alone).Seconds())
		windowRatios, alone = append(windowRatios, r.total.Seconds()/r.windows.Seconds()), append(alone, r.alone.Seconds())
		refusedShares = append(refusedShares, r.refusedShare)
		floors = append(floors, r.windows.Seconds())
		failed, links, created = failed+r.failed, links+r.links, created+c.runs*c.links
		longest = max(longest, r.longestCreate)
	}
	worst := slices.Max(ratios)
	for _, s := range [][]float64{totals, ratios, windowRatios, alone, floors} {
		slices.Sort(s)
	}
	mid := len(totals) / 2
	what := c.model
	switch {
	case c.busy:
		what += ", CPU busy"
	case c.readLinks > 0:
		what += fmt.Sprintf(", beside a plan reading %d links (writes only)", c.readLinks)
	case c.filter > 0:
		what += fmt.Sprintf(", filter %s", c.filter)
	case c.rounding != "":
		what += ", seconds rounded " + c.rounding
	case c.parallelism != 0:
		what += fmt.Sprintf(", -parallelism=%d", c.parallelism)
	}
	return fmt.Sprintf("| %s | %d per %s | %d × %d | %s | %s | %s | %.2f×, %.2f× | %.2f× | %.1f%% | %s | %d | %d of %d |", what, c.limit, c.window, c.runs, c.links,
		seconds(time.Duration(floors[mid]*float64(time.Second))), seconds(time.Duration(alone[mid]*float64(time.Second))), seconds(time.Duration(totals[mid]*float64(time.Second))),
		ratios[mid], worst, windowRatios[mid], 100*slices.Max(refusedShares), longest, failed, links, created), nil
}

// sharedResult is what one run of a case measured.
type sharedResult struct {
	// windows is the least the writes take; alone what the same applies
	// take on the provider that does no I/O.
	total, windows, alone time.Duration
	refusedShare          float64
	failed, links         int
	// longestCreate is the longest one create took, as Terraform reported it.
	longestCreate time.Duration
}

// sharedOnce starts the case's applies (and reader) at once and measures
// them; with a reader, total is when the last apply exited.
func (h *harness) sharedOnce(c sharedCase) (sharedResult, error) {
	settings := emulator.DefaultSettings()
	settings.Limits.Write, settings.Limits.Window, settings.Limits.Model = c.limit, emulator.Duration(c.window), c.model
	settings.Limits.Rounding = c.rounding
	settings.Filter.Delay = emulator.Duration(c.filterDelay())
	if c.readLinks > 0 {
		settings.Limits.Read = 2000
	}
	es, err := startEmulator(settings)
	if err != nil {
		return sharedResult{}, err
	}
	defer es.close()
	var runs []func() error
	creates := make([]time.Duration, c.runs) // each run's longest create
	h.sharedRows++
	for i := range c.runs {
		w, err := h.workdir(fmt.Sprintf("shared-%d-%d", h.sharedRows, i), es, map[string]string{"main.tf": countedLinks(c.links, fmt.Sprintf("run%d", i))})
		if err != nil {
			return sharedResult{}, err
		}
		w.Setenv("TF_VAR_domain_id=" + es.fx.DomainID)
		runs = append(runs, func() error {
			out, err := w.Terraform(context.Background(), terraformLimit, "apply", "-auto-approve", "-input=false", c.parallelismFlag())
			creates[i] = longestCreate(out)
			return err
		})
	}
	if c.readLinks > 0 {
		reader, err := h.sharedReader(es, c.readLinks)
		if err != nil {
			return sharedResult{}, err
		}
		runs = append(runs, reader)
	}
	if c.busy {
		// One set of busy loops for the runs and for Terraform alone.
		stop := busyLoops()
		defer stop()
	}
	es.srv.ResetCounts()
	logf("shared key: %s", c)
	start := time.Now()
	took, errs := together(runs)
	firstWrite := time.Unix(0, es.firstWrite.Load())
	r := sharedResult{total: slices.Max(took[:c.runs]), windows: sharedFloor(c, start, firstWrite), longestCreate: slices.Max(creates)}
	if r.alone, err = h.terraformAlone(c); err != nil {
		return r, err
	}
	for _, err := range errs {
		if err != nil {
			r.failed++
			logf("a run failed: %v", err)
		}
	}
	r.links = len(es.srv.Links(es.fx.AccountID)) - c.readLinks
	requests, refused := es.srv.TotalRequests(), es.srv.CountStatus(http.StatusTooManyRequests)
	r.refusedShare = float64(refused) / float64(max(requests, 1))
	return r, nil
}

// sharedFloor is the least time the case's writes can take: the windows
// they need beyond the first; on the clock model, the first is cut short
// by the part of it gone when the runs started, and a window that ended
// before the first write arrived (Terraform was still planning) holds none
// of them: the writes' first window is the one that write arrived in.
func sharedFloor(c sharedCase, start, firstWrite time.Time) time.Duration {
	windows := (c.runs*c.links + c.limit - 1) / c.limit
	floor := time.Duration(windows-1) * c.window
	if c.model == emulator.ModelClock {
		if firstWrite.Before(start) {
			firstWrite = start // none arrived
		}
		floor += firstWrite.Truncate(c.window).Add(c.window).Sub(start) - c.window
	}
	return max(floor, c.filterDelay())
}

// terraformAlone is how long the case's applies take, started together in
// the same conditions (the caller's busy loops), on the provider that does
// no I/O: Terraform's own part of the case, which no pacing can save.
func (h *harness) terraformAlone(c sharedCase) (time.Duration, error) {
	h.sharedRows++
	var runs []func() error
	for i := range c.runs {
		w, err := h.workdir(fmt.Sprintf("shared-alone-%d-%d", h.sharedRows, i), nil, map[string]string{"main.tf": countedNoIOLinks(c.links, fmt.Sprintf("run%d", i))})
		if err != nil {
			return 0, err
		}
		runs = append(runs, func() error {
			_, err := w.terraform("apply", "-auto-approve", "-input=false", c.parallelismFlag())
			return err
		})
	}
	took, errs := together(runs)
	return slices.Max(took), errors.Join(errs...)
}

// createComplete is the line Terraform prints when a create ends.
var createComplete = regexp.MustCompile(`Creation complete after ([0-9hms.]+)`)

// longestCreate is the longest create an apply's output reports.
func longestCreate(out string) time.Duration {
	var longest time.Duration
	for _, m := range createComplete.FindAllStringSubmatch(out, -1) {
		if d, err := time.ParseDuration(m[1]); err == nil {
			longest = max(longest, d)
		}
	}
	return longest
}

// together starts the runs at once and returns how long after the start
// each ended, and how.
func together(runs []func() error) ([]time.Duration, []error) {
	start := time.Now()
	took, errs := make([]time.Duration, len(runs)), make([]error, len(runs))
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
	return took, errs
}

// busyLoops keeps every core busy until the returned function is called.
func busyLoops() (stop func()) {
	var done atomic.Bool
	for range runtime.NumCPU() {
		go func() {
			for n := 0; !done.Load(); n++ {
				_ = n * n
			}
		}()
	}
	return func() { done.Store(true) }
}

// countedLinks is a configuration of n links on var.domain_id, their
// slugs and destinations named after name.
func countedLinks(n int, name string) string {
	return providerBlock + `
provider "shortlink" {}

variable "domain_id" { type = string }
` + countedResource("shortlink_link", "var.domain_id", n, name)
}

// countedNoIOLinks is countedLinks on the provider that does no I/O.
func countedNoIOLinks(n int, name string) string {
	return noioProviderBlock + countedResource("noio_link", `"`+noioDomainID+`"`, n, name)
}

// countedResource is n resources of the type on the domain, their slugs
// and destinations named after name.
func countedResource(typ, domain string, n int, name string) string {
	return fmt.Sprintf(`
resource "%s" "l" {
  count       = %d
  domain_id   = %s
  slug        = "%s-${count.index}"
  destination = "https://example.com/%s/${count.index}"
}
`, typ, n, domain, name, name)
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
