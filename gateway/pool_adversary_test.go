package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPoolFailedConnectLeavesNoProcess: a stdio server slow to start;
// alice's first call opens an extra connection (bob's call holds the
// shared one) and is cancelled while the process starts, while her second
// call (same session) waits for the same connection. The second call runs
// where it may, and every process it reached is gone after Gateway.Close:
// none is started on a connection the pool has dropped.
func TestPoolFailedConnectLeavesNoProcess(t *testing.T) {
	bin := testserver.Build(t)
	g, url := startGateway(t, []Server{{Name: "s", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-start-delay", "1500ms"}}}},
		&Options{ParkTimeout: time.Minute})
	bob := connect(t, url, v1125, declining)
	alice := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	shared := pidOf(t, bob)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 6000}})
		bobDone <- err
	}()
	u := g.servers()[0]
	waitUntil(t, "bob's call in flight on the shared connection", func() bool { return !u.lane.idle() })
	first, cancel := context.WithCancel(ctx)
	firstDone := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(first, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "first"}})
		firstDone <- err
	}()
	waitUntil(t, "an extra connection opening for alice", func() bool { return u.pool.size() == 1 })
	pidDone := make(chan int, 1)
	go func() {
		res, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "pid", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Logf("alice's second call: %v %q", err, texts(res))
			pidDone <- 0
			return
		}
		pidDone <- atoiOr0(texts(res))
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	<-firstDone
	pid := <-pidDone
	t.Logf("alice's second call reached process %d (shared %d)", pid, shared)
	if err := <-bobDone; err != nil {
		t.Errorf("bob's call: %v", err)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, p := range []int{shared, pid} {
		if p == 0 {
			continue
		}
		for end := time.Now().Add(10 * time.Second); alive(p); {
			if time.Now().After(end) {
				t.Fatalf("server process %d outlived the gateway", p)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func atoiOr0(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestPoolCallCapCountsTasks: MaxCallsPerServer (2) caps the tool calls
// in flight to a handshake-era server across its connections, a task's
// call on the shared connection included: with alice's task calling slow
// there, bob's and carol's slow calls (clients that can be asked, run on
// extra connections) reach the server one at a time beside it.
func TestPoolCallCapCountsTasks(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{MaxCallsPerServer: 2})
	alice := newRawRPC(t, url, v1125, "alice", `{}`)
	alice.startTask("plain_slow", `{"ms":2000}`)
	ctx := testCtx(t, 30*time.Second)
	if err := b.plain.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
		t.Fatal("the task's call never reached the server")
	}
	done := make(chan error, 2)
	for _, who := range []string{"bob", "carol"} {
		cs := connectAs(t, url, who, v1125, declining)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "plain_slow", Arguments: map[string]any{"ms": 1500}})
			done <- err
		}()
	}
	time.Sleep(700 * time.Millisecond)
	if n := b.plain.Calls("slow"); n > 2 {
		t.Errorf("%d tool calls reached the server at once, want at most MaxCallsPerServer (2)", n)
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("a call: %v", err)
		}
	}
}
