// Command funcstats prints the figures we track for the codebase's shape:
// the largest source files, the longest functions and the mean function
// length, over the non-test Go files of internal/, cmd/ and main.go.
//
//	go run ./scripts/funcstats [dir]
package main

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type measure struct {
	name  string
	lines int
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	files, funcs, err := measureTree(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funcstats:", err)
		os.Exit(1)
	}
	total := 0
	for _, f := range funcs {
		total += f.lines
	}
	fmt.Printf("largest files:     %s\n", top(files, 3))
	fmt.Printf("longest functions: %s\n", top(funcs, 3))
	fmt.Printf("functions: %d, mean length %.1f lines\n", len(funcs), float64(total)/float64(max(len(funcs), 1)))
}

// measureTree returns the length of every source file and function.
func measureTree(root string) (files, funcs []measure, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !counted(root, path) {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files = append(files, measure{rel, fset.Position(f.End()).Line})
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				funcs = append(funcs, measure{rel + ":" + fd.Name.Name, lines})
			}
		}
		return nil
	})
	return files, funcs, err
}

// counted is whether a file is the provider's own code: not a test, not a
// script.
func counted(root, path string) bool {
	rel, _ := filepath.Rel(root, path)
	return strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") &&
		(rel == "main.go" || strings.HasPrefix(rel, "internal"+string(filepath.Separator)) || strings.HasPrefix(rel, "cmd"+string(filepath.Separator)))
}

func top(ms []measure, n int) string {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, func(a, b measure) int { return cmp.Compare(b.lines, a.lines) })
	var parts []string
	for _, m := range ms[:min(n, len(ms))] {
		parts = append(parts, fmt.Sprintf("%s (%d)", m.name, m.lines))
	}
	return strings.Join(parts, ", ")
}
