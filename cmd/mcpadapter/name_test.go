package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// counted returns the argv of a command that runs argv through a shell
// appending a line to the returned file at each start.
func counted(t *testing.T, argv ...string) ([]string, string) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "starts")
	return append([]string{"/bin/sh", "-c", `echo start >> "$0"; exec "$@"`, count}, argv...), count
}

func startsIn(t *testing.T, count string) int {
	t.Helper()
	b, err := os.ReadFile(count)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "start\n")
}

// TestServerNameOneStart: every command that opens a command target
// (tools, inspect, call) starts its server once, and shows it under the
// name it gives itself (serverInfo.name, sanitised) in the table, in
// inspect and in the trace, the handshake's messages included; --name
// overrides it with no other start.
func TestServerNameOneStart(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			argv, count := counted(t, testserver.Build(t), "-era", era.String(), "-name", "Weather Server/v2")
			const want = "Weather_Server_v2"
			run := func(args ...string) result {
				t.Helper()
				before := startsIn(t, count)
				r := cli(t, "", append(append(args, "--"), argv...)...)
				if n := startsIn(t, count) - before; n != 1 {
					t.Errorf("%v started the server %d times, want 1", args, n)
				}
				return r
			}
			r := run("tools")
			r.Must(t, 0, []string{"echo", want}, nil)
			if strings.Contains(r.Stdout, " sh ") {
				t.Errorf("the shell names the server:\n%s", r.Stdout)
			}
			r = run("inspect", "--trace")
			r.Must(t, 0, []string{"source: " + want, "server " + want}, []string{want + " → ", want + " ← ", `"method":"tools/list"`})
			if strings.Contains(r.Stderr, "sh → ") || strings.Contains(r.Stderr, "sh ← ") {
				t.Errorf("a trace line under the shell's name:\n%s", r.Stderr)
			}
			if !strings.Contains(r.Stderr, want+` → {"id":1,"jsonrpc":"2.0","method":"server/discover"`) {
				t.Errorf("the first message is not traced under the server's name:\n%.3000s", r.Stderr)
			}
			run("call", "echo", `{"text":"once"}`).Must(t, 0, []string{"once"}, nil)
			run("tools", "--name", "mine").Must(t, 0, []string{"echo", "mine"}, nil)
		})
	}
}

// TestServerNameHostile: a server's serverInfo.name is its own to choose;
// the CLI shows a safe name whatever it says, and the command's own name
// when it gives nothing to make one of.
func TestServerNameHostile(t *testing.T) {
	for _, tc := range []struct{ give, want string }{
		{strings.Repeat("x", 10_000), strings.Repeat("x", 64) + " "},
		{"line one\nline two", "line_one_line_two"},
		{"../../..", "sh"},
		{"名前", "sh"},
	} {
		argv, count := counted(t, testserver.Build(t), "-era", "legacy", "-name", tc.give)
		r := cli(t, "", append([]string{"tools", "--"}, argv...)...)
		r.Must(t, 0, []string{"echo", tc.want}, nil)
		if strings.Contains(r.Stdout, "line two") || strings.Contains(r.Stdout, "..") || strings.Contains(r.Stdout, strings.Repeat("x", 65)) {
			t.Errorf("%q shown as given:\n%s", tc.give, r.Stdout)
		}
		if n := startsIn(t, count); n != 1 {
			t.Errorf("%q: %d starts", tc.give, n)
		}
	}
}

// TestServerNameFilesystemOneStart: the npm filesystem server run with
// node is "secure-filesystem-server" (its serverInfo.name), not a name
// made from node's path, and is started once per command. (The one
// other start there may be is the protocol probe's: a server that does
// not answer server/discover within ClientOptions.ProbeTimeout, as node
// may not on a loaded machine, is started again for the initialize
// handshake; the trace shows the probe unanswered then.)
func TestServerNameFilesystemOneStart(t *testing.T) {
	var fs testenv.NPMServer
	for _, s := range testenv.NPMServers() {
		if s.Package == "@modelcontextprotocol/server-filesystem" {
			fs = s
		}
	}
	path, args, _ := fs.StdioCommand(t)
	argv, count := counted(t, append([]string{path}, args...)...)
	for range 2 {
		before := startsIn(t, count)
		r := cli(t, "", append([]string{"inspect", "--trace", "--"}, argv...)...)
		r.Must(t, 0, []string{"source: secure-filesystem-server", "server secure-filesystem-server"}, []string{"secure-filesystem-server → "})
		want := 1
		if !probeAnswered(r.Stderr, "secure-filesystem-server") {
			want = 2
			t.Logf("the server did not answer the protocol probe in time; it was started again for the handshake")
		}
		if n := startsIn(t, count) - before; n != want {
			t.Errorf("%d starts, want %d:\n%.3000s", n, want, r.Stderr)
		}
	}
	r := cli(t, "", append([]string{"tools", "--"}, argv...)...)
	r.Must(t, 0, []string{"read_text_file", "secure-filesystem-server"}, nil)
}

// probeAnswered reports whether a trace shows the server's answer to
// the first request, the server/discover probe (id 1).
func probeAnswered(trace, server string) bool {
	for _, line := range strings.Split(trace, "\n") {
		if rest, ok := strings.CutPrefix(line, server+" ← "); ok && (strings.Contains(rest, `"id":1,`) || strings.Contains(rest, `"id":1}`)) {
			return true
		}
	}
	return false
}
