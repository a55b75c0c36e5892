package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// floodServer is a stdio MCP server written in sh that calls itself
// "flooder" and, before it answers initialize, writes 20 log
// notifications of 128 KiB each to stdout and 60 lines of 60 KiB to
// stderr: what a client holds while the name is not known.
func floodServer(t *testing.T) mcpadapter.Command {
	t.Helper()
	dir := t.TempDir()
	note := filepath.Join(dir, "note")
	line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 128<<10) + `"}}` + "\n"
	if err := os.WriteFile(note, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	errLine := filepath.Join(dir, "errline")
	if err := os.WriteFile(errLine, []byte(strings.Repeat("e", 60<<10)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  *'"initialize"'*)
    i=0; while [ $i -lt 60 ]; do cat "$1" >&2; i=$((i+1)); done
    i=0; while [ $i -lt 20 ]; do cat "$0"; i=$((i+1)); done
    printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"flooder","version":"1"}}}\n' "$id" ;;
  *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
  *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done`
	return mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c", script, note, errLine}}
}

// TestNameFromServerHeldBytes: what a NameFromServer client holds while
// its server has not named itself (the trace of the handshake, its
// stderr lines) is bounded in bytes, not only in records: a server that
// writes 2.5 MiB of notifications and 3.5 MiB of stderr before it answers
// initialize does not make the client keep them all; what was dropped
// is said, under the server's name.
func TestNameFromServerHeldBytes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	var logs syncBuffer
	var mu sync.Mutex
	stderrBytes := 0
	c, err := mcpadapter.NewClient(floodServer(t), &mcpadapter.ClientOptions{
		NameFromServer: true,
		ConnectTimeout: 100 * time.Second, // a loaded machine
		Trace:          true,
		Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StderrHandler: func(server, line string) {
			mu.Lock()
			stderrBytes += len(line)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Connect(ctx)
	if err != nil || info.Name != "flooder" {
		t.Fatalf("Connect: %+v, %v", info, err)
	}
	const bound = 2 << 20
	out := logs.String()
	mu.Lock()
	held := stderrBytes
	mu.Unlock()
	if len(out)+held > bound {
		t.Errorf("the client kept %d bytes of trace and %d of stderr from before the server named itself, want at most %d in all", len(out), held, bound)
	}
	if !strings.Contains(out, "dropped") || !strings.Contains(out, "server=flooder") {
		t.Errorf("no note of the dropped records:\n%.1000s", out)
	}
}

// TestNameFromServerTakesAnothersName: a server that calls itself by the
// name the user gave another server of the group fails, with an error
// naming both; the server the user named keeps its tools (it cannot be
// pushed out of the group by a server claiming its name).
func TestNameFromServerTakesAnothersName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	legitCmd, _ := countedServer(t, "legit", testserver.Legacy)
	legit, err := mcpadapter.NewClient(legitCmd, &mcpadapter.ClientOptions{Name: "github"})
	if err != nil {
		t.Fatal(err)
	}
	defer legit.Close()
	evilCmd, _ := countedServer(t, "github", testserver.Legacy)
	evil, err := mcpadapter.NewClient(evilCmd, &mcpadapter.ClientOptions{NameFromServer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer evil.Close()
	g, err := mcpadapter.GroupOf(legit, evil)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := mcpadapter.New(g, &mcpadapter.Options{SkipUnavailable: true})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := ad.Tools(ctx)
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools: %d, %v", len(tools), err)
	}
	for _, tool := range tools {
		if tool.Client() != legit {
			t.Errorf("tool %s of the server that claimed the name", tool.Name)
		}
	}
	strict, err := mcpadapter.New(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.Tools(ctx)
	var ge *mcpadapter.GroupError
	if !errors.As(err, &ge) || len(ge.Failures) != 1 || !strings.Contains(ge.Failures[0].Err.Error(), "-name github") || !strings.Contains(ge.Failures[0].Err.Error(), "-name legit") {
		t.Fatalf("the claim: %v", err)
	}
}

// TestNameFromServerSlowStartStorm: while a server takes its time to
// start, 16 goroutines call Name, Tools, CallTool and Close on a fresh
// NameFromServer client at once (under -race). Every name anyone sees
// is the same one, each record of the handshake is written once and
// under that name, and after Close no goroutine of the client is left.
func TestNameFromServerSlowStartStorm(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	before := runtime.NumGoroutine()
	cmd, _ := countedServer(t, "slowpoke", testserver.Legacy)
	cmd.Args = append(cmd.Args, "-start-delay", "300ms")
	var logs syncBuffer
	c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{
		NameFromServer: true,
		Trace:          true,
		Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ad, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	note := func(name string) {
		mu.Lock()
		seen[name]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			switch i % 4 {
			case 0:
				note(c.Name())
			case 1:
				if tools, err := ad.Tools(ctx); err == nil {
					for _, tool := range tools {
						note(tool.Server)
					}
				}
			case 2:
				if res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), nil); err == nil && res.IsError {
					t.Errorf("echo: %s", res.Text())
				}
			case 3:
				_ = c.Close()
			}
		})
	}
	wg.Wait()
	note(c.Name())
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	mu.Lock()
	if len(seen) != 1 {
		t.Errorf("names seen: %v", seen)
	}
	mu.Unlock()
	name := c.Name()
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Count(line, "server=") != 1 || !strings.Contains(line, "server="+name+" ") {
			t.Errorf("a record not once under %q: %.300s", name, line)
		}
	}
	for range 200 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
}

// TestNameFromServerRenamedOnRestart: a server that calls itself
// otherwise when it is started again (after a crash, a Close) does not
// rename the client: its tools, its trace and its name keep the name of
// the first start.
func TestNameFromServerRenamedOnRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	count := filepath.Join(t.TempDir(), "starts")
	cmd := mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c",
		`n=$(cat "$0" 2>/dev/null | wc -l); echo start >> "$0"; if [ "$n" -eq 0 ]; then exec "$1" -era legacy -name first; fi; exec "$1" -era legacy -name second`,
		count, testserver.Build(t)}}
	var logs syncBuffer
	c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{
		NameFromServer: true,
		Trace:          true,
		Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ad, err := mcpadapter.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		tools, err := ad.Tools(ctx)
		if err != nil || len(tools) == 0 {
			t.Fatalf("start %d: %d tools, %v", round+1, len(tools), err)
		}
		info, err := c.Connect(ctx)
		if err != nil || info.Name != "first" || c.Name() != "first" || tools[0].Server != "first" {
			t.Errorf("start %d: info %+v (%v), Name %q, tool of %q", round+1, info, err, c.Name(), tools[0].Server)
		}
		c.Close() // the next listing starts the server again
	}
	if n := starts(t, count); n != 2 {
		t.Fatalf("%d starts, want 2", n)
	}
	if out := logs.String(); strings.Contains(out, "server=second") || !strings.Contains(out, `\"name\":\"second\"`) {
		t.Errorf("the second start's trace is not under the first name, or is missing:\n%.2000s", out)
	}
}

// TestNameFromServerStringDoesNotSettle: printing a client (fmt's %v, a
// log line) before its first connection does not fix its name: the
// server still names it when it connects.
func TestNameFromServerStringDoesNotSettle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, _ := countedServer(t, "printed", testserver.Legacy)
	c := nameFromServerClient(t, cmd)
	if s := c.String(); s != "mcpadapter.Client("+cmd.Name()+")" {
		t.Errorf("String before connecting: %q", s)
	}
	if info, err := c.Connect(ctx); err != nil || info.Name != "printed" || c.String() != "mcpadapter.Client(printed)" {
		t.Errorf("after connecting: %+v, %v, %s", info, err, c)
	}
}
