package mcpadapter_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
