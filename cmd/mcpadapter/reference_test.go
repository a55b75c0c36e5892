package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the command definitions")

// TestCLIReference checks that docs/cli.md is what the command definitions
// say; -update rewrites it.
func TestCLIReference(t *testing.T) {
	a := cmdline.New(nil, io.Discard, io.Discard, "mcpadapter")
	got := cmdline.Reference(rootCommand(a), "Every command of `mcpadapter`, with its flags. `mcpadapter agent` runs a program of its own,\n"+
		"whose flags are in the [mcpadapter-agent reference](cli-agent.md); a [transcript](transcript.txt) shows both at work.")
	file := filepath.Join("..", "..", "docs", "cli.md")
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the command definitions; run: go test -run TestCLIReference -update ./cmd/mcpadapter\n--- generated:\n%s", file, got)
	}
}
