// Command pacingaudit checks that every rule of the pacing has a test that
// notices the rule's absence (all but the epochs themselves, which every
// other rule stands on). For each rule it builds internal/pacing with
// the rule taken out (a go build overlay: the tree is not touched) and runs
// the rule's test on four sets of draws; the test must fail on each. A
// rule whose test passes without it is either noise or untested, which
// DESIGN.md ("Pacing") promises neither is.
//
//	go run ./scripts/pacingaudit [-run regexp]
//
// Each removal names the code that states its rule in pacer.go, exactly
// once: a change to that code fails the audit until its removal is
// updated, so the audit follows the rules.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

const (
	pkg    = "./internal/pacing/"
	source = "internal/pacing/pacer.go"
)

// drawSets are the draws each test runs on, as the rule tests' comments
// report their figures.
var drawSets = []string{"1-27", "28-54", "55-81", "82-108"}

// removal is one rule taken out of pacer.go, and the tests that must
// notice.
type removal struct {
	tests   []string // TestRule_ and TestPacer_ names
	rule    string   // the code that states the rule
	without string   // that code with the rule taken out
}

var removals = []removal{
	{[]string{"TestRule_firstInTheCountSpendsAsIfAlone"},
		"if place == 1 && p.runs == 1 && !p.othersThisEpoch {", "if false {"},
	{[]string{"TestRule_onlyItsFirstAnsweredShowsNoOneAlone"},
		"case !last.othersThisEpoch && last.answeredSeq > last.firstSeq:", "case !last.othersThisEpoch:"},
	{[]string{"TestRule_halfOfOurPartLeavesRoom"},
		"int(r / (2 * p.runs * p.backoff))", "int(r / (p.runs * p.backoff))"},
	{[]string{"TestRule_halfOfOurPartLeavesRoom", "TestRule_yieldOnlyBeyondOurPart"},
		"p.yield = p.yield || !p.others", "p.yield = false"},
	{[]string{"TestRule_yieldOnlyBeyondOurPart"},
		"return p.yield && float64(p.sent) >= float64(p.limit)/p.runs", "return p.yield"},
	{[]string{"TestRule_censusSharesTheWindow"},
		"case p.others && p.censusSeq == 0 && p.answeredSeq > 0:", "case false:"},
	{[]string{"TestRule_countsMoveHalfway"},
		"p.runs = (math.Max(1, float64(place-t.lastPlace)) + p.runs) / 2", "p.runs = math.Max(1, float64(place-t.lastPlace))"},
	{[]string{"TestRule_roundOfOneUsesTheRest"},
		"roundOfOne := !p.others || r >= round*min(p.backoff, refusalBackoff)", "roundOfOne := !p.others"},
	{[]string{"TestRule_aCountNearerTwoIsTwo"},
		"if math.Round(round) <= 2 {", "if false {"},
	{[]string{"TestRule_roundOfOneBacksOffAfterRefusals"},
		"r >= round*min(p.backoff, refusalBackoff)", "r >= round"},
	{[]string{"TestRule_theRunsThatOpenedFirstTakeTheLastUnits"},
		"lastUnits := !p.everRefused && r >= float64(p.firstPlace)+p.runs/2", "lastUnits := false"},
	{[]string{"TestPacer_anAnswerOnItsWayTogetherOnlyLowers", "TestPacer_othersSeenInAnyOrder"},
		"if !p.unmetered && (a.Remaining <= p.remaining || !t.sentAt.Before(p.heardAt)) {", "if !p.unmetered {"},
	{[]string{"TestRule_notWholeYetWaits"},
		"if place > int(p.runs)+1 && p.lastWhole.After(t.sentAt) {", "if false {"},
	{[]string{"TestRule_aloneSpendsItsUnitsAsTheyComeBack"},
		"case !p.others && p.remaining == 0 && len(p.unitsBack) > 0 && p.unitsBack[0].Before(p.resetAt):", "case false:"},
	{[]string{"TestRule_aloneKeepsAnEpochWithPlentyLeft"},
		"(p.others || p.answeredSeq == 0 || 2*p.remaining <= p.limit || p.capped())", "true"},
	{[]string{"TestRule_aloneSeesOthersInEveryAnswer"},
		"(t.seq == p.firstSeq || !p.others) && place > 1+len(p.unitsBack)+p.onTheWay", "t.seq == p.firstSeq && place > 1+len(p.unitsBack)+p.onTheWay"},
	{[]string{"TestRule_besideOthersUnitsBackOpenAnEpoch"},
		"case p.others && !p.yielding() && !p.capped():", "case false:"},
	{[]string{"TestRule_wholeForgetsUnitsHeldBefore"},
		"case last.othersThisEpoch && !last.openedOnUnitsBack:", "case false:"},
	{[]string{"TestRule_retryAfterIsHonoured"},
		"if p.unmetered || now.Before(p.notBefore) {", "if p.unmetered {"},
	{[]string{"TestRule_refusalHalvesThePart"},
		"p.others, p.othersThisEpoch, p.backoffBy, p.unmetered = true, true, refusalBackoff, false", "p.others, p.othersThisEpoch, p.backoffBy, p.unmetered = true, true, 0.75, false"},
	{[]string{"TestRule_refusalAfterAnAnswerCountsTheRuns"},
		"p.runs = math.Max(p.runs, float64(p.limit-t.lastPlace+1))", ""},
	{[]string{"TestPacer_aRefusalThatSaysUnitsRemainCountsNoRuns"},
		"if t.lastPlace > 0 && p.others && a.Remaining <= 0 {", "if t.lastPlace > 0 && p.others {"},
	{[]string{"TestRule_refusedFirstOpensTheNextWithoutACensus"},
		"if last.firstRefused {", "if false {"},
	{[]string{"TestRule_maxShareLeavesTheRest"},
		"return p.maxShare < 1 && p.limit > 0 && p.sent >= max(int(p.maxShare*float64(p.limit)), 1)", "return false"},
	{[]string{"TestRule_secondsRoundedDownAreLearnt"},
		"a, p.reading = believable(a, p.reading)", "a, p.reading = believable(a, reading{countedBefore: p.reading.countedBefore})"},
	{[]string{"TestRule_aCountTakenBeforeIsLearnt"},
		"a, p.reading = believable(a, p.reading)", "a, p.reading = believable(a, reading{roundedDown: p.reading.roundedDown})"},
}

func main() {
	run := flag.String("run", "", "audit only the removals whose tests match this regexp")
	flag.Parse()
	if err := audit(*run); err != nil {
		fmt.Fprintln(os.Stderr, "pacingaudit:", err)
		os.Exit(1)
	}
}

func audit(run string) error {
	only, err := regexp.Compile(run)
	if err != nil {
		return fmt.Errorf("-run: %w", err)
	}
	src, err := os.ReadFile(source)
	if err != nil {
		return fmt.Errorf("%w (run from the repository's root)", err)
	}
	dir, err := os.MkdirTemp("", "pacingaudit")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The tests must pass with every rule in before they can tell anything.
	for _, draws := range drawSets {
		if out, err := goTest("", `^Test(Rule|Pacer)_`, draws); err != nil {
			return fmt.Errorf("the rule tests fail on draws %s with every rule in:\n%s", draws, out)
		}
	}
	unnoticed := 0
	for i, r := range removals {
		if !only.MatchString(strings.Join(r.tests, " ")) {
			continue
		}
		overlay, err := overlayWithout(dir, i, string(src), r)
		if err != nil {
			return err
		}
		var row []string
		for _, draws := range drawSets {
			noticed, err := noticed(overlay, r.tests, draws)
			if err != nil {
				return fmt.Errorf("%s, draws %s: %w", r.tests[0], draws, err)
			}
			row = append(row, map[bool]string{true: "fails", false: "PASSES"}[noticed])
			unnoticed += boolInt(!noticed)
		}
		fmt.Printf("%-60s %s\n", strings.Join(r.tests, ", "), strings.Join(row, " "))
	}
	if unnoticed > 0 {
		return fmt.Errorf("%d runs of a rule's test passed with the rule taken out", unnoticed)
	}
	return nil
}

// overlayWithout writes pacer.go without the removal's rule, and the
// overlay that builds the package with it.
func overlayWithout(dir string, i int, src string, r removal) (string, error) {
	if n := strings.Count(src, r.rule); n != 1 {
		return "", fmt.Errorf("%s: %q is in %s %d times, want once: update the removal with the rule", r.tests[0], r.rule, source, n)
	}
	abs, err := filepath.Abs(source)
	if err != nil {
		return "", err
	}
	mutated := filepath.Join(dir, fmt.Sprintf("pacer%d.go", i))
	if err := os.WriteFile(mutated, []byte(strings.Replace(src, r.rule, r.without, 1)), 0o600); err != nil {
		return "", err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {abs: mutated}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, fmt.Sprintf("overlay%d.json", i))
	return path, os.WriteFile(path, overlay, 0o600)
}

// noticed is whether one of tests fails on draws with the overlay; a
// build that fails is an error, not a notice.
func noticed(overlay string, tests []string, draws string) (bool, error) {
	out, err := goTest(overlay, "^("+strings.Join(tests, "|")+")$", draws)
	switch {
	case err == nil:
		return false, nil
	case strings.Contains(out, "--- FAIL: Test"):
		return true, nil
	default:
		return false, fmt.Errorf("%w:\n%s", err, out)
	}
}

func goTest(overlay, pattern, draws string) (string, error) {
	args := []string{"test", "-count=1", "-run", pattern}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Env = append(os.Environ(), "PACING_SEEDS="+draws)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
