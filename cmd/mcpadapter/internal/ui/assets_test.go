package ui

import (
	"io/fs"
	"testing"
)

// TestAssetsLight keeps the page light: its assets, embedded in the
// binary, stay under 300 KB uncompressed, with no build step (the files
// served are the files in assets/).
func TestAssetsLight(t *testing.T) {
	const budget = 300 << 10
	total := 0
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assets, path)
		total += len(b)
		t.Logf("%-22s %6d bytes", path, len(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("total %d bytes of %d", total, budget)
	if total > budget {
		t.Errorf("the page's assets are %d bytes, over the %d-byte budget", total, budget)
	}
}
