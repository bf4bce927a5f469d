package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteReportReplacesOnlyTheSectionsMeasured(t *testing.T) {
	committed := "# Benchmarks\n\nMethod of every scenario.\n\n" +
		"## Applying under a write budget\n\nold throttle\n\n" +
		"## Pacing in simulation\n\ntables go test prints\n\n### A run that starts later\n\nlater table\n\n" +
		"## One key, several runs at once\n\nold shared\n"
	measured := "# Benchmarks\n\nMeasured on a day.\n\n" +
		"## One key, several runs at once\n\nnew shared\n\n" +
		"## Click analytics\n\nnew clicks\n"
	got := rewritten(t, committed, measured)
	want := "# Benchmarks\n\nMethod of every scenario.\n\n" +
		"## Applying under a write budget\n\nold throttle\n\n" +
		"## Pacing in simulation\n\ntables go test prints\n\n### A run that starts later\n\nlater table\n\n" +
		"## One key, several runs at once\n\nnew shared\n\n" +
		"## Click analytics\n\nnew clicks\n"
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteReportCreatesAMissingReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	measured := "# Benchmarks\n\n## Refresh at scale\n\ntable\n"
	if err := writeReport(path, []byte(measured)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != measured {
		t.Errorf("report:\n%s\nwant:\n%s", got, measured)
	}
}

// Notes written by hand after a section's figures outlive a new
// measurement of it; a section without them is replaced whole. The
// sections measured after it (longer here than the notes) come out as
// measured.
func TestWriteReportKeepsTheNotesOfASection(t *testing.T) {
	committed := "# Benchmarks\n\n" +
		"## One key, several runs at once\n\nold table\n\n" + notesMark + "\n\nMeasured on commit a; history.\n\n" +
		"## Refresh at scale\n\nold refresh\n"
	refresh := "## Refresh at scale\n\n" + strings.Repeat("| new refresh row |\n", 20)
	measured := "# Benchmarks\n\nMeasured on a day.\n\n" +
		"## One key, several runs at once\n\nnew table\n\n" + refresh
	got := rewritten(t, committed, measured)
	want := "# Benchmarks\n\n" +
		"## One key, several runs at once\n\nnew table\n\n" + notesMark + "\n\nMeasured on commit a; history.\n\n" + refresh
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

// rewritten is the report committed becomes once measured is written into it.
func rewritten(t *testing.T, committed, measured string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := os.WriteFile(path, []byte(committed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeReport(path, []byte(measured)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}
