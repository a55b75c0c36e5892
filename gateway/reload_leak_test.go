package gateway

import (
	"strings"
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
