package mcpadapter_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureNamesEveryPackage keeps ARCHITECTURE.md true to the
// tree: every package path it names in backquotes exists, and every
// internal package is named there.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:internal|cmd)/[a-z0-9/]+)`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+(internal/[a-z0-9/]+)\s`).FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	for p := range named {
		if !hasGoFiles(p) {
			t.Errorf("ARCHITECTURE.md names %s, which is not a package here", p)
		}
	}
	err = filepath.WalkDir("internal", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() && hasGoFiles(p) && !named[filepath.ToSlash(p)] {
			t.Errorf("ARCHITECTURE.md does not name the package %s", filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasGoFiles reports whether dir holds a Go file that is not a test.
func hasGoFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			return true
		}
	}
	return false
}

// TestArchitectureLayersPointDown keeps the layers of ARCHITECTURE.md
// true: an internal package in the list imports (outside its tests) only
// internal packages listed below it, and never the root.
func TestArchitectureLayersPointDown(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layers, ok := strings.Cut(string(doc), "## Layers")
	if !ok {
		t.Fatal("ARCHITECTURE.md has no Layers section")
	}
	_, layers, _ = strings.Cut(layers, "```")
	layers, _, _ = strings.Cut(layers, "```")
	rank := map[string]int{}
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(internal/[a-z0-9/]+)\s`).FindAllStringSubmatch(layers, -1) {
		rank[m[1]] = len(order)
		order = append(order, m[1])
	}
	if len(order) < 10 {
		t.Fatalf("the Layers list names %d internal packages: %v", len(order), order)
	}
	const module = "github.com/mcpadapter/mcpadapter"
	for _, pkg := range order {
		files, err := filepath.Glob(filepath.Join(pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("%s: no Go files (%v)", pkg, err)
			continue
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				dep, internal := strings.CutPrefix(path, module+"/")
				switch {
				case path == module:
					t.Errorf("%s imports the root (%s)", pkg, f)
				case !internal || !strings.HasPrefix(dep, "internal/"):
				case slices.Contains(order, dep) && rank[dep] <= rank[pkg]:
					t.Errorf("%s imports %s, which ARCHITECTURE.md's layers list above it (%s)", pkg, dep, f)
				}
			}
		}
	}
}
