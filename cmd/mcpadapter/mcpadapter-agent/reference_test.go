package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

var update = flag.Bool("update", false, "rewrite docs/cli-agent.md from the command definitions")

// TestCLIReference checks that docs/cli-agent.md is what the command
// definitions say; -update rewrites it.
func TestCLIReference(t *testing.T) {
	a := &app{cmdline.New(nil, io.Discard, io.Discard, "mcpadapter agent")}
	root := a.agentCommand()
	a.AddFlags(root)
	got := cmdline.Reference(root, "The agent program: `mcpadapter agent ARGS` runs `mcpadapter-agent ARGS`. Install it with\n"+
		"`go install github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent@latest`. The other commands: [mcpadapter](cli.md).")
	file := filepath.Join("..", "..", "..", "docs", "cli-agent.md")
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
		t.Errorf("%s differs from the command definitions; run: go test -run TestCLIReference -update ./cmd/mcpadapter/mcpadapter-agent\n--- generated:\n%s", file, got)
	}
}
