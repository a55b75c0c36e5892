package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/spf13/cobra"
)

// The agent is a program of its own, mcpadapter-agent, in its own module:
// it brings the eino agent framework and an OpenAI client, which listing and
// calling tools do without. "mcpadapter agent ARGS" runs
// "mcpadapter-agent ARGS", the way git runs git-foo.
const (
	agentProgram = "mcpadapter-agent"
	// agentPackage is the agent's main package, at the root of its module.
	agentPackage = "github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent"
)

// agentInstall ends the agent command's help.
const agentInstall = `

The agent is a separate program, ` + agentProgram + `, so that the other commands build
without the agent framework. "mcpadapter agent" runs it with the same arguments, looking
next to mcpadapter, then on PATH; inside this repository's Go workspace (a go.work that
has its module) it builds it from source. Install it with

  go install ` + agentPackage + `@latest`

func agentCommand(a *cmdline.App) *cobra.Command {
	return &cobra.Command{
		Use:     "agent " + cmdline.AgentUse,
		Short:   cmdline.AgentShort,
		Long:    cmdline.AgentLong + agentInstall,
		Example: cmdline.AgentExample,
		// Every argument, flags included, is the agent program's.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := findAgent(cmd.Context(), a.Stderr)
			if err != nil {
				return err
			}
			if path == "" {
				if wantsHelp(args) {
					return cmd.Help()
				}
				return fmt.Errorf("the agent command needs %s, which is neither next to mcpadapter nor on PATH; install it with: go install %s@latest", agentProgram, agentPackage)
			}
			code, err := runAgent(path, args, a)
			a.Code = code
			return err
		},
	}
}

// wantsHelp reports whether args ask for help before any "--".
func wantsHelp(args []string) bool {
	for _, arg := range args {
		switch arg {
		case "-h", "--help":
			return true
		case "--":
			return false
		}
	}
	return false
}

// findAgent returns the path of the agent program: next to this program,
// else on PATH, else built from the Go workspace the working directory is
// in; "" when there is none.
func findAgent(ctx context.Context, stderr io.Writer) (string, error) {
	name := agentProgram
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), name); isProgram(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(agentProgram); err == nil {
		return p, nil
	}
	return workspaceAgent(ctx, name, stderr)
}

// isProgram reports whether path is an executable file.
func isProgram(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && (runtime.GOOS == "windows" || fi.Mode()&0o111 != 0)
}

// workspaceAgent builds the agent program from source when the working
// directory is in a Go workspace that has the agent's module (a clone of
// this repository, with its go.work), and returns the binary's path; ""
// when it is not. Only the clone this program was itself built from
// counts (its agent's directory beside this file's): any checkout can
// name the agent's module in its go.mod, and building it would run the
// checkout's code. The binary is kept in the user cache directory, one
// per workspace; "go build" leaves it alone while it is up to date.
//
// It builds rather than "go run"s: go run reports any failure of the
// program as exit status 1 (and prints "exit status N"), and the agent's
// exit status must reach the caller unchanged.
func workspaceAgent(ctx context.Context, name string, stderr io.Writer) (string, error) {
	own := ownAgentDir()
	if own == "" {
		return "", nil
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return "", nil
	}
	out, err := exec.CommandContext(ctx, gocmd, "list", "-m", "-f", "{{.Main}} {{.Dir}}", agentPackage).Output()
	main, dir, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if err != nil || main != "true" {
		return "", nil
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil || dir != own {
		return "", nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(dir))
	bin := filepath.Join(cache, "mcpadapter", "agent", hex.EncodeToString(sum[:8]), name)
	if _, err := os.Stat(bin); err != nil {
		fmt.Fprintf(stderr, "mcpadapter: %s is not installed; building it from this workspace (%s), once\n", agentProgram, dir)
	}
	build := exec.CommandContext(ctx, gocmd, "build", "-o", bin, agentPackage)
	build.Stdout, build.Stderr = stderr, stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building %s from the workspace %s: %w", agentProgram, dir, err)
	}
	return bin, nil
}

// ownAgentDir returns the agent's directory in the source tree this
// program was built from, links resolved; "" when there is none (a build
// with -trimpath, or from a module archive without it).
func ownAgentDir() string {
	_, self, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(self) {
		return ""
	}
	dir, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(self), agentProgram))
	if err != nil {
		return ""
	}
	return dir
}
