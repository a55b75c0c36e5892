// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against the mcpadapter conformance
// client in ./client. run.sh does the same from the shell; see README.md.
package conformance_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// requirementSets are the spec revisions whose required client scenarios
// must all pass.
var requirementSets = []string{"2025-11-25", "2026-07-28"}

// TestConformance builds the client and runs each requirement set's client
// scenarios against it. A required scenario passes when the suite marks it
// passed with at least one passed check.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite (Node 22); skipped in -short mode")
	}
	node := testenv.Node(t)
	entry := testenv.ConformanceEntry(t)
	env := testenv.NodeEnv(node)

	dir := t.TempDir()
	bin := filepath.Join(dir, "conformance-client")
	if strings.ContainsAny(bin, " \t") {
		t.Skipf("the suite splits --command on spaces; temporary directory %q has one", dir)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command not found: %v", err)
	}
	build := exec.Command(gocmd, "build", "-o", bin, "./client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./client: %v\n%s", err, out)
	}

	for _, set := range requirementSets {
		t.Run(set, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			required := requiredScenarios(ctx, t, node, entry, env, set)

			results := filepath.Join(dir, set)
			cmd := exec.CommandContext(ctx, node, entry, "client", "--command", bin, "--requirements", set, "-o", results)
			cmd.Env = env
			start := time.Now()
			out, runErr := cmd.CombinedOutput()
			t.Logf("suite for %s ran in %v", set, time.Since(start).Round(time.Millisecond))
			if ctx.Err() != nil {
				t.Fatalf("the suite did not finish: %v\n%s", ctx.Err(), out)
			}

			summary := parseSummary(out)
			pass, fail := 0, 0
			for _, s := range required {
				line, ok := summary[s]
				var problem string
				switch {
				case !ok:
					problem = "not in the suite's summary"
				case !strings.HasPrefix(line, "✓"):
					problem = line
				case strings.Contains(line, ": 0 passed,"):
					problem = "no checks emitted"
				}
				if problem == "" {
					pass++
					continue
				}
				fail++
				t.Errorf("%s: %s%s", s, problem, failedChecks(results, s))
			}
			t.Logf("%s: %d passed, %d failed", set, pass, fail)
			if runErr != nil && fail == 0 {
				t.Errorf("the suite failed although every required scenario passed: %v\n%s", runErr, out)
			}
			if t.Failed() {
				t.Logf("suite output:\n%s", out)
			}
		})
	}
}

// requiredScenarios asks the suite which client scenarios set requires.
func requiredScenarios(ctx context.Context, t *testing.T, node, entry string, env []string, set string) []string {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, entry, "list", "--client", "--requirements", set)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("conformance list --client --requirements %s: %v", set, err)
	}
	var names []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Client scenarios"):
			in = true
		case in && strings.HasPrefix(line, "  - "):
			names = append(names, strings.Fields(line)[1])
		case in && strings.TrimSpace(line) == "":
			in = false
		}
	}
	if len(names) == 0 {
		t.Fatalf("the suite lists no client scenarios for %s:\n%s", set, out)
	}
	return names
}

// parseSummary maps scenario names to their "✓ name: 3 passed, 0 failed"
// lines in the suite's summary.
func parseSummary(out []byte) map[string]string {
	m := make(map[string]string)
	_, after, ok := bytes.Cut(out, []byte("=== SUITE SUMMARY ==="))
	if !ok {
		return m
	}
	sc := bufio.NewScanner(bytes.NewReader(after))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "✓ ") && !strings.HasPrefix(line, "✗ ") {
			continue
		}
		_, rest, _ := strings.Cut(line, " ")
		name, _, ok := strings.Cut(rest, ": ")
		if ok {
			if _, dup := m[name]; !dup {
				m[name] = line
			}
		}
	}
	return m
}

// failedChecks describes the failed checks of scenario s and the tail of
// the client's stderr, from the suite's results directory.
func failedChecks(results, s string) string {
	paths, _ := filepath.Glob(filepath.Join(results, filepath.FromSlash(s)+"-*", "checks.json"))
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var checks []struct {
			ID, Status, Description, ErrorMessage string
		}
		if json.Unmarshal(data, &checks) != nil {
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				msg := c.ErrorMessage
				if msg == "" {
					msg = c.Description
				}
				fmt.Fprintf(&b, "\n\t%s: %s", c.ID, msg)
			}
		}
		if stderr, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stderr.txt")); err == nil {
			lines := strings.Split(strings.TrimSpace(string(stderr)), "\n")
			if len(lines) > 10 {
				lines = lines[len(lines)-10:]
			}
			fmt.Fprintf(&b, "\n\tclient stderr (tail):\n\t\t%s", strings.Join(lines, "\n\t\t"))
		}
	}
	return b.String()
}
