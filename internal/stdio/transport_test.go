//go:build unix

package stdio_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is an Observer that counts what it sees.
type recorder struct {
	mu             sync.Mutex
	sent, received []jsonrpc.Message
}

func (r *recorder) Sent(msg jsonrpc.Message, raw []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, msg)
}

func (r *recorder) Received(msg jsonrpc.Message, raw []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.received = append(r.received, msg)
}

func (r *recorder) counts() (sent, received int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sent), len(r.received)
}

// connect starts the test server with flags through a Transport and
// connects a go-sdk client to it.
func connect(t *testing.T, ctx context.Context, tr *stdio.Transport, flags ...string) (*mcp.ClientSession, *stdio.Conn) {
	t.Helper()
	tr.Path = testserver.Build(t)
	tr.Args = flags
	var conn *stdio.Conn
	tr.OnStart = func(c *stdio.Conn) { conn = c }
	client := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "v0.0.1"}, nil)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if conn == nil {
		t.Fatal("OnStart was not called")
	}
	return cs, conn
}

// text returns the text of a result's single text block.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("result %+v: want one content block", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result %+v: want text", res)
	}
	return tc.Text
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// alive reports whether pid is a process (zombies included).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// A go-sdk client over Transport: it connects, lists tools, calls one, and
// closing the session ends the server process.
func TestTransportWithSDKClient(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	obs := &recorder{}
	cs, conn := connect(t, ctx, &stdio.Transport{Observer: obs})

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "echo" }) {
		t.Fatalf("tools/list: no echo among %d tools", len(tools.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil || res.IsError {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if got := text(t, res); got != "over stdio" {
		t.Errorf("echo: %q", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "pid"})
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	pid, err := strconv.Atoi(text(t, res))
	if err != nil || !alive(pid) {
		t.Fatalf("pid %q (%v): want the running server's", text(t, res), err)
	}
	if sent, received := obs.counts(); sent < 4 || received < 4 {
		t.Errorf("the observer saw %d messages sent and %d received; want the handshake and three calls each way", sent, received)
	}

	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	// Close waits for the process to be reaped: it is gone at once.
	if alive(pid) {
		t.Errorf("server process %d still exists after Close", pid)
	}
	if conn.ExitedAlone() {
		t.Error("ExitedAlone: true, want false: the client closed it")
	}
}

// A server that dies is reported with its exit status, its last stderr
// lines, and as having exited by itself.
func TestTransportServerCrash(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	cs, conn := connect(t, ctx, &stdio.Transport{StderrLines: 3}, "-stderr", "10")
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crash"}); err == nil {
		t.Fatal("crash: no error")
	}
	_ = cs.Wait()
	var ee *stdio.ExitError
	if err := conn.ReadError(); !errors.As(err, &ee) || ee.ExitCode != testserver.CrashExitCode || !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Fatalf("ReadError: %v, want an *ExitError with status %d wrapping mcp.ErrConnectionClosed", err, testserver.CrashExitCode)
	}
	stderr := conn.Stderr()
	if len(stderr) != 3 || stderr[2] != testserver.CrashMessage {
		t.Errorf("stderr tail %q: want 3 lines ending with %q", stderr, testserver.CrashMessage)
	}
	if !conn.ExitedAlone() {
		t.Error("ExitedAlone: false, want true")
	}
}

// Lines on stdout that are not JSON are skipped and reported; the session
// goes on.
func TestTransportStrayLines(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var mu sync.Mutex
	var seen []string
	tr := &stdio.Transport{OnSkip: func(s stdio.Skip) {
		mu.Lock()
		defer mu.Unlock()
		if s.Err == nil && s.Suppressed == 0 {
			seen = append(seen, s.Line)
		}
	}}
	cs, conn := connect(t, ctx, tr, "-pollute")
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || text(t, res) != "still here" {
		t.Fatalf("echo after a banner: %v %+v", err, res)
	}
	stray := conn.StrayLines()
	if len(stray) < 2 || stray[0] != testserver.PolluteBanner {
		t.Errorf("StrayLines %q: want the banner at start and before the call", stray)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, stray) {
		t.Errorf("OnSkip saw %q, StrayLines %q", seen, stray)
	}
}
