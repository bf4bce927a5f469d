package pacing

import (
	"cmp"
	"container/heap"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/defaults"
	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// The simulation runs Terraform applies against the emulator's rate
// limiter in virtual time. Each run is a provider process with a Pacer of
// its own and Terraform's parallelism (10 unless the shape says); each link is one write, or
// two when it has UTM parameters (every third). The service counts a
// write when it arrives and answers it after its fraud filter's time; the
// headers carry Reset and Retry-After in whole seconds, rounded up. The
// network and the filter take a different time on every request, drawn
// from a seeded generator, so a run is the same every time.

// latency is how long a write takes on the network (each way) and in the
// fraud filter, drawn anew between the bounds for every request.
type latency struct{ minOneWay, maxOneWay, minFilter, maxFilter time.Duration }

// matrixLatency is the matrix's: a service near the runners, whose filter
// takes 60 to 200 ms.
var matrixLatency = latency{2 * time.Millisecond, 8 * time.Millisecond, 60 * time.Millisecond, 200 * time.Millisecond}

func (l latency) String() string {
	return fmt.Sprintf("network %s-%s, filter %s-%s", l.minOneWay, l.maxOneWay, l.minFilter, l.maxFilter)
}

// shape is one simulated situation: runs of so many links each, starting
// at the given offsets, on one key.
type shape struct {
	model    string
	window   time.Duration
	limit    int
	links    []int           // links per run
	starts   []time.Duration // when each run reaches the service
	maxShare float64         // the runs' max_rate_limit_percent/100 (0: 1)
	phase    time.Duration   // how far into a clock-aligned window the runs start (0: matrixPhase)
	latency  latency         // zero: matrixLatency
	rounding string          // how the answers' seconds are made whole (emulator.Limits.Rounding; "": up)
	counted  string          // whether Remaining counts the request answered (emulator.Limits.Remaining; "": after)
	reset    string          // what Reset counts down to (emulator.Limits.Reset; "": the whole)
	parallel int             // Terraform's -parallelism (0: defaults.TerraformParallelism)
}

// matrixPhase is where in a clock-aligned window the matrix's runs start.
const matrixPhase = 337 * time.Millisecond

func (s shape) String() string {
	name := fmt.Sprintf("%-13s %2d per %3s, runs %v", s.model, s.limit, s.window, s.links)
	if s.latency != (latency{}) {
		name += ", " + s.latency.String()
	}
	if s.rounding != "" {
		name += ", seconds rounded " + s.rounding
	}
	if s.counted != "" {
		name += ", remaining counted " + s.counted
	}
	if s.reset != "" {
		name += ", reset counted to the " + s.reset
	}
	if s.parallel != 0 {
		name += fmt.Sprintf(", -parallelism=%d", s.parallel)
	}
	return name
}

// outcome is what one simulation measured.
type outcome struct {
	total, floor      time.Duration
	requests, refused int
	written, wanted   int
	ends              []time.Duration // when each run finished
	// leastRemaining is the lowest remaining an accepted write of a run
	// was answered with; early counts the writes a run sent before a
	// refusal's Retry-After had passed; refusedInRow is the most times one
	// write was refused in a row (a client with a cap on a write's 429s
	// would fail there; the provider has none); longestLink is the longest one link took
	// from its start to its last write's answer, which a create's timeout
	// meets.
	leastRemaining, early, refusedInRow int
	longestLink                         time.Duration
}

func (o outcome) ratio() float64 { return o.total.Seconds() / o.floor.Seconds() }

func (o outcome) refusedShare() float64 { return float64(o.refused) / float64(max(o.requests, 1)) }

// matrixDraws and ruleDraws are the draws of the network and filter
// times each shape is simulated with: nine for every cell of the matrix
// (1 to 9), twenty-seven for each rule's shapes (1 to 27), whose tests
// hold on the draws' mean or worst: a few draws leave that to chance, and
// the bounds hold on each of draws 1-27, 28-54, 55-81 and 82-108.
// PACING_SEEDS names another range for both ("28-54"): a change to the
// rule is checked on draws it was not judged on.
var matrixDraws, ruleDraws = seedRange(os.Getenv("PACING_SEEDS"), 1, 9), seedRange(os.Getenv("PACING_SEEDS"), 1, 27)

// seedRange reads "from-to"; empty gives the default range. Anything else
// stops the tests: a mistyped range would score on the default draws unnoticed.
func seedRange(s string, from, to uint64) []uint64 {
	if s != "" {
		a, b, _ := strings.Cut(s, "-")
		lo, errLo := strconv.ParseUint(a, 10, 64)
		hi, errHi := strconv.ParseUint(b, 10, 64)
		if errLo != nil || errHi != nil || lo > hi {
			panic(fmt.Sprintf("PACING_SEEDS=%q: want a range of draws such as 1-9", s))
		}
		from, to = lo, hi
	}
	var out []uint64
	for seed := from; seed <= to; seed++ {
		out = append(out, seed)
	}
	return out
}

// cellOutcome is a shape's outcomes, one per seed.
type cellOutcome []outcome

// simulate runs the shape to its end with each draw, and its floor.
func simulate(sh shape, draws []uint64) cellOutcome {
	var out cellOutcome
	for _, seed := range draws {
		o := runShape(sh, seed, false)
		o.floor = runShape(sh, seed, true).total
		out = append(out, o)
	}
	return out
}

// worst is the largest figure of the cell's draws: the figures the
// tables and the guards hold a cell to are its worst draw's.
func worst[T cmp.Ordered](c cellOutcome, figure func(outcome) T) T {
	var w T
	for _, o := range c {
		w = max(w, figure(o))
	}
	return w
}

// worstRatio and worstRefused are the cell's figures: the worst draw's.
func (c cellOutcome) worstRatio() float64 { return worst(c, outcome.ratio) }

// worstRefusedInRow is the most times one write of the cell was refused
// in a row, in any draw.
func (c cellOutcome) worstRefusedInRow() int {
	return worst(c, func(o outcome) int { return o.refusedInRow })
}

// worstLongestLink is the longest one link of the cell took, in any draw.
func (c cellOutcome) worstLongestLink() time.Duration {
	return worst(c, func(o outcome) time.Duration { return o.longestLink })
}

// worstExcess is how much longer than the floor the cell's worst draw took.
func (c cellOutcome) worstExcess() time.Duration {
	return worst(c, func(o outcome) time.Duration { return o.total - o.floor })
}

// meanRatio is the mean of the draws' ratios, for a cell whose apply
// fills its windows so closely that one draw in several may take one more.
func (c cellOutcome) meanRatio() float64 {
	sum := 0.0
	for _, o := range c {
		sum += o.ratio()
	}
	return sum / float64(len(c))
}

// meanTotal is the mean time the draws took, for shapes whose floors
// differ (another parallelism).
func (c cellOutcome) meanTotal() time.Duration {
	var sum time.Duration
	for _, o := range c {
		sum += o.total
	}
	return sum / time.Duration(max(len(c), 1))
}

// refusedShare is the share of all the draws' requests answered 429.
func (c cellOutcome) refusedShare() float64 {
	var requests, refused int
	for _, o := range c {
		requests, refused = requests+o.requests, refused+o.refused
	}
	return float64(refused) / float64(max(requests, 1))
}

func (c cellOutcome) worstRefused() float64 { return worst(c, outcome.refusedShare) }

// tracing prints every write of the shape named by PACING_TRACE as the
// service counts it, with the runs its pacer counted when it went and the
// runs active as it arrives: the way to see why a cell of the matrix is slow.
var tracing = os.Getenv("PACING_TRACE")

// tables is whether the tests of the matrix print their tables
// (PACING_TABLE=1), as BENCHMARKS.md shows them.
var tables = os.Getenv("PACING_TABLE") != ""

// toldRuns (PACING_TOLD=runs) hands every pacer, before each request, the
// number of runs started and not finished: what no client knows. It
// measures how much of the gap to the aims lies in counting the runs.
var toldRuns = os.Getenv("PACING_TOLD") == "runs"

// event is one thing that happens at a virtual time.
type event struct {
	at  time.Time
	seq int
	do  func()
}

type events []*event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].at.Before(e[j].at) || e[i].at.Equal(e[j].at) && e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(*event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// sim is one simulation of a shape.
type sim struct {
	shape      shape
	latency    latency
	limits     emulator.Limits
	limiter    *emulator.RateLimiter
	rand       *rand.Rand
	start, now time.Time
	queue      events
	seq        int
	trace      bool
	out        outcome
	runs       []*run
}

// active is how many runs have started and not finished.
func (s *sim) active() int {
	n := 0
	for _, r := range s.runs {
		n += boolInt(r.started && r.finished.IsZero())
	}
	return n
}

// tell sets p's count of runs to the runs active.
func (s *sim) tell(p *Pacer) {
	n := s.active()
	p.runs = float64(n)
	p.others = p.others || n > 1
}

func (s *sim) at(t time.Time, do func()) {
	s.seq++
	heap.Push(&s.queue, &event{at: t, seq: s.seq, do: do})
}

func (s *sim) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(s.rand.Int64N(int64(hi-lo)+1))
}

// run is one apply. An oracle run sends each write the moment the
// limiter would take it, knowing what no client knows: it measures the
// floor.
type run struct {
	id       int
	sim      *sim
	pacer    *Pacer
	oracle   bool
	ready    []*link // links whose next write waits for the pacer
	links    int     // links not started
	active   int     // links started and not done
	wake     time.Time
	finished time.Time
	retryAt  time.Time // when the latest refusal's Retry-After ends
	started  bool
}

// link is one link of a run: the writes it has left, how many times its
// write in flight has been refused in a row, and when its run started it
// (Terraform's call to create it, whose timeout counts from then).
type link struct {
	writes, refusedInRow int
	started              time.Time
}

// writes is how many writes a run of so many links makes: every third
// link has UTM parameters and takes two.
func writes(links int) int { return links + links/3 }

func (r *run) startLink() {
	l := &link{writes: writes(r.links) - writes(r.links-1), started: r.sim.now} // the links count down
	r.links--
	r.active++
	r.sim.out.wanted += l.writes
	r.ready = append(r.ready, l)
}

// send sends what the pacer lets go now, and sets a wake-up for the rest.
func (r *run) send() {
	s := r.sim
	for len(r.ready) > 0 {
		wait := time.Duration(0)
		if r.oracle {
			arrival := s.now.Add(s.latency.minOneWay)
			if allowed, _, _, retry := s.limiter.Peek("key", s.limits, arrival); !allowed {
				wait = max(retry, time.Millisecond)
			}
		} else {
			if toldRuns {
				s.tell(r.pacer)
			}
			wait = r.pacer.Next(s.now)
		}
		if wait == WaitForAnswer {
			return
		}
		if wait > 0 {
			if at := s.now.Add(wait); r.wake.IsZero() || at.Before(r.wake) || !r.wake.After(s.now) {
				r.wake = at
				s.at(at, r.send)
			}
			return
		}
		l := r.ready[0]
		r.ready = r.ready[1:]
		var t Ticket
		counted := r.pacer.runs // the runs its pacer counted when it went
		if !r.oracle {
			t = r.pacer.Sent(s.now)
			if s.now.Before(r.retryAt) {
				s.out.early++
			}
		}
		s.out.requests++
		oneWay := s.between(s.latency.minOneWay, s.latency.maxOneWay)
		if r.oracle {
			oneWay = s.latency.minOneWay
		}
		s.at(s.now.Add(oneWay), func() { r.arrive(l, t, counted) })
	}
}

// arrive is the service counting the write and, later, answering it.
func (r *run) arrive(l *link, t Ticket, counted float64) {
	s := r.sim
	allowed, remaining, reset, retry := s.limiter.Take("key", s.limits, s.now)
	if s.trace && !r.oracle {
		fmt.Printf("%9.3f run %d write %3d allowed %-5v remaining %2d reset %-7v counting %.1f runs of %d\n",
			s.now.Sub(s.start).Seconds(), r.id, t.seq, allowed, remaining, reset.Round(time.Millisecond), counted, s.active())
	}
	a := Answer{Limit: s.limits.Write, Remaining: s.limits.RemainingSaid(allowed, remaining), Reset: s.seconds(reset), RetryAfter: -1}
	back := s.between(s.latency.minOneWay, s.latency.maxOneWay)
	if !allowed {
		l.refusedInRow++
		if !r.oracle {
			s.out.refusedInRow = max(s.out.refusedInRow, l.refusedInRow)
		}
		s.out.refused++
		a.Refused, a.RetryAfter = true, s.seconds(retry)
		s.at(s.now.Add(back), func() {
			r.retryAt = s.now.Add(a.RetryAfter)
			r.pacer.Answered(t, s.now, a)
			r.ready = append([]*link{l}, r.ready...)
			r.send()
		})
		return
	}
	s.out.written++
	l.refusedInRow = 0
	if !r.oracle {
		s.out.leastRemaining = min(s.out.leastRemaining, remaining)
	}
	s.at(s.now.Add(s.between(s.latency.minFilter, s.latency.maxFilter)+back), func() {
		if !r.oracle {
			r.pacer.Answered(t, s.now, a)
		}
		r.done(l)
	})
}

// done takes in that one write of l was carried out.
func (r *run) done(l *link) {
	l.writes--
	if l.writes == 0 && !r.oracle {
		r.sim.out.longestLink = max(r.sim.out.longestLink, r.sim.now.Sub(l.started))
	}
	switch {
	case l.writes > 0:
		r.ready = append(r.ready, l)
	case r.links > 0:
		r.active--
		r.startLink()
	default:
		r.active--
		if r.active == 0 {
			r.finished = r.sim.now
		}
	}
	r.send()
}

// seconds is d as the headers say it: whole seconds, made so as the
// emulator's Rounding says.
func (s *sim) seconds(d time.Duration) time.Duration {
	return time.Duration(s.limits.WholeSeconds(d)) * time.Second
}

// runShape simulates the shape once: with pacers, or with oracles.
func runShape(sh shape, seed uint64, oracle bool) outcome {
	start := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC).Add(cmp.Or(sh.phase, matrixPhase))
	s := &sim{shape: sh, start: start, now: start, limiter: emulator.NewRateLimiter(), latency: cmp.Or(sh.latency, matrixLatency),
		rand:   rand.New(rand.NewPCG(seed, seed)), //nolint:gosec // a seeded draw, so a simulation repeats
		limits: emulator.Limits{Write: sh.limit, Read: 1000, Window: emulator.Duration(sh.window), Model: sh.model, Rounding: sh.rounding, Remaining: sh.counted, Reset: sh.reset},
		out:    outcome{leastRemaining: sh.limit},
		trace:  tracing != "" && strings.Join(strings.Fields(tracing), " ") == strings.Join(strings.Fields(sh.String()), " ")}
	s.runs = make([]*run, len(sh.links))
	for i, n := range sh.links {
		r := &run{id: i, sim: s, pacer: New(sh.maxShare), links: n, oracle: oracle}
		s.runs[i] = r
		var offset time.Duration
		if i < len(sh.starts) {
			offset = sh.starts[i]
		}
		s.at(start.Add(offset), func() {
			r.started = true
			for j := 0; j < cmp.Or(sh.parallel, defaults.TerraformParallelism) && r.links > 0; j++ {
				r.startLink()
			}
			r.send()
		})
	}
	for s.queue.Len() > 0 && s.now.Sub(start) < 24*time.Hour {
		e := heap.Pop(&s.queue).(*event)
		s.now = e.at
		e.do()
	}
	for _, r := range s.runs {
		end := 24 * time.Hour
		if !r.finished.IsZero() {
			end = r.finished.Sub(start)
		}
		s.out.ends = append(s.out.ends, end)
		s.out.total = max(s.out.total, end)
	}
	return s.out
}
