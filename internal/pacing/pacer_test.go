package pacing

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shortlink/terraform-provider-shortlink/internal/emulator"
)

// Each rule DESIGN.md states ("Pacing") has a test here, asserting what it
// does for the runs (ratio to the floor, requests answered 429, order of
// finishing) through the simulation; what the simulation cannot show (a
// service without headers, garbage headers, a lost request) is asserted
// through the Pacer itself.

// ratioFigure is what a rule's test holds a shape's ratio to the floor
// to: its worst draw's, or the draws' mean for a rule whose worst draw
// may take one window more (an apply that fills its windows closely may,
// in any draw).
type ratioFigure struct {
	name string
	of   func(cellOutcome) float64
}

var (
	worstDraw = ratioFigure{"worst draw", cellOutcome.worstRatio}
	meanDraw  = ratioFigure{"mean of the draws", cellOutcome.meanRatio}
)

// within asserts the shape's figure, at most ratio the floor, and the
// share of its requests answered 429 in every draw, at most refused.
func within(t *testing.T, sh shape, figure ratioFigure, ratio, refused float64) {
	t.Helper()
	c := simulate(sh, ruleDraws)
	if got := figure.of(c); got > ratio || c.worstRefused() > refused {
		t.Errorf("%s: %.2fx the floor (%s), %.1f%% answered 429; want at most %.2fx and %.1f%%",
			sh, got, figure.name, 100*c.worstRefused(), ratio, 100*refused)
	}
}

// refusedAtMost asserts the share of all the draws' requests answered 429,
// for a rule that is about refusals over a crowd rather than any one draw.
func refusedAtMost(t *testing.T, what string, c cellOutcome, share float64) {
	t.Helper()
	if got := c.refusedShare(); got > share {
		t.Errorf("%s: %.2f%% of all requests answered 429, want at most %.1f%%", what, 100*got, 100*share)
	}
}

// laterRunWithin asserts the later run of lateRun shapes over all their
// draws: at most share its fair share on average, last to finish in at
// most last of them.
func laterRunWithin(t *testing.T, share float64, last int, shapes ...shape) {
	t.Helper()
	var sum float64
	draws, after := 0, 0
	for _, sh := range shapes {
		for _, o := range simulate(sh, ruleDraws) {
			sum, draws, after = sum+lateShare(sh, o), draws+1, after+boolInt(o.ends[1] > o.ends[0])
		}
	}
	if mean := sum / float64(draws); mean > share || after > last {
		t.Errorf("%v: the later run took %.2fx its fair share on average and finished last in %d of %d draws; want at most %.2fx and %d",
			shapes, mean, after, draws, share, last)
	}
}

// TestDesignNamesEveryRuleTest holds DESIGN.md's list of the rules
// ("Pacing") and this file to each other: every TestRule_ here is named
// beside its rule there, every test named there is here, and this file
// has them in the order DESIGN.md first names them, so that it reads as
// the rules do.
func TestDesignNamesEveryRuleTest(t *testing.T) {
	design, err := os.ReadFile("../../DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("pacer_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rules, _ := strings.Cut(string(design), "**The rules.**")
	rules, _, found := strings.Cut(rules, "**Why.**")
	if !found {
		t.Fatal(`DESIGN.md: no "**The rules.**" followed by "**Why.**" in "Pacing"`)
	}
	named := map[string]int{} // a test's place in DESIGN.md's order, from 1
	for _, m := range regexp.MustCompile("`([a-z]+[A-Z][A-Za-z]*)`").FindAllStringSubmatch(rules, -1) {
		if named[m[1]] == 0 {
			named[m[1]] = len(named) + 1
		}
	}
	tests, last := map[string]bool{}, ""
	for _, m := range regexp.MustCompile(`func Test(Rule|Pacer)_(\w+)\(`).FindAllStringSubmatch(string(source), -1) {
		tests[m[2]] = true
		if m[1] == "Rule" && named[m[2]] == 0 {
			t.Errorf("TestRule_%s: DESIGN.md does not name it beside its rule", m[2])
		}
		if named[m[2]] == 0 {
			continue
		}
		if last != "" && named[m[2]] < named[last] {
			t.Errorf("%s comes after %s here, before it in DESIGN.md", m[2], last)
		}
		last = m[2]
	}
	for name := range named {
		if !tests[name] {
			t.Errorf("DESIGN.md names %s beside a rule; pacer_test.go has no such test", name)
		}
	}
}

// An epoch begins when the answers say the allowance is whole again: a run
// alone follows the windows, whether they start at its first request or on
// the clock, and is never refused.
func TestRule_epochBeginsWhenTheAllowanceIsWhole(t *testing.T) {
	for _, model := range []string{"first-request", "clock"} {
		within(t, shape{model: model, window: 10 * time.Second, limit: 10, links: []int{40}}, worstDraw, 1.05, 0)
	}
}

// A run first in the count, with no other run known, spends as if alone:
// a run whose whole apply fits in one window pays one round trip to learn
// the allowance, not two (1.2x the floor on average, 1.55x when it sent a
// census too; the floor is four round trips).
func TestRule_firstInTheCountSpendsAsIfAlone(t *testing.T) {
	for _, model := range models {
		within(t, shape{model: model, window: 10 * time.Second, limit: 60, links: []int{30}}, meanDraw, 1.30, 0)
	}
}

// An epoch in which no answer showed another run leaves the run alone
// for the next, but not when only its first was answered: turning first
// says nothing of the runs that turn later (the Reset is rounded up, so
// they turn up to a second apart). Eight runs on 10 writes a 10 s clock
// window are refused 10.3 % to 11.4 % of their requests over four sets of
// 27 draws (13.0 % to 13.5 % when the run that sent only its first took
// itself for alone and spent the next window as if it were).
func TestRule_onlyItsFirstAnsweredShowsNoOneAlone(t *testing.T) {
	sh := crowd("clock", 10*time.Second, 10, 8)
	refusedAtMost(t, sh.String(), simulate(sh, ruleDraws), 0.12)
}

// Half of our part leaves room for the others' requests on their way:
// five runs on 20 writes a window of 10 s, first-request and clock, are
// refused less than one request in fifty (0.8 % to 1.0 % over 27 draws;
// 3.7 % to 4.0 % when a run kept its whole part on the way). And for runs
// that come a little later, with the yield: a run that finds others while
// it spent as if alone leaves them the rest of the epoch once it has sent
// its part of it, and two small runs beside a large one finish before it
// (in all but three of 540 draws), most often in their first window.
func TestRule_halfOfOurPartLeavesRoom(t *testing.T) {
	var crowds cellOutcome
	for _, model := range []string{"first-request", "clock"} {
		crowds = append(crowds, simulate(crowd(model, 10*time.Second, 20, 5), ruleDraws)...)
	}
	refusedAtMost(t, "five runs on 20 a window", crowds, 0.02)
	for _, model := range models {
		sh := uneven(model, time.Minute, 60)
		inFirst, after := 0, 0
		for _, o := range simulate(sh, ruleDraws) {
			_, first, late := smallRuns(sh, o)
			inFirst, after = inFirst+boolInt(first), after+boolInt(late)
		}
		if n := len(ruleDraws); after > 2*n/27 || inFirst < n/2 {
			t.Errorf("%s: a small run finished after the large one in %d draws of %d (want at most %d), both in their first window in %d (want %d)",
				sh, after, n, 2*n/27, inFirst, n/2)
		}
	}
}

// A run that found others while it spent as if alone yields only once it
// has sent its part of the epoch: two applies of 20 links on the spec's
// 60 writes a minute, whose 52 writes fit in one window, finish within a
// few round trips of the floor on every model (1.9 s to 2.1 s over it at
// worst, over five sets of 27 draws; the floor is under a second). When
// the run yielded as soon as it found the other, it waited the minute out
// with writes still to send, in most draws on fixed and sliding windows.
func TestRule_yieldOnlyBeyondOurPart(t *testing.T) {
	for _, model := range models {
		sh := twoSmall(model, time.Minute)
		if c := simulate(sh, ruleDraws); c.worstExcess() >= 10*time.Second {
			t.Errorf("%s: up to %s over the floor; want a few round trips", sh, c.worstExcess().Round(time.Millisecond))
		}
	}
}

// The census counts the clients: a run's second request of an epoch, sent
// within its part, and no more until its answer is in. Three runs on the
// spec's 60 writes a minute share it at the floor, and five runs on it are
// refused less than one request in a hundred (0.0 % over 27 draws; 3.1 %
// to 3.3 % when the run sent on without waiting for the census's answer).
func TestRule_censusSharesTheWindow(t *testing.T) {
	for _, model := range []string{"first-request", "clock", "sliding"} {
		within(t, shape{model: model, window: time.Minute, limit: 60, links: []int{50, 50, 50}, starts: spread(3)}, worstDraw, 1.05, 0.02)
	}
	for _, model := range []string{"first-request", "clock"} {
		sh := crowd(model, time.Minute, 60, 5)
		refusedAtMost(t, sh.String(), simulate(sh, ruleDraws), 0.01)
	}
}

// Every request sent right after the answer to our last counts the runs
// again: eight runs on 60 a minute, whose first census counted requests
// rather than runs, take their parts within a window of the floor. Their
// 411 writes fill seven windows with nine to spare, and their windows are
// spent within a second of the runs' turns, where counts move halfway: the
// runs' counts stay apart, the last requests of a window may be left, and
// a draw may take an eighth (1.17x). The bound is on the draws' mean
// (1.09x to 1.13x), which a count that stays high misses on every draw
// (1.17x when only the census counted).
func TestRule_everyRequestAfterAnAnswerCountsTheRuns(t *testing.T) {
	for _, model := range []string{"first-request", "clock"} {
		within(t, crowd(model, time.Minute, 60, 8), meanDraw, 1.15, 0.03)
	}
}

// Runs turn up to a second apart, so every count moves the run's count
// only halfway: it may miss the runs still turning, or take a turning
// run's burst for many runs. Over four sets of 27 draws, two runs on 10
// writes a 10 s window that starts at a key's first request finish within
// 1.03x the floor in every draw, none refused, and two runs on 20 a clock
// window within 1.07x (1.13x-1.24x with 2.1 % of a draw's requests
// refused, and 1.25x-1.26x, when each count replaced the run's). The
// shapes it held before stay as guards, though they no longer tell the
// rule apart on every set of draws: five runs on a bucket, three on 60.
func TestRule_countsMoveHalfway(t *testing.T) {
	within(t, crowd("first-request", 10*time.Second, 10, 2), worstDraw, 1.05, 0)
	within(t, crowd("clock", 10*time.Second, 20, 2), worstDraw, 1.10, 0.03)
	within(t, crowd("bucket", 10*time.Second, 10, 5), worstDraw, 1.05, 0.04)
	for _, w := range []time.Duration{10 * time.Second, time.Minute} {
		within(t, crowd("clock", w, 60, 3), meanDraw, 1.10, 0.01)
	}
}

// One more request whenever a round of one per client fits: the last
// requests of each window are used, not left. Three runs of 30 links on
// 10 writes a window take 1.10x-1.11x the floor on average over four sets
// of 27 draws (a draw may take one window more, 10 s of 110 s), and
// 1.20x-1.21x without it.
func TestRule_roundOfOneUsesTheRest(t *testing.T) {
	within(t, shape{model: "first-request", window: 10 * time.Second, limit: 10, links: []int{30, 30, 30}, starts: spread(3)}, meanDraw, 1.15, 0.10)
}

// A count nearer two than three is two for the round of one: two runs on
// 10 writes a window, whose counts fall back halfway from a burst and stay
// a little above two, use each window's last two units, and finish within
// 1.03x the floor in every draw (1.11-1.13x, one window more, when the
// round of one waited for three).
func TestRule_aCountNearerTwoIsTwo(t *testing.T) {
	for _, window := range []time.Duration{10 * time.Second, time.Minute} {
		within(t, crowd("first-request", window, 10, 2), worstDraw, 1.05, 0)
	}
}

// After a refusal the round of one waits until two per run fit, easing
// back as the part does: five runs on 10 writes a window, where the last
// requests of every window are fought over, are refused less than one
// request in ten (up to 15 % on a clock-aligned window without it), and
// finish within a window of the floor on average (10 s of 250 s; a draw
// may take three).
func TestRule_roundOfOneBacksOffAfterRefusals(t *testing.T) {
	for _, model := range []string{"first-request", "clock"} {
		within(t, crowd(model, 10*time.Second, 10, 5), meanDraw, 1.10, 0.10)
	}
}

// A run never refused takes one more while what remains holds every
// request counted before its first of the epoch, that one, and half the
// runs: the last units of a window, fewer than a round of one per run, go
// to the runs that opened it first, one each, not to none. Two runs on 20
// writes a window, whose count is high after their opening bursts, finish
// within 1.07x the floor in every draw and 1.03x on average (1.25x, a
// window more, without it), and eight runs on 60 within 1.08x on average
// (1.13x to 1.15x), over four sets of 27 draws.
func TestRule_theRunsThatOpenedFirstTakeTheLastUnits(t *testing.T) {
	for _, model := range []string{"first-request", "clock"} {
		for _, window := range []time.Duration{10 * time.Second, time.Minute} {
			within(t, crowd(model, window, 20, 2), worstDraw, 1.10, 0.03)
		}
	}
	within(t, crowd("first-request", 10*time.Second, 60, 8), meanDraw, 1.10, 0.03)
}

// An answer to a request that went before the answer the run goes by came
// in may have been counted before that one: it lowers what remains, never
// raises it (a run alone whose burst came back out of order sent into the
// last unit of its window, or past it).
func TestPacer_anAnswerOnItsWayTogetherOnlyLowers(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	answer := func(tk Ticket, remaining int) {
		now = now.Add(100 * time.Millisecond)
		p.Answered(tk, now, Answer{Limit: 20, Remaining: remaining, Reset: time.Minute, RetryAfter: -1})
	}
	answer(p.Sent(now), 19)
	a, b := p.Sent(now), p.Sent(now) // counted b, then a; answered a, then b
	answer(a, 17)
	answer(b, 18)
	n := 0
	for p.Next(now) == 0 && n < 20 {
		p.Sent(now)
		n++
	}
	if n != 8 {
		t.Fatalf("after answers 17, then 18 from a request on its way with the first, %d went at once, want half of 17 (8)", n)
	}
}

// The count only grows within a window, whatever order the answers come
// back in: a run alone whose answers overtake each other does not take
// itself for one of several.
func TestPacer_othersSeenInAnyOrder(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	answer := func(tk Ticket, remaining int) {
		p.Answered(tk, now, Answer{Limit: 20, Remaining: remaining, Reset: time.Minute, RetryAfter: -1})
	}
	answer(p.Sent(now), 19)
	var sent []Ticket
	for p.Next(now) == 0 && len(sent) < 4 {
		sent = append(sent, p.Sent(now))
	}
	if len(sent) != 4 {
		t.Fatalf("a run first in the count sent %d more at once, want 4", len(sent))
	}
	// Counted in the order 4, 1, 2, 3; answered 3, 4, 1, 2; then one more.
	answer(sent[2], 15)
	answer(sent[3], 18)
	answer(sent[0], 17)
	answer(sent[1], 16)
	answer(p.Sent(now), 14)
	n := 0
	for p.Next(now) == 0 && n < 10 {
		p.Sent(now)
		n++
	}
	if n < 7 {
		t.Fatalf("after answers out of order, %d more went at once, want half of 15 (7): the run took itself for one of several", n)
	}
}

// An epoch whose first answer shows the allowance not whole yet waits: on
// a sliding window two runs take 1.14x the floor on average (1.45x when
// they spent what the answer said remained).
func TestRule_notWholeYetWaits(t *testing.T) {
	within(t, shape{model: "sliding", window: 10 * time.Second, limit: 10, links: []int{40, 40}, starts: spread(2)}, meanDraw, 1.20, 0.06)
}

// A run alone sends one request for a unit of its own back before the
// whole allowance: on a sliding window it no longer waits a window after
// its last request each epoch (1.4x the floor before), on a bucket no
// longer until the bucket is full, and it is never refused (a unit held
// in a fixed window is back only with the window: it sends none early).
func TestRule_aloneSpendsItsUnitsAsTheyComeBack(t *testing.T) {
	for _, model := range []string{"sliding", "bucket"} {
		within(t, shape{model: model, window: 10 * time.Second, limit: 10, links: []int{30}}, worstDraw, 1.08, 0)
		within(t, shape{model: model, window: time.Minute, limit: 10, links: []int{30}}, worstDraw, 1.03, 0)
	}
	within(t, shape{model: "bucket", window: 10 * time.Second, limit: 20, links: []int{30}}, worstDraw, 1.15, 0)
}

// A run alone sees another in any answer whose count holds more than its
// own units (those not back yet, and its requests on their way), not only
// in its epoch's first. A run of 30 links that starts a window and a half
// into a run of 150 alone, on a sliding window of 60 per 10 s or a bucket
// of 20 per 2 s, takes 1.54x-1.63x and 1.19x-1.35x on average the time
// half the allowance would take for it, and finishes after the long run in
// at most 6 and no draws of 27, over four sets of 27 draws (1.97x-2.00x
// and 2.41x-2.52x, after it in 21 to 27 draws, when only the epoch's first
// answer showed others). The shapes it held before stay as guards: on
// sliding windows of 10 per 10 s and 20 a minute the later run finishes
// first in every draw, within 1.40x its fair share on average.
func TestRule_aloneSeesOthersInEveryAnswer(t *testing.T) {
	laterRunWithin(t, 1.75, 9, lateRun("sliding", 10*time.Second, 60))
	laterRunWithin(t, 1.75, 9, lateRun("bucket", 2*time.Second, 20))
	laterRunWithin(t, 1.40, 0, lateRun("sliding", 10*time.Second, 10), lateRun("sliding", time.Minute, 20))
}

// Beside others, a run whose part is spent, with none of its requests on
// its way, opens its next epoch when what remains and its units back make
// a part, not when the whole is: two runs on a sliding window of 60 and
// three on a bucket of 60 no longer wait for a whole the others' requests
// keep putting off (1.21x and 1.33x the floor on average before, 1.09x
// and 1.13x with the rule). The bound is on the draws' mean: which run
// takes the units back first varies from draw to draw.
func TestRule_besideOthersUnitsBackOpenAnEpoch(t *testing.T) {
	within(t, crowd("sliding", 10*time.Second, 60, 2), meanDraw, 1.20, 0.01)
	within(t, crowd("bucket", 10*time.Second, 60, 3), meanDraw, 1.20, 0.01)
}

// An epoch that opened at the whole forgets the units held before it: the
// whole holds them, and they would open another epoch within it. A run of
// 30 links that starts a window and a half into a run of 150 alone on a
// bucket of 20 per 10 s takes 0.65x to 0.76x on average the time half the
// allowance would take for it, and finishes after the long run in at most
// one draw of 27, over four sets of 27 draws (2.32x to 2.37x and 18 to 23
// draws when units held before opened epochs: the long run, holding the
// most, opened them first). Its shape before stays as a guard: eight runs
// on 10 writes a first-request window are refused at most 7.5 % of their
// requests (6.6 % to 6.9 % with the rule, 6.4 % to 6.9 % without, since a
// run keeps its count after an epoch where only its first was answered).
func TestRule_wholeForgetsUnitsHeldBefore(t *testing.T) {
	laterRunWithin(t, 1.0, 3, lateRun("bucket", 10*time.Second, 20))
	sh := crowd("first-request", 10*time.Second, 10, 8)
	refusedAtMost(t, sh.String(), simulate(sh, ruleDraws), 0.075)
}

// A refusal ends the epoch until its Retry-After: nothing goes sooner, and
// the next epoch begins right then, not the spread of our round trips
// later (a Retry-After runs from when its request was counted).
func TestRule_retryAfterIsHonoured(t *testing.T) {
	start := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	fast, slow := p.Sent(start), p.Sent(start)
	p.Answered(fast, start.Add(50*time.Millisecond), Answer{Limit: 10, Remaining: 1, Reset: time.Second, RetryAfter: -1})
	p.Answered(slow, start.Add(250*time.Millisecond), Answer{Limit: 10, Remaining: 0, Reset: time.Second, RetryAfter: -1})
	refused := p.Sent(start.Add(300 * time.Millisecond))
	p.Answered(refused, start.Add(400*time.Millisecond), Answer{Limit: 10, Remaining: 0, Reset: time.Second, RetryAfter: 3 * time.Second, Refused: true})
	if wait := p.Next(start.Add(500 * time.Millisecond)); wait != 2900*time.Millisecond {
		t.Fatalf("Next after a 429 with Retry-After: 3 = %s, want 2.9s", wait)
	}
	if wait := p.Next(start.Add(3400 * time.Millisecond)); wait != 0 {
		t.Fatalf("Next when Retry-After has passed, round trips 50 to 250 ms = %s, want 0", wait)
	}
	// The matrix checks the same for every write of every simulation.
}

// A refusal halves the run's part for the next epoch, and each quiet epoch
// gives a quarter back: the runs whose census missed the runs that open
// late are refused less. On 10 s windows, first-request and clock, five
// runs on 10 writes are refused 4.5 % to 4.7 % of their requests and eight
// runs on 20 4.1 % to 4.2 % over four sets of 27 draws (6.6 % to 6.8 % and
// 5.7 % to 6.0 % when a refusal left the part as it was).
func TestRule_refusalHalvesThePart(t *testing.T) {
	for _, c := range []struct {
		runs, limit int
		refused     float64
	}{{5, 10, 0.05}, {8, 20, 0.045}} {
		var all cellOutcome
		for _, model := range []string{"first-request", "clock"} {
			all = append(all, simulate(crowd(model, 10*time.Second, c.limit, c.runs), ruleDraws)...)
		}
		refusedAtMost(t, fmt.Sprintf("%d runs on %d a window", c.runs, c.limit), all, c.refused)
	}
}

// A request refused that went right after the answer to the run's last
// (the census is one) shows that the others took what that answer said
// remained within a round trip, one each at least: the run counts that
// many runs besides itself. On 10 s windows, five runs on 10 writes that
// start at a key's first request are refused 2.7 % to 2.9 % of their
// requests, and eight runs on 20 2.7 % to 2.9 %, over four sets of 27
// draws (3.6 % to 4.1 % and 3.2 % to 3.4 % when only a refused census
// counted).
func TestRule_refusalAfterAnAnswerCountsTheRuns(t *testing.T) {
	for _, c := range []struct {
		runs, limit int
		refused     float64
	}{{5, 10, 0.030}, {8, 20, 0.030}} {
		sh := crowd("first-request", 10*time.Second, c.limit, c.runs)
		refusedAtMost(t, sh.String(), simulate(sh, ruleDraws), c.refused)
	}
}

// A run whose epoch-opening request was refused came late: the others
// hold that epoch, and its next, which begins at the refusal's
// Retry-After, opens without a census. A run of 30 links that starts a
// window and a half into a run of 150 on 60 writes a clock-aligned window
// (10 s or a minute) finishes first in most draws (before: last in 22 of
// 27: its census, a round trip after its first, counted the long run's
// burst as runs).
func TestRule_refusedFirstOpensTheNextWithoutACensus(t *testing.T) {
	for _, window := range []time.Duration{10 * time.Second, time.Minute} {
		sh := lateRun("clock", window, 60)
		last := 0
		for _, o := range simulate(sh, ruleDraws) {
			if o.ends[1] > o.ends[0] {
				last++
			}
		}
		if last > len(ruleDraws)/3 {
			t.Errorf("%s: the later run finished last in %d draws of %d, want at most %d", sh, last, len(ruleDraws), len(ruleDraws)/3)
		}
	}
}

// max_rate_limit_percent leaves the rest of every window to others.
func TestRule_maxShareLeavesTheRest(t *testing.T) {
	sh := shape{model: "first-request", window: 10 * time.Second, limit: 20, links: []int{40}, maxShare: 0.5}
	for _, o := range simulate(sh, ruleDraws) {
		if o.leastRemaining < 10 || o.refused > 0 {
			t.Errorf("%s at half the allowance: remaining fell to %d, %d refused; want at least 10 left, none refused", sh, o.leastRemaining, o.refused)
		}
	}
}

// Whole seconds are read as rounded up until an answer shows them rounded
// down (a Reset or a Retry-After of 0); from then on every wait is a
// second longer. On a service that truncates its seconds, a run alone and a
// crowd are refused once or twice a run while they learn it, where read
// as rounded up every wait ends up to a second early and is refused again
// and again.
func TestRule_secondsRoundedDownAreLearnt(t *testing.T) {
	for _, sh := range []shape{
		{model: "clock", window: 10 * time.Second, limit: 20, links: []int{40}},
		crowd("first-request", 10*time.Second, 20, 3),
		crowd("bucket", 10*time.Second, 20, 3),
	} {
		sh.rounding = emulator.RoundDown
		within(t, sh, meanDraw, 1.25, 0.03)
	}
}

// What remains is read as counting the request answered until an allowed
// answer says the whole limit remains, which is so only where the count
// was taken before the request; from then on the run reads one less. A run
// alone, first in every window, learns it from its first answer and spends
// each window as on a service that counts the request (read as it is said,
// it takes every window's last unit for one more, and is refused).
func TestRule_aCountTakenBeforeIsLearnt(t *testing.T) {
	for _, model := range []string{emulator.ModelClock, emulator.ModelBucket} {
		within(t, shape{model: model, window: 10 * time.Second, limit: 20, links: []int{40}, counted: emulator.RemainingBefore}, worstDraw, 1.10, 0)
	}
}

// A run alone whose latest answer says more than half the allowance
// remains keeps its epoch past the whole: a turn would open the next epoch
// with one request and wait for its answer, and where answers take longer
// than the service says is left until the allowance is whole (a token
// bucket's Reset is a second or less however long its window), every write
// went alone, one answer time each. Answers of 1 s on a bucket of 60 a
// minute, and of 2 s on a sliding 10 per 2 s: 1.15x and 3.12x the floor on
// average over draws 1-27 (2.04x and 7.54x when every whole turned it).
func TestRule_aloneKeepsAnEpochWithPlentyLeft(t *testing.T) {
	slow := func(d time.Duration) latency { return latency{2 * time.Millisecond, 8 * time.Millisecond, d, d} }
	within(t, shape{model: "bucket", window: time.Minute, limit: 60, links: []int{60}, latency: slow(time.Second)}, meanDraw, 1.4, 0)
	within(t, shape{model: "sliding", window: 2 * time.Second, limit: 10, links: []int{60}, latency: slow(2 * time.Second)}, meanDraw, 4, 0)
}

// A service that sends no rate-limit headers is not paced.
func TestPacer_unmeteredIsNotPaced(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	p.Answered(p.Sent(now), now, Answer{Limit: -1, Remaining: -1, Reset: -1, RetryAfter: -1})
	for i := range 50 {
		if wait := p.Next(now); wait != 0 {
			t.Fatalf("request %d on an unmetered service waits %s", i, wait)
		}
		p.Sent(now)
	}
}

// A Retry-After is honoured even when a later answer says the service
// meters nothing: a refusal is the service's word, whatever headers the
// answers to requests sent with it carry.
func TestPacer_retryAfterHoldsOnAnUnmeteredAnswer(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	refused, unmetered := p.Sent(now), p.Sent(now)
	p.Answered(refused, now.Add(100*time.Millisecond), Answer{Limit: 10, Remaining: 0, Reset: time.Second, RetryAfter: 3 * time.Second, Refused: true})
	p.Answered(unmetered, now.Add(200*time.Millisecond), Answer{Limit: -1, Remaining: -1, Reset: -1, RetryAfter: -1})
	if wait := p.Next(now.Add(time.Second)); wait != 2100*time.Millisecond {
		t.Fatalf("Next a second in, after a 429 with Retry-After: 3 and an unmetered answer = %s, want 2.1s", wait)
	}
	if wait := p.Next(now.Add(3200 * time.Millisecond)); wait != 0 {
		t.Fatalf("Next when Retry-After has passed on an unmetered service = %s, want 0", wait)
	}
}

// A request that got no answer does not hold the epoch: the first request
// goes again.
func TestPacer_lostFirstRequestOpensAgain(t *testing.T) {
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p := New(1)
	tk := p.Sent(now)
	if wait := p.Next(now); wait != WaitForAnswer {
		t.Fatalf("Next with the first request on its way = %s, want WaitForAnswer", wait)
	}
	p.Lost(tk)
	if wait := p.Next(now); wait != 0 {
		t.Fatalf("Next after the first request was lost = %s, want 0", wait)
	}
}

// A run alone capped by max_rate_limit_percent turns at the whole however
// much its answers say remains: rule 17 keeps an epoch only while the run
// may still send in it, or a run whose answers came from the service's
// next window (plenty left, its cap spent) would wait for ever.
func TestPacer_aCappedRunAloneTurnsAtTheWhole(t *testing.T) {
	p := New(0.5)
	now := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	answer := func(remaining int) Answer {
		return Answer{Limit: 10, Remaining: remaining, Reset: 2 * time.Second, RetryAfter: -1}
	}
	send := func(remaining int) {
		t.Helper()
		if wait := p.Next(now); wait != 0 {
			t.Fatalf("at %s: wait %v, want to send (remaining %d)", now.Format("05.000"), wait, remaining)
		}
		tk := p.Sent(now)
		now = now.Add(10 * time.Millisecond)
		p.Answered(tk, now, answer(remaining))
	}
	send(9)
	send(8)
	now = now.Add(3 * time.Second) // past the whole: the service's next window
	for _, remaining := range []int{9, 8, 7} {
		send(remaining)
	}
	for deadline := now.Add(10 * time.Second); p.Next(now) != 0; now = now.Add(100 * time.Millisecond) {
		if now.After(deadline) {
			t.Fatalf("capped with %d remaining, the run did not send for 10 s", 7)
		}
	}
}

// A 429 whose answer says units remain was not refused by the allowance
// the headers count (a gateway's, or a limit they do not show): it is
// waited out, and counts no runs. A run alone on 600 reads a minute, two
// of whose requests are refused so while some 590 remain, goes on at its
// pace once each Retry-After has passed, rather than taking the 590 for
// as many runs and sending one request a window.
func TestPacer_aRefusalThatSaysUnitsRemainCountsNoRuns(t *testing.T) {
	start := time.Date(2027, 1, 5, 12, 0, 0, 0, time.UTC)
	p, now, remaining := New(1), start, 600
	sent := map[int]bool{} // by request number, whether it was sent
	for n := 0; now.Before(start.Add(10 * time.Second)); {
		wait := p.Next(now)
		if wait == WaitForAnswer {
			t.Fatalf("request %d waits for an answer, though every answer is in", n)
		}
		if wait > 0 {
			now = now.Add(wait)
			continue
		}
		tk := p.Sent(now)
		now = now.Add(20 * time.Millisecond)
		answer := Answer{Limit: 600, Remaining: remaining - 1, Reset: start.Add(time.Minute).Sub(now), RetryAfter: -1}
		if n == 5 || n == 8 {
			answer.Remaining, answer.RetryAfter, answer.Refused = remaining, time.Second, true
		} else {
			remaining--
		}
		p.Answered(tk, now, answer)
		sent[n] = true
		n++
	}
	if len(sent) < 100 {
		t.Fatalf("the run sent %d requests in 10 s after two refusals that said units remained; want at least 100 (one every 20 ms but for the two Retry-Afters)", len(sent))
	}
}
