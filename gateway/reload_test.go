package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serversOf parses an mcpServers config document into the gateway's servers.
func serversOf(t *testing.T, doc string) []Server {
	t.Helper()
	cfg, err := mcpadapter.ParseConfig([]byte(doc))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return FromConfig(cfg)
}

// TestReloadWhileClientsStayConnected: Reload adds, removes and changes
// servers while clients of both eras stay connected: they are told the
// tool list changed, see the new servers' tools and no longer the removed
// one's; a server whose entry is the same keeps its connection, one whose
// entry changed is connected again with the new entry.
func TestReloadWhileClientsStayConnected(t *testing.T) {
	srvA, stA := testserver.NewWithState(testserver.Options{Name: "a", Era: testserver.Legacy})
	srvB, stB := testserver.NewWithState(testserver.Options{Name: "b", Era: testserver.Legacy})
	srvC, _ := testserver.NewWithState(testserver.Options{Name: "c"})
	a := testserver.StartStreamable(t, srvA)
	b := testserver.StartStreamable(t, srvB)
	c := testserver.StartStreamable(t, srvC, testserver.Stateless())
	var mu sync.Mutex
	var removed []string
	g, url := startGateway(t, serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}, "b": {"url": %q}}}`, a.URL, b.URL)), &Options{
		Prefix: mcpadapter.PrefixAlways,
		OnEvent: func(e Event) {
			if e.Kind == ServerRemoved {
				mu.Lock()
				removed = append(removed, e.Server)
				mu.Unlock()
			}
		},
	})
	var changes atomic.Int32
	old := connect(t, url, v1125, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changes.Add(1) }})
	modern := connect(t, url, v0728, nil)
	ctx := testCtx(t, 60*time.Second)
	if names := toolNames(t, old); !contains(names, "a_echo") || !contains(names, "b_echo") {
		t.Fatalf("tools at the start: %v", names)
	}

	// b goes, c comes, a stays as it is.
	if err := g.Reload(ctx, serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}, "c": {"url": %q}}}`, a.URL, c.URL))); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	waitUntil(t, "the handshake-era client told of the change", func() bool { return changes.Load() > 0 })
	for _, cs := range []*mcp.ClientSession{old, modern} {
		names := toolNames(t, cs)
		if !contains(names, "a_echo") || !contains(names, "c_echo") || contains(names, "b_echo") {
			t.Fatalf("tools after the reload: %v", names)
		}
	}
	if res, err := modern.CallTool(ctx, &mcp.CallToolParams{Name: "c_echo", Arguments: map[string]any{"text": "new"}}); err != nil || texts(res) != "new" {
		t.Fatalf("the new server's tool: %v %q", err, texts(res))
	}
	if _, err := old.CallTool(ctx, &mcp.CallToolParams{Name: "b_echo", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("the removed server's tool: %v", err)
	}
	if n := stA.Requests("initialize"); n != 1 {
		t.Errorf("the unchanged server was initialized %d times, want once", n)
	}
	bCalls := stB.Requests("tools/call")
	mu.Lock()
	if len(removed) != 1 || removed[0] != "b" {
		t.Errorf("removed events: %v", removed)
	}
	mu.Unlock()

	// a's entry changes: it is connected again, with its new header.
	if err := g.Reload(ctx, serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q, "headers": {"X-Stage": "two"}}, "c": {"url": %q}}}`, a.URL, c.URL))); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if n := stA.Requests("initialize"); n != 2 {
		t.Errorf("the changed server was initialized %d times, want twice", n)
	}
	res, err := old.CallTool(ctx, &mcp.CallToolParams{Name: "a_headers", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(strings.ToLower(texts(res)), `"x-stage":["two"]`) {
		t.Fatalf("the changed server's header: %v %s", err, texts(res))
	}
	if stB.Requests("tools/call") != bCalls {
		t.Errorf("the removed server got calls after it was removed")
	}
}

// TestReloadRefusedKeepsServing: a new config with several problems is
// refused whole, naming each, and the servers keep serving as before.
func TestReloadRefusedKeepsServing(t *testing.T) {
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "a"}), testserver.Stateless())
	g, url := startGateway(t, serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}}}`, a.URL)), &Options{Prefix: mcpadapter.PrefixAlways})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 30*time.Second)
	bad := append(serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}, "z": {"url": %q}}}`, a.URL, a.URL)),
		Server{Name: "a", Target: a.URL},
		Server{Name: "bad name!", Target: a.URL},
	)
	err := g.Reload(ctx, bad)
	if err == nil {
		t.Fatal("a config with two servers named a and a bad name was taken")
	}
	for _, want := range []string{`two servers are named "a"`, "bad name!", "stay as they were"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if err := g.Reload(ctx, nil); err == nil {
		t.Error("an empty config was taken")
	}
	names := toolNames(t, cs)
	if !contains(names, "a_echo") || contains(names, "z_echo") {
		t.Fatalf("tools after a refused reload: %v", names)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a_echo", Arguments: map[string]any{"text": "still"}}); err != nil || texts(res) != "still" {
		t.Fatalf("a call after a refused reload: %v %q", err, texts(res))
	}
}

// TestReloadStdioChildren: a stdio server that stays in the config keeps
// its process; one taken out is stopped (no orphan); one added is started.
func TestReloadStdioChildren(t *testing.T) {
	bin := testserver.Build(t)
	kid := func(name string) Server {
		return Server{Name: name, Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-name", name}}}
	}
	g, url := startGateway(t, []Server{kid("stay"), kid("go")}, &Options{Prefix: mcpadapter.PrefixAlways})
	cs := connect(t, url, v1125, nil)
	pidCall := func(tool string) int {
		t.Helper()
		res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		pid, err := strconv.Atoi(texts(res))
		if err != nil {
			t.Fatalf("%s: %q", tool, texts(res))
		}
		return pid
	}
	stay, gone := pidCall("stay_pid"), pidCall("go_pid")
	if err := g.Reload(testCtx(t, 30*time.Second), []Server{kid("stay"), kid("new")}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := pidCall("stay_pid"); got != stay {
		t.Errorf("the server that stayed runs as %d, was %d: it was started again", got, stay)
	}
	if fresh := pidCall("new_pid"); fresh == stay || fresh == gone || !alive(fresh) {
		t.Errorf("the added server's process %d", fresh)
	}
	for end := time.Now().Add(10 * time.Second); alive(gone); {
		if time.Now().After(end) {
			t.Fatalf("the removed server's process %d is still alive", gone)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReloadSecretsNeverShown: the secrets of a server that Reload adds
// are blanked out of what the gateway shows, as those of the servers it
// started with.
func TestReloadSecretsNeverShown(t *testing.T) {
	a := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "a"}), testserver.Stateless())
	ev := newEvents()
	g, _ := startGateway(t, serversOf(t, fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}}}`, a.URL)), &Options{OnEvent: ev.add})
	const secret = "s3cret-header-value-0042"
	// A server that refuses initialize, saying the key it was sent.
	tattle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"bad key %s"}}`, req.ID, r.Header.Get("X-Api-Key"))
	}))
	t.Cleanup(tattle.Close)
	doc := fmt.Sprintf(`{"mcpServers": {"a": {"url": %q}, "d": {"url": %q, "headers": {"X-Api-Key": %q}}}}`, a.URL, tattle.URL, secret)
	if err := g.Reload(testCtx(t, 30*time.Second), serversOf(t, doc)); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	down := ev.waitFor(t, "d down", func(e Event) bool { return e.Kind == ServerDown && e.Server == "d" })
	if down.Err == nil || strings.Contains(down.Err.Error(), secret) {
		t.Fatalf("the event of the added server: %v", down.Err)
	}
	for _, st := range g.Servers() {
		if st.Err != nil && strings.Contains(st.Err.Error(), secret) {
			t.Fatalf("Servers shows the secret: %v", st.Err)
		}
	}
}

// TestReloadRemovedServerReadLeavesNoProcess: Reload removes a
// handshake-era stdio server while a resource read is in flight on its
// shared connection; closing the connection ends the read, which the
// gateway does not send again to the removed server (that would start its
// process anew, with nobody left to stop it), and no process of the
// removed server is left.
func TestReloadRemovedServerReadLeavesNoProcess(t *testing.T) {
	bin := testserver.Build(t)
	other := Server{Name: "other", Target: testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy})).URL}
	s := Server{Name: "s", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-resources", "-read-delay", "2s"}}}
	g, url := startGateway(t, []Server{s, other}, &Options{Client: &mcpadapter.ClientOptions{StopTimeout: 100 * time.Millisecond}})
	alice := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	readDone := make(chan error, 1)
	go func() {
		_, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA})
		readDone <- err
	}()
	u := g.servers()[0]
	waitUntil(t, "alice's read in flight", func() bool { return !u.lane.idle() })
	time.Sleep(300 * time.Millisecond) // the read reaches the process
	if err := g.Reload(ctx, []Server{other}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if err := <-readDone; err == nil {
		t.Errorf("alice's read of the removed server succeeded")
	} else {
		t.Logf("alice's read after the server was removed: %v", err)
	}
	// A process started for the read again would answer it after 2 s and
	// then live on.
	time.Sleep(2500 * time.Millisecond)
	if kids := children(t, bin); len(kids) != 0 {
		t.Fatalf("processes of the removed server left: %v", kids)
	}
}
