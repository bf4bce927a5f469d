// Command bench measures the provider with the real Terraform CLI against
// the emulator, and writes the figures as Markdown (BENCHMARKS.md).
//
//	go run ./scripts/bench                      # everything (make bench)
//	go run ./scripts/bench -only throttle       # the write-budget scenario
//	go run ./scripts/bench -only shared         # several applies on one key
//	go run ./scripts/bench -only shared -shared-shapes "clock 10/2s 5x30" -out -
//	go run ./scripts/bench -only interrupt      # SIGINT mid-apply: time to exit
//	go run ./scripts/bench -only refresh -sizes 100,1000
//	go run ./scripts/bench -only clicks -click-sizes 100000,1000000
//	go run ./scripts/bench -only account -account-sizes 1000,100000,1000000
//
// Scenarios:
//
//   - throttle: 40 links applied with a write budget of 10 requests per 2 s
//     window. The budget allows no less than 3 windows of waiting (6 s);
//     the table gives the apply's wall time against that floor and the
//     share of requests the service answered 429.
//   - shared: applies started together on one key, over a subset of the
//     pacing's simulation matrix (sharedCases): total time against the
//     floor of the writes plus the same applies on the no-I/O provider,
//     429s, failures, links created.
//   - interrupt: an apply of 20 links against 4 s writes, interrupted
//     with SIGINT while writes are in flight; the time from the signal to
//     Terraform's exit against the longest write in flight plus 2 s.
//   - refresh: N links are seeded, brought under management with import
//     blocks, then `terraform plan` (with refresh) is timed, with the list
//     requests counted by the emulator and the provider process's peak
//     memory; in the same run Terraform's own plan of N terraform_data
//     resources (the floor no provider can beat) and the provider with
//     bulk_refresh = false.
//   - account: a plan of 1,000 managed links in accounts of N links
//     (unpaged), beside the no-I/O provider (scripts/bench/noio) and
//     terraform_data planning the same 1,000 entries; peak memory, list
//     requests per plan and the emulator's own CPU share. With -profile
//     DIR the provider is built with -tags pprof and writes a CPU profile
//     of each process there.
//   - clicks: N clicks of 100 links over 30 days; the plan time, the
//     provider's peak memory and the state size of shortlink_clicks, and of
//     shortlink_analytics_export on the same clicks; -profile DIR as for
//     account, for the plans.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/clitest"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	only      string
	sizes     []int
	runs      int
	out       string
	offLimit  int
	pageSize  int
	terraform string

	clickSizes      []int
	clicksExportMax int

	sharedModels    []string
	sharedReadLinks int
	sharedShapes    []string

	accountSizes []int
	profile      string
}

func parseOptions() (options, error) {
	var o options
	var sizes, clickSizes string
	flag.StringVar(&o.only, "only", "", "run one scenario: throttle, shared, interrupt, refresh, account or clicks")
	flag.StringVar(&sizes, "sizes", "100,1000,5000", "numbers of links for the refresh scenario")
	flag.IntVar(&o.runs, "runs", 3, "timed runs per measurement (the median is reported)")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "the Markdown report whose sections the scenarios run replace (- for stdout)")
	flag.IntVar(&o.offLimit, "snapshot-off-max", 1000, "largest N measured with bulk_refresh = false")
	flag.IntVar(&o.pageSize, "page-size", 100, "links per page of the emulator's list (cursor paging)")
	flag.StringVar(&clickSizes, "click-sizes", "100000,1000000", "numbers of clicks for the clicks scenario")
	var sharedModels string
	flag.StringVar(&sharedModels, "shared-models", "first-request,clock", "rate-limit models of the shared scenario (EMULATOR.md)")
	flag.IntVar(&o.sharedReadLinks, "shared-read-links", 1000, "links the reading run of the shared scenario plans (0: no reader)")
	var sharedShapes string
	flag.StringVar(&sharedShapes, "shared-shapes", "", `shapes of the shared scenario to run, comma-separated, each matching the start of a row's name (e.g. "clock 10/2s 5x30"; empty: all)`)
	flag.IntVar(&o.clicksExportMax, "clicks-export-max", 100000, "largest number of clicks read with shortlink_analytics_export")
	var accountSizes string
	flag.StringVar(&accountSizes, "account-sizes", "1000,100000,1000000", "numbers of links in the account of the account scenario")
	flag.StringVar(&o.profile, "profile", "", "directory for CPU profiles of the provider in the account and clicks scenarios (builds it with -tags pprof)")
	flag.Parse()
	var err error
	if o.accountSizes, err = positiveNumbers("-account-sizes", accountSizes); err != nil {
		return o, err
	}
	if o.sizes, err = positiveNumbers("-sizes", sizes); err != nil {
		return o, err
	}
	if o.clickSizes, err = positiveNumbers("-click-sizes", clickSizes); err != nil {
		return o, err
	}
	for _, m := range strings.Split(sharedModels, ",") {
		s := emulator.DefaultSettings()
		s.Limits.Model = strings.TrimSpace(m)
		if err := s.Validate(); err != nil {
			return o, fmt.Errorf("-shared-models: %w", err)
		}
		o.sharedModels = append(o.sharedModels, s.Limits.Model)
	}
	for _, sh := range strings.Split(sharedShapes, ",") {
		if sh = strings.Join(strings.Fields(sh), " "); sh != "" {
			o.sharedShapes = append(o.sharedShapes, sh)
		}
	}
	if len(o.sharedShapes) > 0 && len(o.sharedCases()) == 0 {
		var names []string
		for _, c := range o.allSharedCases() {
			names = append(names, c.String())
		}
		return o, fmt.Errorf("-shared-shapes: %q names none of the shapes: %s", sharedShapes, strings.Join(names, "; "))
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		return o, errors.New("terraform is not on PATH")
	}
	o.terraform = tf
	return o, nil
}

// today is the day figures are measured, as the report gives it.
func today() string { return time.Now().UTC().Format("2006-01-02") }

// positiveNumbers reads a comma-separated list of positive numbers.
func positiveNumbers(flagName, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%s: %q is not a positive number", flagName, s)
		}
		out = append(out, n)
	}
	return out, nil
}

func run() error {
	o, err := parseOptions()
	if err != nil {
		return err
	}
	h, err := newHarness(o)
	if err != nil {
		return err
	}
	defer os.RemoveAll(h.dir)
	var report bytes.Buffer
	fmt.Fprintf(&report, "# Benchmarks\n\nMeasured by `make bench` (`go run ./scripts/bench`) on %s.\n\n%s\n", today(), machine(h))
	for _, sc := range []struct {
		name string
		run  func(*bytes.Buffer) error
	}{
		{"throttle", h.throttleScenario},
		{"shared", h.sharedScenario},
		{"interrupt", h.interruptScenario},
		{"refresh", h.refreshScenario},
		{"account", h.accountScenario},
		{"clicks", h.clicksScenario},
	} {
		if o.only != "" && o.only != sc.name {
			continue
		}
		if err := sc.run(&report); err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
	}
	if o.out == "-" {
		_, err = os.Stdout.Write(report.Bytes())
		return err
	}
	if err := writeReport(o.out, report.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", o.out)
	return nil
}

// harness holds the built provider and the CLI that runs it.
type harness struct {
	o   options
	dir string
	cli *clitest.CLI
	// sharedRows counts the shared-key runs, so that every run starts in
	// fresh directories, with no state of links on an earlier emulator to
	// refresh first.
	sharedRows int
}

func newHarness(o options) (*harness, error) {
	dir, err := os.MkdirTemp("", "shortlink-bench-")
	if err != nil {
		return nil, err
	}
	logf("building the provider")
	build := clitest.BuildOptions{Also: []string{clitest.ModulePath + "/scripts/bench/noio"}}
	if o.profile != "" {
		build.Tags = "pprof"
	}
	cli, err := clitest.BuildWith(dir, build)
	if err != nil {
		return nil, err
	}
	return &harness{o: o, dir: dir, cli: cli}, nil
}

// slugRun finds the run a shared-key create belongs to (its slug's prefix,
// see sharedConfig).
var slugRun = regexp.MustCompile(`"slug":\s*"(run\d+)-`)

// emulatorServer serves an emulator and notes when write requests arrive.
type emulatorServer struct {
	srv        *emulator.Server
	fx         emulator.Fixture
	url        string
	close      func()
	firstWrite atomic.Int64
	lastWrite  atomic.Int64
	// listing is the time spent answering lists, from the request to the
	// last byte written: the emulator's share of a plan, and no less.
	listing atomic.Int64
}

func startEmulator(settings emulator.Settings) (*emulatorServer, error) {
	srv, err := emulator.New(emulator.Options{Settings: settings})
	if err != nil {
		return nil, err
	}
	fx, err := srv.SeedFixture("bench", "go.example.test")
	if err != nil {
		return nil, err
	}
	es := &emulatorServer{srv: srv, fx: fx}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			now := time.Now().UnixNano()
			es.firstWrite.CompareAndSwap(0, now)
			es.lastWrite.Store(now)
		}
		if r.Method == http.MethodGet && r.URL.Path == "/api/links" {
			start := time.Now()
			srv.ServeHTTP(w, r)
			es.listing.Add(int64(time.Since(start)))
			return
		}
		if os.Getenv("BENCH_WRITE_LOG") == "" || r.Method == http.MethodGet {
			srv.ServeHTTP(w, r)
			return
		}
		// BENCH_WRITE_LOG=1: each write's arrival, status and remaining
		// count on stderr, to see how runs sharing a key took turns.
		// The writer is named by its slugs' prefix (run0-…, see
		// sharedConfig), not by its connection: a run opens several.
		arrived := time.Now()
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		writer := r.RemoteAddr
		if m := slugRun.FindSubmatch(body); m != nil {
			writer = string(m[1])
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, r)
		fmt.Fprintf(os.Stderr, "write %s %s %d remaining=%s\n", arrived.Format("15:04:05.000"), writer, rec.Code, rec.Header().Get("X-RateLimit-Remaining"))
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	es.url, es.close = ts.URL, ts.Close
	return es, nil
}

// workdir is one Terraform working directory.
type workdir struct {
	*clitest.Workdir
}

func (h *harness) workdir(name string, es *emulatorServer, files map[string]string) (*workdir, error) {
	var env []string
	if es != nil {
		env = append(env, "SHORTLINK_BASE_URL="+es.url, "SHORTLINK_API_KEY="+es.fx.APIKey)
	}
	w, err := h.cli.Workdir(name, files, env...)
	return &workdir{w}, err
}

// terraformLimit bounds one CLI run of the benchmark.
const terraformLimit = 30 * time.Minute

// terraform runs the CLI and times it, failing with its output when it
// fails; a plan with -detailed-exitcode that finds changes (exit 2) is a
// failure too.
func (w *workdir) terraform(args ...string) (time.Duration, error) {
	start := time.Now()
	_, err := w.Terraform(context.Background(), terraformLimit, args...)
	return time.Since(start), err
}

const providerBlock = clitest.RequiredProviders

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// writeRows writes the table row of each n, then the blank line that ends
// the table; what, a format of n, says in an error which row failed.
func writeRows(report *bytes.Buffer, ns []int, row func(n int) (string, error), what string) error {
	for _, n := range ns {
		r, err := row(n)
		if err != nil {
			return fmt.Errorf("%s: %w", fmt.Sprintf(what, n), err)
		}
		fmt.Fprintln(report, r)
	}
	fmt.Fprintln(report)
	return nil
}

// oneTo is 1, 2, …, n: the numbers of n runs.
func oneTo(n int) []int {
	ns := make([]int, n)
	for i := range ns {
		ns[i] = i + 1
	}
	return ns
}

// joinNumbers writes numbers as -sizes flags take them.
func joinNumbers(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// machine describes where the figures were measured.
func machine(h *harness) string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int
		if _, err := fmt.Sscanf(strings.SplitN(string(b), "\n", 2)[0], "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB of memory", float64(kb)/(1<<20))
		}
	}
	tfv, _ := exec.Command(h.o.terraform, "version").Output()
	return fmt.Sprintf("Machine: %d × %s%s, %s/%s, %s, %s. Shared and noisy: compare figures of one run, not across runs.\n",
		runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, runtime.Version(), strings.SplitN(string(tfv), "\n", 2)[0])
}

// peakRSS samples the high-water mark of the provider processes' resident
// memory while f runs.
// timedPlan runs a `terraform plan` that changes nothing in w and returns
// its time and the provider's peak RSS.
func timedPlan(w *workdir) (elapsed time.Duration, peakKB int64, err error) {
	peakKB, err = peakRSS(func() (err error) {
		elapsed, err = w.terraform("plan", "-input=false", "-lock=false", "-detailed-exitcode")
		return err
	})
	return elapsed, peakKB, err
}

func peakRSS(f func() error) (int64, error) {
	var peak atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := providerHWM(); kb > peak.Load() {
				peak.Store(kb)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	err := f()
	cancel()
	wg.Wait()
	return peak.Load(), err
}

// providerHWM is the largest VmHWM (kB) among running provider processes.
func providerHWM() int64 {
	entries, _ := os.ReadDir("/proc")
	var best int64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || !strings.HasPrefix(string(comm), "terraform-provi") {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				best = max(best, kb)
			}
		}
	}
	return best
}

func writeJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
