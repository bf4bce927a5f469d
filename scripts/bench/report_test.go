package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReportReplacesOnlyTheSectionsMeasured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	committed := "# Benchmarks\n\nMethod of every scenario.\n\n" +
		"## Applying under a write budget\n\nold throttle\n\n" +
		"## Pacing in simulation\n\ntables go test prints\n\n### A run that starts later\n\nlater table\n\n" +
		"## One key, several runs at once\n\nold shared\n"
	if err := os.WriteFile(path, []byte(committed), 0o644); err != nil {
		t.Fatal(err)
	}
	measured := "# Benchmarks\n\nMeasured on a day.\n\n" +
		"## One key, several runs at once\n\nnew shared\n\n" +
		"## Click analytics\n\nnew clicks\n"
	if err := writeReport(path, []byte(measured)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Benchmarks\n\nMethod of every scenario.\n\n" +
		"## Applying under a write budget\n\nold throttle\n\n" +
		"## Pacing in simulation\n\ntables go test prints\n\n### A run that starts later\n\nlater table\n\n" +
		"## One key, several runs at once\n\nnew shared\n\n" +
		"## Click analytics\n\nnew clicks\n"
	if string(got) != want {
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
