package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
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
	out := report
	for _, sec := range sections(measured)[1:] {
		heading := sec[:bytes.IndexByte(sec, '\n')+1]
		parts := sections(out)
		replaced := false
		for i, p := range parts {
			if bytes.HasPrefix(p, heading) {
				parts[i], replaced = sec, true
			}
		}
		if !replaced {
			parts = append(parts, sec)
		}
		out = bytes.Join(parts, nil)
	}
	return out
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
