package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func pidOf(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	pid, err := strconv.Atoi(texts(res))
	if err != nil {
		t.Fatalf("pid: %q", texts(res))
	}
	return pid
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestStdioChildSharedRestartedNeverOrphaned: one stdio child serves every
// client; when it dies its tools leave the list (clients are told), it is
// started again and its tools come back; closing the gateway stops it.
func TestStdioChildSharedRestartedNeverOrphaned(t *testing.T) {
	bin := testserver.Build(t)
	ev := newEvents()
	g, url := startGateway(t, []Server{{Name: "kid", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy"}}}},
		&Options{OnEvent: ev.add})
	var changes atomic.Int32
	listChanged := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) }}
	a := connect(t, url, v1125, listChanged)
	b := connect(t, url, v0618, nil)
	c := connect(t, url, v0728, nil)
	pid := pidOf(t, a)
	if pb, pc := pidOf(t, b), pidOf(t, c); pb != pid || pc != pid {
		t.Fatalf("three clients reached processes %d, %d, %d: want one shared child", pid, pb, pc)
	}

	_, err := a.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "crash", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("crash: no error")
	}
	ev.waitFor(t, "kid down", func(e Event) bool { return e.Kind == ServerDown && e.Server == "kid" })
	deadline := time.Now().Add(20 * time.Second)
	for {
		ups := 0
		ev.mu.Lock()
		for _, e := range ev.all {
			if e.Kind == ServerUp && e.Server == "kid" {
				ups++
			}
		}
		ev.mu.Unlock()
		if ups >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kid did not come back: %v", ev.all)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if changes.Load() == 0 {
		t.Error("the client was not told that the tools changed")
	}
	pid2 := pidOf(t, b)
	if pid2 == pid {
		t.Fatalf("the same pid %d after a crash", pid)
	}
	if alive(pid) {
		t.Errorf("the crashed child %d is still alive", pid)
	}
	if st := g.Servers(); len(st) != 1 || !st[0].Up || st[0].Tools == 0 {
		t.Errorf("Servers: %+v", st)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for end := time.Now().Add(10 * time.Second); alive(pid2); {
		if time.Now().After(end) {
			t.Fatalf("child %d outlived the gateway", pid2)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServerThatFailsIsSkipped: a server that cannot start is reported and
// left out; the others serve, and a call of its tool names it.
func TestServerThatFailsIsSkipped(t *testing.T) {
	ev := newEvents()
	good := testserver.New(testserver.Options{})
	_, url := startGateway(t, []Server{
		{Name: "good", Target: good},
		{Name: "broken", Target: mcpadapter.Command{Path: "/nonexistent/mcp-server"}},
	}, &Options{OnEvent: ev.add})
	ev.waitFor(t, "broken down", func(e Event) bool { return e.Kind == ServerDown && e.Server == "broken" })
	cs := connect(t, url, v1125, nil)
	names := toolNames(t, cs)
	if !contains(names, "good_echo") || len(names) == 0 {
		t.Fatalf("tools: %v", names)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "broken_") {
			t.Errorf("a tool of the broken server is listed: %s", n)
		}
	}
}

// TestShutdownGraceful: a call in flight finishes; a call made after
// Shutdown began is refused with an error that says so.
func TestShutdownGraceful(t *testing.T) {
	g, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}, nil)
	cs := connect(t, url, v1125, nil)
	done := make(chan error, 1)
	var slow *mcp.CallToolResult
	go func() {
		var err error
		slow, err = cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600}})
		done <- err
	}()
	for g.inflightCount() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	shut := make(chan error, 1)
	go func() { shut <- g.Shutdown(testCtx(t, 10*time.Second)) }()
	for !g.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	status, body := post(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "shutting down") || !strings.Contains(body, strconv.Itoa(CodeShuttingDown)) {
		t.Errorf("a client that came during the shutdown: %d %s", status, body)
	}
	if err := <-done; err != nil || texts(slow) != "slept 600ms" {
		t.Errorf("the call in flight: %q, %v", texts(slow), err)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// TestSessionCap: a session with MaxCallsPerSession calls in flight gets
// an error for one more, naming the cap; another session is not held back.
func TestSessionCap(t *testing.T) {
	_, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}, &Options{MaxCallsPerSession: 1})
	a := connect(t, url, v1125, nil)
	b := connect(t, url, v1125, nil)
	slowCtx, stop := context.WithCancel(testCtx(t, 60*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := a.CallTool(slowCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 30000}})
		done <- err
	}()
	var err error
	for deadline := time.Now().Add(20 * time.Second); err == nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		_, err = a.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeTooManyCalls || !strings.Contains(we.Message, "MaxCallsPerSession") {
		t.Fatalf("second call of a capped session: %v", err)
	}
	if res, err := b.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "b"}}); err != nil || texts(res) != "b" {
		t.Errorf("another session: %q, %v", texts(res), err)
	}
	stop()
	if err := <-done; err == nil {
		t.Error("the slow call, cancelled, succeeded")
	}
}

// TestQuestionsReachTheirOwnClient: two handshake-era sessions and a
// 2026-07-28 client call a tool that asks a question about their own
// argument, all at once, on one shared handshake-era server: each client
// is asked only its own question.
func TestQuestionsReachTheirOwnClient(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, nil)
	var wg sync.WaitGroup
	for i, v := range []string{v1125, v0618, v0728, v1125} {
		date := "day-" + strconv.Itoa(i)
		var got []string
		var mu sync.Mutex
		cs := connect(t, url, v, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			got = append(got, r.Params.Message)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // overlap the calls
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": i + 1}}, nil
		}})
		wg.Go(func() {
			for range 3 {
				res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": date}})
				if err != nil {
					t.Errorf("%s: %v", date, err)
					return
				}
				if want := "Booked " + strconv.Itoa(i+1) + " guests"; !strings.HasPrefix(texts(res), want) || !strings.HasSuffix(texts(res), date) {
					t.Errorf("%s got %q", date, texts(res))
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, q := range got {
				if !strings.Contains(q, date) {
					t.Errorf("client of %s was asked %q", date, q)
				}
			}
		})
	}
	wg.Wait()
}

// TestCallTimeoutRestartsOnProgress: with CallTimeout, a call that keeps
// reporting progress runs past it; one that goes silent ends with an
// error naming the tool, the server and the timeout.
func TestCallTimeoutRestartsOnProgress(t *testing.T) {
	_, url := startGateway(t, []Server{{Name: "s", Target: testserver.New(testserver.Options{})}}, &Options{CallTimeout: 300 * time.Millisecond})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 20*time.Second)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != CodeTimeout || !strings.Contains(we.Message, `"slow"`) || !strings.Contains(we.Message, "300ms") {
		t.Fatalf("silent call: %v", err)
	}
	// The progress tool reports a step every 10ms: 60 steps run twice
	// as long as the timeout.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 60}})
	if err != nil || texts(res) != "done" {
		t.Fatalf("call with progress: %q, %v", texts(res), err)
	}
}
