package pacing

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

var (
	models  = []string{emulator.ModelFirstRequest, emulator.ModelClock, emulator.ModelSliding, emulator.ModelBucket}
	windows = []time.Duration{2 * time.Second, 10 * time.Second, time.Minute}
)

// allowances are the ways of counting the pacing is held to: models ×
// windows × limits, as shapes without runs.
func allowances() []shape {
	var out []shape
	for _, m := range models {
		for _, w := range windows {
			for _, l := range []int{10, 20, 60} {
				out = append(out, shape{model: m, window: w, limit: l})
			}
		}
	}
	return out
}

// matrix is every allowance with a crowd of 1 to 8 runs.
func matrix() []shape {
	var out []shape
	for _, a := range allowances() {
		for _, n := range []int{1, 2, 3, 5, 8} {
			out = append(out, crowd(a.model, a.window, a.limit, n))
		}
	}
	return out
}

// crowd is n runs of 30, 40 and 50 links in turn, started within 300 ms
// of each other.
func crowd(model string, window time.Duration, limit, n int) shape {
	sh := shape{model: model, window: window, limit: limit, starts: spread(n)}
	for i := range n {
		sh.links = append(sh.links, 30+10*(i%3))
	}
	return sh
}

// spread is n start offsets within 300 ms, as runs a pipeline starts
// together reach the service.
func spread(n int) []time.Duration { return spreadWithin(n, 300*time.Millisecond) }

// spreadWithin is spread's offsets stretched to start within the given
// time.
func spreadWithin(n int, within time.Duration) []time.Duration {
	var out []time.Duration
	for i := range n {
		out = append(out, time.Duration(i*73%300)*within/300)
	}
	return out
}

// The aims for a cell's worst draw: at most aimRatio the floor
// (boundRatio at most) with fewer than aimRefused of its requests answered
// 429; a run alone at most aloneRatio, with none.
const (
	aimRatio, boundRatio, aloneRatio = 1.10, 1.15, 1.05
	aimRefused                       = 0.02
	// The aims of the real-CLI benchmark of a shared key.
	aimBenchRatio, aimBenchRefused = 1.20, 0.05
)

type cell struct {
	shape
	cellOutcome
}

// TestPacingMatrix runs the whole matrix and prints its table (with -v
// or PACING_TABLE=1): every link exactly once, every run finished, and
// the figures BENCHMARKS.md quotes.
func TestPacingMatrix(t *testing.T) {
	cells := simulateCells(t, matrix())
	if testing.Verbose() || tables {
		printTable(cells)
	}
	// Guards against regressions, just above the worst that BENCHMARKS.md
	// reports over twelve sets of draws (1-9 to 100-108), so that they
	// hold on whichever set PACING_SEEDS names (the aims, 1.10x and 2 %,
	// are not met in every cell: see there).
	mean, refused := overall(cells)
	if mean > 1.12 || refused > 0.021 {
		t.Errorf("all simulations: %.3fx the floor on average, %.2f%% answered 429; was at most 1.12x and 2.1%%", mean, 100*refused)
	}
	// A run alone loses round trips in each window it needs, not a part of
	// the window: in seconds, what it loses does not grow with the window.
	excess := aloneExcess(cells)
	for _, w := range windows {
		if excess[w] > excess[windows[0]]+time.Second/4 {
			t.Errorf("a run alone: up to %s over the floor on %s windows, %s on %s ones", excess[w], w, excess[windows[0]], windows[0])
		}
	}
	for _, c := range cells {
		if len(c.links) == 1 && c.worstRefused() > 0 {
			t.Errorf("%s: a run alone was answered 429 on %.1f%% of its requests; a run alone never is", c.shape, 100*c.worstRefused())
		}
		if c.worstRatio() > 3.5 {
			t.Errorf("%s: %.2fx the floor; no cell was above 3.5x", c.shape, c.worstRatio())
		}
		// A write refused many times in a row is a run that turns late
		// window after window. The provider waits it out within the
		// write's timeout (its max_retries does not count 429s there), but
		// it is refusals and time lost. Eight runs on 10 a clock window
		// reach 9 and 10 in some sets of draws (BENCHMARKS.md); no cell
		// may go further.
		if n := c.worstRefusedInRow(); n > 10 {
			t.Errorf("%s: a write refused %d times in a row; none was more than 10", c.shape, n)
		}
		// A link's wait for its turn counts against its create timeout:
		// past the default, its apply would fail. Eight runs on 10 a window
		// had a link wait up to 31 windows over twelve sets of draws
		// (BENCHMARKS.md); no cell may go beyond 32.
		d := c.worstLongestLink()
		if d > defaults.CreateTimeout {
			t.Errorf("%s: a link took %s from its start, past the default create timeout (%s): its apply would fail", c.shape, d, defaults.CreateTimeout)
		}
		if d > 32*c.window {
			t.Errorf("%s: a link took %s from its start, %.1f windows; none took more than 32", c.shape, d, d.Seconds()/c.window.Seconds())
		}
	}
}

// check asserts what holds in every cell: every link written exactly once,
// every run finished, nothing sent before a Retry-After had passed.
func (c cell) check(t *testing.T) {
	t.Helper()
	for _, o := range c.cellOutcome {
		if o.written != o.wanted {
			t.Errorf("%s: %d writes carried out, want %d", c.shape, o.written, o.wanted)
		}
		if o.total >= 24*time.Hour {
			t.Errorf("%s: a run never finished", c.shape)
		}
		if o.early > 0 {
			t.Errorf("%s: %d writes went before a Retry-After had passed", c.shape, o.early)
		}
	}
}

// lateRun is the shape of a run of 30 links that starts a window and a
// half into a run of 150 alone: pipelines do not all start together.
func lateRun(model string, window time.Duration, limit int) shape {
	return shape{model: model, window: window, limit: limit, links: []int{150, 30}, starts: []time.Duration{0, 3 * window / 2}}
}

// lateShare is how long the later run of a lateRun shape took, over the
// time half the allowance would take for its writes: its fair share of
// the key from when it started.
func lateShare(sh shape, o outcome) float64 {
	half := float64(sh.window) * float64(writes(sh.links[1])) / (float64(sh.limit) / 2)
	return float64(o.ends[1]-sh.starts[1]) / half
}

// TestPacingLateRun runs a later run beside a run alone, on every model
// and allowance of the matrix, and prints its table (PACING_TABLE=1): the
// later run's time over its fair share, worst draw, and the draws in
// which it finished after the long run (200 writes to its 40: with fair
// shares it finishes well before).
func TestPacingLateRun(t *testing.T) {
	if tables {
		fmt.Print("| model | allowance | later run / fair share | finished last | both runs / floor |\n|---|---|---|---|---|\n")
	}
	var sum float64
	var draws, last int
	for _, a := range allowances() {
		sh := lateRun(a.model, a.window, a.limit)
		c := cell{sh, simulate(sh, matrixDraws)}
		c.check(t)
		worst, lastHere := 0.0, 0
		for _, o := range c.cellOutcome {
			share := lateShare(sh, o)
			worst, sum, draws = max(worst, share), sum+share, draws+1
			if o.ends[1] > o.ends[0] {
				lastHere++
			}
		}
		last += lastHere
		if tables {
			fmt.Printf("| %s | %d per %s | %.2f× | %d of %d | %.2f× |\n", a.model, a.limit, a.window, worst, lastHere, len(c.cellOutcome), c.worstRatio())
		}
	}
	mean := sum / float64(draws)
	if tables {
		fmt.Printf("\nLater run: %.2f× its fair share on average; finished after the long run in %d of %d draws.\n", mean, last, draws)
	}
	// A guard against regressions, just above the worst of the twelve
	// sets of draws BENCHMARKS.md reports.
	if mean > 1.50 || float64(last) > 0.21*float64(draws) {
		t.Errorf("later run: %.2fx its fair share on average, last in %d of %d draws; was at most 1.50x and 21 %%", mean, last, draws)
	}
}

// uneven is a run of 100 links started together with two of 10: the
// issue's uneven runs.
func uneven(model string, window time.Duration, limit int) shape {
	return shape{model: model, window: window, limit: limit, links: []int{100, 10, 10}, starts: spread(3)}
}

// smallRuns is when the later of an uneven shape's two small runs
// finished, whether both did within their first window, and whether one
// finished after the large run.
func smallRuns(sh shape, o outcome) (done time.Duration, inFirst, afterLarge bool) {
	done = max(o.ends[1], o.ends[2])
	return done, done < sh.window, done >= o.ends[0]
}

// TestPacingUneven runs the uneven runs on every model and allowance of
// the matrix and prints its table (PACING_TABLE=1): the worst draw's
// ratio to the floor and share answered 429, when the later of the two
// small runs finished (worst draw, in windows), the draws in which both
// finished within their first window and in which one finished after the
// large run. Where a window holds both small runs' writes, they finish in
// it in four draws of nine at least (the worst of twelve sets of draws;
// five to nine in most).
func TestPacingUneven(t *testing.T) {
	if tables {
		fmt.Print("| model | allowance | total / floor, 429 | small runs done (worst) | both in their first window | a small run after the large |\n|---|---|---|---|---|---|\n")
	}
	for _, a := range allowances() {
		sh := uneven(a.model, a.window, a.limit)
		c := cell{sh, simulate(sh, matrixDraws)}
		c.check(t)
		var smallDone time.Duration
		inFirst, after := 0, 0
		for _, o := range c.cellOutcome {
			done, first, late := smallRuns(sh, o)
			smallDone = max(smallDone, done)
			inFirst, after = inFirst+boolInt(first), after+boolInt(late)
		}
		if tables {
			fmt.Printf("| %s | %d per %s | %.2f×, %.1f%% | %.1f windows | %d of %d | %d of %d |\n", a.model, a.limit, a.window,
				c.worstRatio(), 100*c.worstRefused(), float64(smallDone)/float64(sh.window), inFirst, len(c.cellOutcome), after, len(c.cellOutcome))
		}
		if fits := a.limit >= 2*writes(sh.links[1]); fits && 9*inFirst < 4*len(c.cellOutcome) {
			t.Errorf("%s: both small runs finished in their first window in %d of %d draws; the window holds their writes", sh, inFirst, len(c.cellOutcome))
		}
	}
}

// twoSmall is two applies of 20 links started together on the spec's 60
// writes a window: their 52 writes fit in one.
func twoSmall(model string, window time.Duration) shape {
	return shape{model: model, window: window, limit: 60, links: []int{20, 20}, starts: spread(2)}
}

// roomy is the shapes whose writes all fit in one window: twoSmall, two
// runs of the matrix on 100 a window (93 writes), two and five on the
// spec's read limit of 600 (93 and 252).
func roomy(model string, window time.Duration) []shape {
	return []shape{twoSmall(model, window), crowd(model, window, 100, 2), crowd(model, window, 600, 2), crowd(model, window, 600, 5)}
}

// TestPacingRoomyWindow runs the roomy shapes on every model, on windows
// of 10 s and a minute, and prints its table (PACING_TABLE=1): the worst
// draw's ratio to the floor and time over it. A run that found the others
// while it spent as if alone yields them the rest of the window only once
// it has sent its part: in no draw does a run wait half a window for a
// whole that it did not need (the whole window, in most draws, when it
// yielded at once), and none is answered 429.
func TestPacingRoomyWindow(t *testing.T) {
	header := "| model | window | 2 × 20 links on 60 | 2 runs on 100 | 2 runs on 600 | 5 runs on 600 |"
	tableByWindow(t, header, roomy, func(c cell) string {
		if c.worstExcess() >= c.window/2 || c.worstRefused() > 0 {
			t.Errorf("%s: up to %s over the floor, %.1f%% answered 429; want less than half the window, none",
				c.shape, c.worstExcess().Round(time.Millisecond), 100*c.worstRefused())
		}
		return fmt.Sprintf("%.2f×, %.1f s over", c.worstRatio(), c.worstExcess().Seconds())
	})
}

// tableByWindow simulates the shapes of each model and window (10 s and
// a minute), checks every cell and prints a row per model and window
// (PACING_TABLE=1), a column per shape, each cell as figure says it.
func tableByWindow(t *testing.T, header string, shapes func(string, time.Duration) []shape, figure func(cell) string) {
	t.Helper()
	if tables {
		fmt.Printf("%s\n|%s\n", header, strings.Repeat("---|", strings.Count(header, "|")-1))
	}
	for _, m := range models {
		for _, w := range []time.Duration{10 * time.Second, time.Minute} {
			row := fmt.Sprintf("| %s | %s |", m, w)
			for _, sh := range shapes(m, w) {
				c := cell{sh, simulate(sh, matrixDraws)}
				c.check(t)
				row += " " + figure(c) + " |"
			}
			if tables {
				fmt.Println(row)
			}
		}
	}
}

// joined is, for a model and window, a run alone joined 0.2 s or 0.4 s
// later by a smaller one: a run of 40 links and one of 5 on the spec's
// 60 writes a window (59 writes), or of 400 and 20 on its read limit of
// 600 (559). Both fit in one window.
func joined(model string, window time.Duration) []shape {
	var out []shape
	for _, runs := range []struct{ limit, large, small int }{{60, 40, 5}, {600, 400, 20}} {
		for _, after := range []time.Duration{200 * time.Millisecond, 400 * time.Millisecond} {
			out = append(out, shape{model: model, window: window, limit: runs.limit,
				links: []int{runs.large, runs.small}, starts: []time.Duration{0, after}})
		}
	}
	return out
}

// TestPacingJoinedWindow measures what FINDINGS.md names as a trade-off
// that binds: a run that has sent its part of the window before another
// joins it yields the rest and waits for the whole, with writes still to
// send. It asserts what holds in every cell (every link exactly once,
// every run finished) and prints, with PACING_TABLE=1, in how many draws
// of nine a run waited half a window or more beyond the floor, and the
// worst draw's time over it.
func TestPacingJoinedWindow(t *testing.T) {
	header := "| model | window | 40 + 5 on 60, joined 0.2 s | joined 0.4 s | 400 + 20 on 600, joined 0.2 s | joined 0.4 s |"
	tableByWindow(t, header, joined, func(c cell) string {
		waited := 0
		for _, o := range c.cellOutcome {
			waited += boolInt(o.total-o.floor >= c.window/2)
		}
		return fmt.Sprintf("%d of %d, %.1f s over", waited, len(c.cellOutcome), c.worstExcess().Seconds())
	})
}

// TestPacingClockPhase starts a run alone at ten points of a clock
// window, 5 % to 95 % of the way in (the matrix starts at matrixPhase).
// A run learns the allowance one round trip after its first request and
// keeps half its part on the way, so of a window that ends a few round
// trips after it starts it spends little: started late in a window, it
// may take one window more than started early in one, and no more.
// PACING_TABLE=1 prints the worst draw's time over the floor, in windows,
// for a run alone and for three runs.
func TestPacingClockPhase(t *testing.T) {
	if tables {
		fmt.Print("| allowance | runs | 5 % | 15 % | 25 % | 35 % | 45 % | 55 % | 65 % | 75 % | 85 % | 95 % |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	}
	for _, a := range allowances() {
		if a.model != emulator.ModelClock {
			continue
		}
		for _, n := range []int{1, 3} {
			if n > 1 && !tables {
				continue
			}
			early := simulate(crowd(a.model, a.window, a.limit, n), matrixDraws).worstExcess()
			row := fmt.Sprintf("| %d per %s | %d |", a.limit, a.window, n)
			for p := 5; p < 100; p += 10 {
				sh := crowd(a.model, a.window, a.limit, n)
				sh.phase = a.window * time.Duration(p) / 100
				excess := simulate(sh, matrixDraws).worstExcess()
				row += fmt.Sprintf(" %.2f |", float64(excess)/float64(a.window))
				if n == 1 && excess > early+a.window {
					t.Errorf("%s, %d %% into a window: %s over the floor, more than a window beyond the %s at %s", sh, p, excess, early, matrixPhase)
				}
			}
			if tables {
				fmt.Println(row)
			}
		}
	}
}

// beyondRuns are the crowds of beyond(), a column each in its table.
var beyondRuns = []int{1, 2, 4, 8}

// beyond is the matrix's crowds at limits outside it (below the number
// of runs, and far above what their applies write) on windows of a second
// and of 30 s, and at its own limits on windows of a second, shorter than
// the unit Reset is given in. The spec says neither how large a limit is
// nor how long a window.
func beyond() []shape {
	var out []shape
	for _, a := range []struct {
		window time.Duration
		limits []int
	}{{time.Second, []int{1, 3, 10, 20, 60, 100, 1000}}, {30 * time.Second, []int{1, 3, 100, 1000}}} {
		for _, m := range models {
			for _, l := range a.limits {
				for _, n := range beyondRuns {
					out = append(out, crowd(m, a.window, l, n))
				}
			}
		}
	}
	return out
}

// TestPacingBeyondTheMatrix runs the crowds of beyond(): every link is
// written exactly once, every run finishes, and no write goes before a
// Retry-After, at any limit. It holds them to no ratio; PACING_TABLE=1
// prints each cell's worst draw (ratio to the floor, share answered 429,
// time over the floor), which BENCHMARKS.md quotes.
// beyondTheMatrix skips, under -short (make test), a test that runs the
// matrix's shapes again at other limits, answer times, headers, windows or
// parallelism: together they take over a minute and a half on 2 cores, and
// make pacing-wide, part of make ci, runs them.
func beyondTheMatrix(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("beyond the matrix: make pacing-wide runs it")
	}
}

func TestPacingBeyondTheMatrix(t *testing.T) {
	beyondTheMatrix(t)
	if tables {
		header := "| model | allowance |"
		for _, n := range beyondRuns {
			header += fmt.Sprintf(" %d run%s |", n, strings.Repeat("s", min(n-1, 1)))
		}
		fmt.Printf("%s\n|%s\n", header, strings.Repeat("---|", len(beyondRuns)+2))
	}
	row := ""
	for i, sh := range beyond() {
		c := cell{sh, simulate(sh, matrixDraws)}
		c.check(t)
		if i%len(beyondRuns) == 0 {
			row = fmt.Sprintf("| %s | %d per %s |", sh.model, sh.limit, sh.window)
		}
		row += fmt.Sprintf(" %.2f×, %.1f%%, %.1f s |", c.worstRatio(), 100*c.worstRefused(), c.worstExcess().Seconds())
		if i%len(beyondRuns) == len(beyondRuns)-1 && tables {
			fmt.Println(row)
		}
	}
}

// emulatorLatency is the matrix's network with the emulator's own fraud
// filter (its default, 300 ms).
var emulatorLatency = func() latency {
	filter := time.Duration(emulator.DefaultSettings().Filter.Delay)
	return latency{2 * time.Millisecond, 8 * time.Millisecond, filter, filter}
}()

// answerTimes are latencies other than the matrix's that the pacing is
// run at: a service answers as fast as its network and fraud filter let
// it, and the spec does not say how fast that is. Each has guards against
// regressions, just above the worst of twelve sets of draws
// (BENCHMARKS.md, "Other answer times").
var answerTimes = []struct {
	name          string
	latency       latency
	mean, refused float64 // guards: mean ratio to the floor, share answered 429
}{
	{"a fast filter", latency{2 * time.Millisecond, 8 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond}, 1.08, 0.032},
	{"a distant service", latency{20 * time.Millisecond, 80 * time.Millisecond, 60 * time.Millisecond, 200 * time.Millisecond}, 1.15, 0.021},
	{"the emulator's filter", emulatorLatency, 1.15, 0.017},
	{"a slow, uneven filter", latency{2 * time.Millisecond, 8 * time.Millisecond, 300 * time.Millisecond, 1500 * time.Millisecond}, 1.37, 0.017},
}

// TestPacingAnswerTimes runs the whole matrix at each of answerTimes and
// prints a row for each (PACING_TABLE=1): what the matrix checks in every
// cell holds at each of them, and each row's figures stay within its guards.
func TestPacingAnswerTimes(t *testing.T) {
	beyondTheMatrix(t)
	rows := make([]string, len(answerTimes))
	t.Run("latencies", func(t *testing.T) {
		for i, at := range answerTimes {
			t.Run(at.name, func(t *testing.T) {
				t.Parallel() // the longest test of make test: its rows use every core
				rows[i] = answerTimeRow(t, at.latency, at.mean, at.refused)
			})
		}
	})
	if tables {
		fmt.Print("| answers | network, each way | filter | mean / floor | answered 429 | cells within the bound | at the aims | runs alone at theirs | worst cell | a run alone over the floor |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for i, at := range answerTimes {
			fmt.Printf("| %s | %s |\n", at.name, rows[i])
		}
	}
}

// answerTimeRow runs the matrix at latency l, checks every cell and the
// guards, and gives the figures of its row in TestPacingAnswerTimes.
func answerTimeRow(t *testing.T, l latency, maxMean, maxRefused float64) string {
	return fmt.Sprintf("%s-%s | %s-%s | %s", l.minOneWay, l.maxOneWay, l.minFilter, l.maxFilter,
		matrixRow(t, func(sh *shape) { sh.latency = l }, maxMean, maxRefused))
}

// matrixRow runs the matrix with every shape changed by vary; see cellsRow.
func matrixRow(t *testing.T, vary func(*shape), maxMean, maxRefused float64) string {
	shapes := matrix()
	for i := range shapes {
		vary(&shapes[i])
	}
	return cellsRow(t, simulateCells(t, shapes), maxMean, maxRefused)
}

// simulateCells simulates each shape on the matrix's draws and checks
// what holds in every cell.
func simulateCells(t *testing.T, shapes []shape) []cell {
	t.Helper()
	cells := make([]cell, 0, len(shapes))
	for _, sh := range shapes {
		c := cell{sh, simulate(sh, matrixDraws)}
		c.check(t)
		cells = append(cells, c)
	}
	return cells
}

// cellsRow checks the guards on the cells' mean ratio and share answered
// 429, and gives the figures of a row of a table: mean, answered 429,
// cells within the bound, at the aims, runs alone at theirs, the worst
// cell, and the most a run alone took over the floor.
func cellsRow(t *testing.T, cells []cell, maxMean, maxRefused float64) string {
	t.Helper()
	mean, refused := overall(cells)
	if mean > maxMean || refused > maxRefused {
		t.Errorf("%.3fx the floor on average, %.2f%% answered 429; was at most %.2fx and %.1f%%", mean, 100*refused, maxMean, 100*maxRefused)
	}
	bound, aims, alone, lone := countAtAims(cells)
	worst := slices.MaxFunc(cells, func(a, b cell) int { return cmp.Compare(a.worstRatio(), b.worstRatio()) })
	var excess time.Duration
	for _, e := range aloneExcess(cells) {
		excess = max(excess, e)
	}
	return fmt.Sprintf("%.3f× | %.2f %% | %d of %d | %d | %d of %d | %.2f× | %.1f s",
		mean, 100*refused, bound, len(cells), aims, alone, lone, worst.worstRatio(), excess.Seconds())
}

// headersSaidOtherwise are services that answer otherwise than the
// emulator by default, in ways the spec leaves open: seconds rounded down
// or to the nearest rather than up, a remaining that leaves out the
// request answered, and a reset that counts to the next unit on sliding
// windows and buckets. Each has guards on the matrix's figures there: just
// above the worst of twelve sets of draws. The last is short of every aim
// (BENCHMARKS.md, "Headers said otherwise"): its guards hold it where it is.
var headersSaidOtherwise = []struct {
	name          string
	vary          func(*shape)
	mean, refused float64
}{
	{"seconds rounded down", func(sh *shape) { sh.rounding = emulator.RoundDown }, 1.15, 0.037},
	{"seconds rounded to the nearest", func(sh *shape) { sh.rounding = emulator.RoundNearest }, 1.17, 0.029},
	{"remaining counted before the request", func(sh *shape) { sh.counted = emulator.RemainingBefore }, 1.12, 0.032},
	{"reset counted to the next unit", func(sh *shape) { sh.reset = emulator.ResetNext }, 1.11, 0.32},
}

// TestPacingHeadersSaidOtherwise runs the whole matrix on each of
// headersSaidOtherwise and prints a row for each (PACING_TABLE=1): the
// pacing learns how a service answers from answers that could not be so
// otherwise (rules 15 and 16). What the matrix checks in every cell holds,
// and each row's figures stay within its guards.
func TestPacingHeadersSaidOtherwise(t *testing.T) {
	beyondTheMatrix(t)
	rows := make([]string, len(headersSaidOtherwise))
	for i, h := range headersSaidOtherwise {
		t.Run(h.name, func(t *testing.T) {
			rows[i] = matrixRow(t, h.vary, h.mean, h.refused)
		})
	}
	if tables {
		fmt.Print("| the service | mean / floor | answered 429 | cells within the bound | at the aims | runs alone at theirs | worst cell | a run alone over the floor |\n|---|---|---|---|---|---|---|---|\n")
		for i, h := range headersSaidOtherwise {
			fmt.Printf("| %s | %s |\n", h.name, rows[i])
		}
	}
}

// otherWindows are window lengths the matrix leaves out: two that are
// not whole seconds, which a Reset in whole seconds places less closely,
// and two between the matrix's own. No duration of the rule is fitted to
// a window length, so the matrix's figures follow the window's length
// there too. Each has guards just above the worst of twelve sets of draws:
// the mean ratio, the share answered 429, and the most a run alone took
// over the floor.
var otherWindows = []struct {
	window        time.Duration
	mean, refused float64
	alone         time.Duration
}{
	{1500 * time.Millisecond, 1.31, 0.024, 3 * time.Second},
	{2500 * time.Millisecond, 1.22, 0.024, 3 * time.Second},
	{5 * time.Second, 1.12, 0.023, 2250 * time.Millisecond},
	{30 * time.Second, 1.07, 0.022, 2250 * time.Millisecond},
}

// matrixAt is the matrix's crowds, every model, limit and number of runs,
// on windows of the one length given.
func matrixAt(window time.Duration) []shape {
	var out []shape
	for _, sh := range matrix() {
		if sh.window == windows[0] {
			sh.window = window
			out = append(out, sh)
		}
	}
	return out
}

// TestPacingOtherWindowLengths runs the matrix's crowds on each of
// otherWindows and prints a row for each (PACING_TABLE=1): what the matrix
// checks in every cell holds, and each row's figures stay within its guards.
func TestPacingOtherWindowLengths(t *testing.T) {
	beyondTheMatrix(t)
	rows := make([]string, len(otherWindows))
	for i, w := range otherWindows {
		t.Run(w.window.String(), func(t *testing.T) {
			cells := simulateCells(t, matrixAt(w.window))
			rows[i] = cellsRow(t, cells, w.mean, w.refused)
			if excess := aloneExcess(cells)[w.window]; excess > w.alone {
				t.Errorf("a run alone: up to %s over the floor; was at most %s", excess, w.alone)
			}
		})
	}
	if tables {
		fmt.Print("| window | mean / floor | answered 429 | cells within the bound | at the aims | runs alone at theirs | worst cell | a run alone over the floor |\n|---|---|---|---|---|---|---|---|\n")
		for i, w := range otherWindows {
			fmt.Printf("| %s | %s |\n", w.window, rows[i])
		}
	}
}

// overall is the mean ratio to the floor of every simulation, and the
// share of all their requests answered 429.
func overall(cells []cell) (mean, refused float64) {
	var all cellOutcome
	for _, c := range cells {
		all = append(all, c.cellOutcome...)
	}
	return all.meanRatio(), all.refusedShare()
}

// aloneExcess is, for each window length, the longest a run alone took
// over the floor in any cell (worst draw).
func aloneExcess(cells []cell) map[time.Duration]time.Duration {
	out := map[time.Duration]time.Duration{}
	for _, c := range cells {
		if len(c.links) == 1 {
			out[c.window] = max(out[c.window], c.worstExcess())
		}
	}
	return out
}

// printTable prints the matrix as BENCHMARKS.md shows it: a row per model
// and allowance, a column per number of runs, each cell the worst seed's
// ratio to the floor and share of requests answered 429.
func printTable(cells []cell) {
	if toldRuns {
		fmt.Print("Told the number of runs (PACING_TOLD=runs), which no client knows: not the rule's figures.\n\n")
	}
	fmt.Print("| model | allowance | 1 run | 2 runs | 3 runs | 5 runs | 8 runs |\n|---|---|---|---|---|---|---|")
	for i, c := range cells {
		if i%5 == 0 {
			fmt.Printf("\n| %s | %d per %s |", c.model, c.limit, c.window)
		}
		fmt.Printf(" %.2f×, %.1f%% |", c.worstRatio(), 100*c.worstRefused())
	}
	fmt.Print("\n\n")
	byRatio := append([]cell(nil), cells...)
	sort.SliceStable(byRatio, func(i, j int) bool { return byRatio[i].worstRatio() > byRatio[j].worstRatio() })
	byRefused := append([]cell(nil), cells...)
	sort.SliceStable(byRefused, func(i, j int) bool { return byRefused[i].worstRefused() > byRefused[j].worstRefused() })
	mean, refused := overall(cells)
	mid := len(cells) / 2
	fmt.Printf("Worst ratio: %s, %.2f× the floor (%.1f s). Most refused: %s, %.1f%% answered 429.\n",
		byRatio[0].shape, byRatio[0].worstRatio(), byRatio[0].cellOutcome[0].floor.Seconds(), byRefused[0].shape, 100*byRefused[0].worstRefused())
	fmt.Printf("Median cell: %.2f× the floor, %.1f%% answered 429. All %d simulations: %.3f× the floor on average, %.2f%% of requests answered 429.\n",
		byRatio[mid].worstRatio(), 100*byRefused[mid].worstRefused(), len(cells)*len(matrixDraws), mean, 100*refused)
	bound, aims, alone, lone := countAtAims(cells)
	fmt.Printf("Cells within the bound and the 429 aim (≤ %.2f×, < %g %%): %d of %d; at the aims (≤ %.2f×, < %g %%): %d; runs alone at ≤ %.2f× with no 429: %d of %d (worst of %d draws).\n",
		boundRatio, 100*aimRefused, bound, len(cells), aimRatio, 100*aimRefused, aims, aloneRatio, alone, lone, len(matrixDraws))
	var excess []string
	byWindow := aloneExcess(cells)
	for _, w := range windows {
		excess = append(excess, fmt.Sprintf("%.2f s on %s windows", byWindow[w].Seconds(), w))
	}
	fmt.Printf("A run alone, the longest it took over the floor (worst draw, any model and limit): %s.\n", strings.Join(excess, ", "))
	inRow := slices.MaxFunc(cells, func(a, b cell) int { return cmp.Compare(a.worstRefusedInRow(), b.worstRefusedInRow()) })
	fmt.Printf("The most times one write was refused in a row: %d (%s).\n", inRow.worstRefusedInRow(), inRow.shape)
	slowest := slices.MaxFunc(cells, func(a, b cell) int { return cmp.Compare(a.worstLongestLink(), b.worstLongestLink()) })
	fmt.Printf("The longest one link took, from its start to its last write's answer: %s (%s).\n", slowest.worstLongestLink().Round(time.Second), slowest.shape)
}

// countAtAims counts the cells within the bound and the 429 aim, those at
// the aims, and the runs alone at theirs, of lone runs alone.
func countAtAims(cells []cell) (bound, aims, alone, lone int) {
	for _, c := range cells {
		ratio, refused := c.worstRatio(), c.worstRefused()
		bound += boolInt(ratio <= boundRatio && refused < aimRefused)
		aims += boolInt(ratio <= aimRatio && refused < aimRefused)
		if len(c.links) == 1 {
			lone++
			alone += boolInt(ratio <= aloneRatio && refused == 0)
		}
	}
	return bound, aims, alone, lone
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// benchShapes are the shapes of the real-CLI benchmark of a key shared by
// several applies (scripts/bench -only shared; BENCHMARKS.md, "One key,
// several runs at once") on one model, as far as a simulation can run
// them: the runs of each start together and have as many links each. They
// run at the matrix's answer times, and the shapes of 10 per 2 s again at
// the benchmark's own (benchLatency, and starts within 600 ms), three runs
// of them on a service that rounds its seconds down.
func benchShapes(model string) []shape {
	even := func(limit int, window time.Duration, runs, links int) shape {
		sh := crowd(model, window, limit, runs)
		for i := range sh.links {
			sh.links[i] = links
		}
		return sh
	}
	steady := func(sh shape) shape { // the real benchmark's applies' first writes reached the service 0.27-0.63 s apart
		sh.latency, sh.starts = benchLatency, spreadWithin(len(sh.links), 600*time.Millisecond)
		return sh
	}
	slower := even(10, 2*time.Second, 3, 30)
	slower.latency = emulatorLatency
	roundedDown := steady(even(10, 2*time.Second, 3, 30))
	roundedDown.rounding = emulator.RoundDown
	return []shape{even(60, time.Minute, 3, 50), even(20, 5*time.Second, 4, 30), even(10, 2*time.Second, 3, 30),
		even(10, 2*time.Second, 5, 30), twoSmall(model, time.Minute), slower,
		steady(even(10, 2*time.Second, 3, 30)), steady(even(10, 2*time.Second, 5, 30)), roundedDown}
}

// benchLatency is the real benchmark's: a local network and a fraud filter
// that takes scripts/bench's 100 ms every time, so that each window
// replays the last (FINDINGS.md, "Where in a window each run turns").
var benchLatency = latency{200 * time.Microsecond, time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond}

// benchRefusedBound is the share answered 429 a bench shape is held under:
// the aim, but for five runs on 10 per 2 s, whose runs that turn last find
// the window spent and, at steady answer times, are refused again at the
// same fraction of every window (FINDINGS.md, "Where in a window each run
// turns"). On each of draws 1-27 to 82-108 they are refused 6.7-7.1 % on
// clock windows at the matrix's answer times, and at the benchmark's
// 6.5-7.0 % on first-request windows and 8.1-8.7 % on clock ones.
func benchRefusedBound(sh shape) float64 {
	if sh.limit != 10 || len(sh.links) != 5 {
		return aimBenchRefused
	}
	if sh.latency == benchLatency && sh.model == emulator.ModelClock {
		return 0.095
	}
	if sh.latency == benchLatency || sh.model == emulator.ModelClock {
		return 0.075
	}
	return aimBenchRefused
}

// TestPacingBenchShapes runs the real-CLI benchmark's shapes of a shared
// key on both of its models, so that a change to the rule can be judged
// against the aims for that benchmark (1.20x the floor, under 5 %
// answered 429) in a second rather than half an hour. It checks every cell
// and holds the aims on the mean of the draws, where the writes need more
// than one window, but for the shortfalls benchRefusedBound names;
// PACING_TABLE=1 prints each cell's mean and worst ratio to the floor and
// the share of its requests answered 429, of all draws and of the worst.
func TestPacingBenchShapes(t *testing.T) {
	if tables {
		fmt.Print("| shape | total / floor (mean, worst) | answered 429 (all draws, worst) | a write refused in a row (most) |\n|---|---|---|---|\n")
	}
	for _, m := range []string{emulator.ModelFirstRequest, emulator.ModelClock} {
		for _, sh := range benchShapes(m) {
			c := cell{sh, simulate(sh, ruleDraws)}
			c.check(t)
			if tables {
				fmt.Printf("| %s | %.2f×, %.2f× | %.1f %%, %.1f %% | %d |\n", sh, c.meanRatio(), c.worstRatio(), 100*c.refusedShare(), 100*c.worstRefused(), c.worstRefusedInRow())
			}
			refusedAim := benchRefusedBound(sh)
			needsWindows := len(sh.links)*writes(sh.links[0]) > sh.limit
			if needsWindows && c.meanRatio() > aimBenchRatio || c.refusedShare() >= refusedAim {
				t.Errorf("%s: %.2fx the floor, %.1f%% answered 429 (mean of the draws); want at most %.2fx and under %.1f%%",
					sh, c.meanRatio(), 100*c.refusedShare(), aimBenchRatio, 100*refusedAim)
			}
		}
	}
}

// lowParallelism is the -parallelism docs/guides/rate-limits-and-timeouts.md advises for a key
// whose runs each have a small part of a window (smallPart writes or
// fewer).
const lowParallelism, smallPart = 3, 10

// TestPacingLowerParallelism measures that advice. A link waits for its
// run's turn behind the others Terraform started with it, and its create
// timeout counts the wait. On every crowd of the matrix whose runs have
// a small part of a window each, the applies with lowParallelism take as
// long as with Terraform's default (within 5 %), and no link waits longer
// by more than a window; the longest wait of all, about half the
// default's, is printed beside it (PACING_TABLE=1) and guarded, and so is
// the share of all their requests answered 429, which the advice must not
// raise.
func TestPacingLowerParallelism(t *testing.T) {
	beyondTheMatrix(t)
	var longest, longestLow float64 // in windows
	fastest, slowest, cells := math.Inf(1), 0.0, 0
	var all, allLow cellOutcome
	for _, sh := range matrix() {
		if len(sh.links) < 2 || sh.limit > smallPart*len(sh.links) {
			continue
		}
		low := sh
		low.parallel = lowParallelism
		def, lower := simulate(sh, matrixDraws), simulate(low, matrixDraws)
		all, allLow = append(all, def...), append(allLow, lower...)
		r := lower.meanTotal().Seconds() / def.meanTotal().Seconds()
		if r > 1.05 {
			t.Errorf("%s: %.3fx the time with -parallelism=%d", sh, r, lowParallelism)
		}
		fastest, slowest, cells = min(fastest, r), max(slowest, r), cells+1
		if lower.worstLongestLink() > def.worstLongestLink()+sh.window {
			t.Errorf("%s: a link took %s with -parallelism=%d, %s with the default", sh, lower.worstLongestLink(), lowParallelism, def.worstLongestLink())
		}
		longest = max(longest, def.worstLongestLink().Seconds()/sh.window.Seconds())
		longestLow = max(longestLow, lower.worstLongestLink().Seconds()/sh.window.Seconds())
	}
	// Over twelve sets of draws: 12-16 windows, against 26-31 (BENCHMARKS.md).
	if longestLow > 17 || longestLow > 0.6*longest {
		t.Errorf("a link took %.1f windows with -parallelism=%d, %.1f with the default; never more than 17, or 0.6 of the default's", longestLow, lowParallelism, longest)
	}
	// Over twelve sets of draws the two shares differ by less than a tenth of a point.
	if allLow.refusedShare() > all.refusedShare()+0.005 {
		t.Errorf("%.2f%% of the requests answered 429 with -parallelism=%d, %.2f%% with the default; never half a point more",
			100*allLow.refusedShare(), lowParallelism, 100*all.refusedShare())
	}
	if tables {
		fmt.Printf("%d cells: with -parallelism=%d, %.3f-%.3fx the default's time; the longest one link took %.1f windows, %.1f with the default; %.2f %% answered 429, %.2f %% with the default.\n",
			cells, lowParallelism, fastest, slowest, longestLow, longest, 100*allLow.refusedShare(), 100*all.refusedShare())
	}
}
