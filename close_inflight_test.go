package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// closeTransports are the transports the Close tests run over.
var closeTransports = []string{"stdio", "streamable", "sse"}

// TestCloseTellsServerOfCallsInFlight closes a Client while calls of a
// handshake-era server run, over stdio, streamable HTTP and SSE, on the
// fast path and on go-sdk's path (ClientOptions.DisableFastPath, and
// every call of a build without the fast path): each call returns, and
// the server is told of every one, once, within the close's grace: over
// HTTP before Close returns (its notice's POST was answered), over stdio
// before stdin is closed (the server reads it before its EOF). The
// handlers of the in-process HTTP servers end on it.
func TestCloseTellsServerOfCallsInFlight(t *testing.T) {
	t.Parallel()
	for _, tr := range closeTransports {
		for _, sdkPath := range []bool{false, true} {
			name := tr + "/fast path"
			if sdkPath {
				name = tr + "/DisableFastPath"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				for round := range 3 {
					closeInFlight(t, newCloseServer(t, tr), sdkPath, 8, round)
				}
			})
		}
	}
}

// closeInFlight runs one round: n slow calls in flight on srv, a new
// server, then Close.
func closeInFlight(t *testing.T, srv *closeServer, sdkPath bool, n, round int) {
	t.Helper()
	ctx := testCtx(t)
	opts := srv.options()
	opts.DisableFastPath = sdkPath
	c, err := mcpadapter.NewClient(srv.target, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	before := mcpadapter.CallPaths(c)
	ended := srv.startSlowCalls(ctx, c, n)
	srv.waitCalls(t, n, fmt.Sprintf("round %d", round))
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("round %d: Close: %v", round, err)
	}
	took := time.Since(start)
	toldAtClose := srv.told()
	for range n {
		select {
		case err := <-ended:
			if err == nil {
				t.Errorf("round %d: a call in flight at Close succeeded", round)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a call in flight at Close did not return", round)
		}
	}
	// Each side says which path it took.
	wantPath := engine.PathSDK
	if mcpadapter.FastPathBuilt && !sdkPath && srv.transport != "sse" {
		wantPath = engine.PathFast
	}
	if got := mcpadapter.CallPaths(c).Sub(before); got[wantPath] != int64(n) {
		t.Fatalf("round %d: the calls took the paths %v, want %d on %s", round, got, n, wantPath)
	}
	if srv.process == nil && toldAtClose != n {
		t.Errorf("round %d: when Close returned (after %v), the server had been told of %d of the %d calls in flight", round, took, toldAtClose, n)
	}
	if took > closeGrace {
		t.Errorf("round %d: Close took %v, past its grace (%v), for a server that reads", round, took, closeGrace)
	}
	told := srv.waitTold(n)
	if told != n {
		t.Errorf("round %d: the server was told of %d of the %d calls in flight at Close", round, told, n)
	}
	if srv.state != nil {
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := srv.state.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() == n })
		cancel()
		if err != nil {
			t.Errorf("round %d: %d of the %d handlers in flight at Close ended on their cancellation", round, srv.state.Cancellations(), n)
		}
	}
	time.Sleep(50 * time.Millisecond) // a notice sent twice would arrive by now
	if again := srv.told(); again != told {
		t.Errorf("round %d: the server got %d notices for %d calls", round, again, n)
	}
}

// closeGrace is the grace of the Close tests' clients (StopTimeout).
const closeGrace = 2 * time.Second

// startSlowCalls starts n calls of the slow tool on c, each a minute
// long unless slowMs says; each one's error arrives on the channel
// returned, which has room for 1000.
func (s *closeServer) startSlowCalls(ctx context.Context, c *mcpadapter.Client, n int) chan error {
	ms := s.slowMs
	if ms == 0 {
		ms = 60_000
	}
	args := json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms))
	ended := make(chan error, 1000)
	for range n {
		go func() {
			_, err := c.CallTool(ctx, "slow", args, nil)
			ended <- err
		}()
	}
	return ended
}

// closeServer is a handshake-era test server over one transport, and what
// it got: an in-process server over HTTP (state, http), or an
// mcptestserver process over stdio run with -log-methods (process).
type closeServer struct {
	target    any
	transport string
	slowMs    int // how long a slow call lasts; 0: a minute
	state     *testserver.State
	http      *testserver.HTTPServer
	process   *stdioMethods
}

// newCloseServer starts a handshake-era server over tr.
func newCloseServer(t *testing.T, tr string, flags ...string) *closeServer {
	t.Helper()
	if tr == "stdio" {
		m := &stdioMethods{}
		return &closeServer{target: stdioServer(t, append([]string{"-era", "legacy", "-log-methods"}, flags...)...), transport: tr, process: m}
	}
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	var hs *testserver.HTTPServer
	if tr == "sse" {
		hs = testserver.StartSSE(t, srv)
	} else {
		hs = testserver.StartStreamable(t, srv)
	}
	return &closeServer{target: hs.URL, transport: tr, state: state, http: hs}
}

// options returns the client options the server's tests use.
func (s *closeServer) options() *mcpadapter.ClientOptions {
	opts := &mcpadapter.ClientOptions{StopTimeout: closeGrace}
	if s.process != nil {
		opts.StderrHandler = s.process.line
	}
	return opts
}

// calls returns how many tools/calls the server got.
func (s *closeServer) calls() int {
	if s.process != nil {
		return s.process.count("tools/call")
	}
	return s.state.Calls("slow")
}

// told returns how many notifications/cancelled the server got.
func (s *closeServer) told() int {
	if s.process != nil {
		return s.process.count("notifications/cancelled")
	}
	n := 0
	for _, r := range s.http.Requests() {
		if r.RPCMethod == "notifications/cancelled" {
			n++
		}
	}
	return n
}

// waitCalls waits up to 10 s for the server to have n calls.
func (s *closeServer) waitCalls(t *testing.T, n int, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.calls() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of the %d calls reached the server", what, s.calls(), n)
		}
	}
}

// waitTold waits up to 5 s (a process's stderr lines are read apart
// from its stdout) for the server to have n notices, and returns how
// many it has.
func (s *closeServer) waitTold(n int) int {
	for deadline := time.Now().Add(5 * time.Second); s.told() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return s.told()
}

// stdioMethods counts the methods an mcptestserver run with -log-methods
// read ("recv PID METHOD" on its stderr), and keeps the pid.
type stdioMethods struct {
	mu   sync.Mutex
	pid  string
	seen map[string]int
	on   func(method, pid string) // if set, called with each message read
}

func (m *stdioMethods) line(_, line string) {
	rest, ok := strings.CutPrefix(line, testserver.RecvPrefix)
	pid, method, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 {
		return
	}
	m.mu.Lock()
	if m.seen == nil {
		m.seen = map[string]int{}
	}
	m.seen[method]++
	m.pid = pid
	on := m.on
	m.mu.Unlock()
	if on != nil {
		on(method, pid)
	}
}

func (m *stdioMethods) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen[method]
}

// TestCloseAfterAnsweredRoundCancelled: a call whose server answered its
// round with a question, and whose context ended while the
// ElicitationHandler had it, leaves no notice to wait for (go-sdk sends
// none for a request it got the answer of): the next Close ends at once,
// not after its grace, on the fast path and on go-sdk's.
func TestCloseAfterAnsweredRoundCancelled(t *testing.T) {
	t.Parallel()
	for _, sdkPath := range []bool{false, true} {
		t.Run(pathName(sdkPath), func(t *testing.T) {
			t.Parallel()
			srv := hostileServer(testserver.Modern)
			mcp.AddTool(srv, &mcp.Tool{Name: "ask"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?"}}, RequestState: "s"}, nil, nil
			})
			hs := testserver.StartStreamable(t, srv, testserver.Stateless())
			entered := make(chan struct{}, 1)
			c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{DisableFastPath: sdkPath, StopTimeout: closeGrace,
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					entered <- struct{}{}
					<-ctx.Done()
					return nil, ctx.Err()
				}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(testCtx(t))
			go func() { <-entered; cancel() }()
			if _, err := c.CallTool(ctx, "ask", json.RawMessage(`{}`), nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled while asking: %v, want context.Canceled", err)
			}
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if took := time.Since(start); took > closeGrace/2 {
				t.Errorf("Close took %v: it waited for a notice of a request the server had answered", took)
			}
			for _, r := range hs.Requests() {
				if r.RPCMethod == "notifications/cancelled" {
					t.Errorf("a notice was sent for a request the server had answered")
				}
			}
		})
	}
}
