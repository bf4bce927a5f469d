package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
)

// writeReport writes the scenarios measured into the report at path: each
// "## " section of measured replaces the section of the same heading, or
// is added at the end, and the rest of the file (its opening, the
// simulation's tables that `go test` prints, the scenarios not run this
// time) stays as it is. So `-only shared` refreshes one table, not the
// whole file. A section replaced keeps its notes: what follows notesMark
// in it, written by hand about the figures (their history, what they miss).
func writeReport(path string, measured []byte) error {
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return os.WriteFile(path, measured, 0o644)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(path, mergeSections(old, measured), 0o644)
}

// mergeSections puts the "## " sections of measured into report.
func mergeSections(report, measured []byte) []byte {
	parts := sections(report)
	for _, sec := range sections(measured)[1:] {
		i := slices.IndexFunc(parts, func(p []byte) bool { return bytes.Equal(firstLine(p), firstLine(sec)) })
		if i < 0 {
			parts = append(parts, sec)
		} else {
			parts[i] = withNotes(sec, parts[i])
		}
	}
	return bytes.Join(parts, nil)
}

// notesMark opens the notes of a section, which a new measurement keeps.
const notesMark = "<!-- notes: scripts/bench keeps what follows when it measures this section again -->"

// withNotes is the measured section followed by the notes of the one it
// replaces, if that has any.
func withNotes(measured, old []byte) []byte {
	i := bytes.Index(old, []byte(notesMark))
	if i < 0 {
		return measured
	}
	// A new slice: measured shares its array with the sections after it.
	return slices.Concat(bytes.TrimRight(measured, "\n"), []byte("\n\n"), old[i:])
}

func firstLine(b []byte) []byte {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return line
}

// sections splits a Markdown report before each line that starts with
// "## ": the first part is what comes before the first section.
func sections(report []byte) [][]byte {
	var parts [][]byte
	start := 0
	for i := 0; i < len(report); {
		end := bytes.IndexByte(report[i:], '\n')
		if end < 0 {
			end = len(report) - i - 1
		}
		if i > 0 && bytes.HasPrefix(report[i:], []byte("## ")) {
			parts, start = append(parts, report[start:i]), i
		}
		i += end + 1
	}
	return append(parts, report[start:])
}
