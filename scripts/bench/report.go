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
// whole file.
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
			parts[i] = sec
		}
	}
	return bytes.Join(parts, nil)
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
