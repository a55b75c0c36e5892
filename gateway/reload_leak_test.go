package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// removedServer starts a gateway with a handshake-era stdio server "s"
// (the test server's binary with args) and an HTTP server "other", and
// returns it, its endpoint, the binary and the servers Reload keeps.
func removedServer(t *testing.T, opts *Options, args ...string) (*Gateway, string, string, []Server) {
	t.Helper()
	bin := testserver.Build(t)
	other := Server{Name: "other", Target: testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy})).URL}
	s := Server{Name: "s", Target: mcpadapter.Command{Path: bin, Args: append([]string{"-era", "legacy"}, args...)}}
	if opts == nil {
		opts = &Options{}
	}
	if opts.Client == nil {
		// A process told to stop is killed at once.
		opts.Client = &mcpadapter.ClientOptions{StopTimeout: 100 * time.Millisecond}
	}
	g, url := startGateway(t, []Server{s, other}, opts)
	if u := g.servers()[0]; u.name != "s" {
		t.Fatalf("the first server is %q", u.name)
	}
	return g, url, bin, []Server{other}
}

// noChildren waits (a few seconds) for no process of bin to be left.
func noChildren(t *testing.T, bin, what string) {
	t.Helper()
	var kids []int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if kids = children(t, bin); len(kids) == 0 {
			return
		}
	}
	t.Fatalf("%s: processes of the removed server left: %v", what, kids)
}

// TestReloadRemovedServerTaskCallLeavesNoProcess: a 2025-11-25 client's
// task calls a handshake-era stdio server without tasks (the gateway runs
// the call itself) and waits for the shared connection, which bob's call
// (a client that can be asked) holds; Reload removes the server. The
// task's call does not start the server's process again once its
// connection is closed, and no process of the removed server is left.
func TestReloadRemovedServerTaskCallLeavesNoProcess(t *testing.T) {
	g, url, bin, keep := removedServer(t, &Options{MaxExtraConnections: -1})
	bob := connect(t, url, v1125, declining)
	alice := newRawRPC(t, url, v1125, "alice", `{}`)
	ctx := testCtx(t, 60*time.Second)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "s_slow", Arguments: map[string]any{"ms": 20000}})
		bobDone <- err
	}()
	u := g.servers()[0]
	waitUntil(t, "bob's call in flight on the shared connection", func() bool { return !u.lane.idle() })
	id := alice.startTask("s_slow", `{"ms":1500}`)
	waitUntil(t, "alice's task's call waiting for the shared connection", func() bool {
		u.lane.mu.Lock()
		defer u.lane.mu.Unlock()
		return len(u.lane.queue) == 1
	})
	if err := g.Reload(ctx, keep); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if err := <-bobDone; err == nil {
		t.Errorf("bob's call to the removed server succeeded")
	}
	res := alice.call("tasks/get", `{"taskId":"`+id+`"}`)
	t.Logf("alice's task after the server was removed: %v", res)
	// A process started for the task's call answers it after 1.5 s, then
	// lives on.
	time.Sleep(2 * time.Second)
	noChildren(t, bin, "after alice's task")
}

// TestReloadRemovedServerWaitingCallNotSent: alice's tool call and read
// (clients that can be asked) wait for the shared connection of a
// handshake-era stdio server, which bob's call holds, with no extra
// connection allowed; Reload removes the server. Neither is sent once the
// connection is closed (they fail: the server is gone), and no process
// of the removed server is started for them.
func TestReloadRemovedServerWaitingCallNotSent(t *testing.T) {
	g, url, bin, keep := removedServer(t, &Options{MaxExtraConnections: -1}, "-resources")
	bob := connect(t, url, v1125, declining)
	alice := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "s_slow", Arguments: map[string]any{"ms": 20000}})
		bobDone <- err
	}()
	u := g.servers()[0]
	waitUntil(t, "bob's call in flight on the shared connection", func() bool { return !u.lane.idle() })
	shared := children(t, bin)
	callDone := make(chan string, 1)
	go func() {
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "s_pid", Arguments: map[string]any{}})
		if err != nil {
			callDone <- "error: " + err.Error()
			return
		}
		callDone <- texts(res)
	}()
	readDone := make(chan error, 1)
	go func() {
		_, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA})
		readDone <- err
	}()
	waitUntil(t, "alice's call and read waiting for the shared connection", func() bool {
		u.lane.mu.Lock()
		defer u.lane.mu.Unlock()
		return len(u.lane.queue) == 2
	})
	if err := g.Reload(ctx, keep); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	<-bobDone
	if got := <-callDone; !strings.HasPrefix(got, "error: ") {
		t.Errorf("alice's call waiting when the server was removed ran, in process %s (the shared one was %v)", got, shared)
	} else {
		t.Logf("alice's call: %s", got)
	}
	if err := <-readDone; err == nil {
		t.Errorf("alice's read waiting when the server was removed succeeded")
	} else {
		t.Logf("alice's read: %v", err)
	}
	noChildren(t, bin, "after alice's call and read")
}

// TestReloadRemovedUnderLoadLeavesNoProcess: clients of both eras, some
// that can be asked and some not, keep calling tools (plain and as
// tasks), reading, subscribing, getting a prompt and asking for
// completions of a handshake-era stdio server (extra connections
// allowed) while Reload removes it, at a different moment in each round.
// After each round no process of the removed server is left; after
// Gateway.Close no goroutine of the gateway is.
func TestReloadRemovedUnderLoadLeavesNoProcess(t *testing.T) {
	base := settleGoroutines(runtime.NumGoroutine())
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			g, url, bin, keep := removedServer(t, &Options{ParkTimeout: 5 * time.Second}, "-resources", "-read-delay", "100ms")
			stop := load(t, url)
			time.Sleep(time.Duration(100+150*round) * time.Millisecond)
			if err := g.Reload(testCtx(t, 30*time.Second), keep); err != nil {
				t.Fatalf("Reload: %v", err)
			}
			time.Sleep(300 * time.Millisecond) // requests that were waiting go on
			t.Logf("%d requests answered", stop())
			noChildren(t, bin, "after Reload")
			if err := g.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			noChildren(t, bin, "after Close")
		})
	}
	http.DefaultClient.CloseIdleConnections()
	if got := settleGoroutines(base); got > base {
		t.Errorf("%d goroutines after the gateways closed, %d before", got, base)
	}
}

// TestCloseUnderLoadLeavesNoProcess: the load of
// TestReloadRemovedUnderLoadLeavesNoProcess, with Gateway.Close at a
// different moment in each round (in two rounds racing a Reload that
// removes the server): Close returns, no process of the server is left,
// and after the rounds no goroutine of the gateways.
func TestCloseUnderLoadLeavesNoProcess(t *testing.T) {
	base := settleGoroutines(runtime.NumGoroutine())
	for round := range 4 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			g, url, bin, keep := removedServer(t, &Options{ParkTimeout: 5 * time.Second}, "-resources", "-read-delay", "100ms")
			stop := load(t, url)
			time.Sleep(time.Duration(100+150*round) * time.Millisecond)
			var wg sync.WaitGroup
			if round%2 == 1 {
				wg.Go(func() { _ = g.Reload(testCtx(t, 30*time.Second), keep) })
			}
			closed := make(chan error, 1)
			go func() { closed <- g.Close() }()
			select {
			case err := <-closed:
				if err != nil {
					t.Logf("Close: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Close still under way after 20 s")
			}
			wg.Wait()
			t.Logf("%d requests answered", stop())
			noChildren(t, bin, "after Close")
		})
	}
	http.DefaultClient.CloseIdleConnections()
	if got := settleGoroutines(base); got > base {
		t.Errorf("%d goroutines after the gateways closed, %d before", got, base)
	}
}

// load starts clients of both eras, some that can be asked and some not,
// that keep calling tools of server "s" (plain and as tasks), reading,
// subscribing, getting a prompt and asking for completions through the
// gateway at url; stop ends them and returns how many requests were
// answered.
func load(t *testing.T, url string) (stop func() int32) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t, 60*time.Second))
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i, opts := range []*mcp.ClientOptions{declining, nil, declining, nil} {
		v := v1125
		if i%2 == 1 {
			v = v0728
		}
		cs := connect(t, url, v, opts)
		wg.Go(func() {
			for j := 0; ctx.Err() == nil; j++ {
				var err error
				switch j % 6 {
				case 0:
					_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_slow", Arguments: map[string]any{"ms": 30 + 20*i}})
				case 1:
					_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA})
				case 2:
					_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "s_greet"})
				case 3:
					_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "s_greet"}, Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"}})
				case 4:
					err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: testserver.ResourceB})
				case 5:
					_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"text": "x"}})
				}
				if err == nil {
					ok.Add(1)
				}
			}
		})
	}
	tasks := newRawRPC(t, url, v1125, "tasks", `{}`)
	wg.Go(func() {
		for ctx.Err() == nil {
			postTask(ctx, tasks, `{"name":"s_slow","arguments":{"ms":80},"task":{"ttl":60000}}`)
			time.Sleep(10 * time.Millisecond)
		}
	})
	return func() int32 {
		cancel()
		wg.Wait()
		return ok.Load()
	}
}

// postTask sends a tools/call asking for a task as r's session, and
// reads its answer; it gives up when ctx ends.
func postTask(ctx context.Context, r *rawRPC, params string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", r.session)
	req.Header.Set("Mcp-Protocol-Version", r.v)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}
