//lint:file-ignore SA1019 the tests relay a handshake-era server's log messages, deprecated in 2026-07-28 but alive in the handshake era

package gateway

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
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

// children returns the processes whose parent is this one and whose
// command line names bin.
func children(t *testing.T, bin string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	me := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err != nil || ppid != me || state == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cmd, []byte(bin)) {
			out = append(out, pid)
		}
	}
	return out
}

// TestPoolManyAskersBounded: 200 calls at once from a 2026-07-28 client
// that can be asked (each request its own key) to a handshake-era stdio
// server run on the shared process and at most MaxExtraConnections (3)
// more; all complete; after Gateway.Close no process and no goroutine of
// the gateway is left.
func TestPoolManyAskersBounded(t *testing.T) {
	bin := testserver.Build(t)
	base := settleGoroutines(runtime.NumGoroutine())
	g, err := New([]Server{{Name: "s", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy"}}}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 120*time.Second)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	cs := connect(t, ts.URL+"/mcp", v0728, declining)
	stop := make(chan struct{})
	most := make(chan int, 1)
	go func() {
		n := 0
		for {
			n = max(n, len(children(t, bin)))
			select {
			case <-stop:
				most <- n
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range 200 {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": strconv.Itoa(i)}})
			if err != nil || texts(res) != strconv.Itoa(i) {
				if failed.Add(1) < 5 {
					t.Errorf("call %d: %v %q", i, err, texts(res))
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	n := <-most
	t.Logf("200 askable calls at once: at most %d server processes", n)
	if n > 1+DefaultMaxExtraConnections {
		t.Errorf("%d server processes at once, want at most %d", n, 1+DefaultMaxExtraConnections)
	}
	_ = cs.Close()
	ts.Close()
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitUntil(t, "no server process left", func() bool { return len(children(t, bin)) == 0 })
	http.DefaultClient.CloseIdleConnections()
	if got := settleGoroutines(base); got > base {
		t.Errorf("%d goroutines after Gateway.Close, %d before the gateway", got, base)
	}
}

// TestPoolRemovedServerReadLeavesNoProcess: Reload removes a
// handshake-era stdio server while alice's resource read is in flight on
// an extra connection (bob's call holds the shared one); closing the
// connection stops its process, the gateway sends the read again on a new
// one, and once the read ends no process of the removed server is left.
func TestPoolRemovedServerReadLeavesNoProcess(t *testing.T) {
	bin := testserver.Build(t)
	other := Server{Name: "other", Target: testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy})).URL}
	s := Server{Name: "s", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-resources", "-read-delay", "2s"}}}
	// A process told to stop is killed long before its read answers.
	g, url := startGateway(t, []Server{s, other}, &Options{Client: &mcpadapter.ClientOptions{StopTimeout: 100 * time.Millisecond}})
	bob := connect(t, url, v1125, declining)
	alice := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	go func() {
		_, _ = bob.CallTool(ctx, &mcp.CallToolParams{Name: "s_slow", Arguments: map[string]any{"ms": 20000}})
	}()
	u := g.servers()[0]
	if u.name != "s" {
		t.Fatalf("the first server is %q", u.name)
	}
	waitUntil(t, "bob's call in flight on the shared connection", func() bool { return !u.lane.idle() })
	readDone := make(chan error, 1)
	go func() {
		_, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.ResourceA})
		readDone <- err
	}()
	waitUntil(t, "alice's read on an extra connection", func() bool { return len(children(t, bin)) == 2 })
	time.Sleep(300 * time.Millisecond) // the read reaches the extra process
	if err := g.Reload(ctx, []Server{other}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	err := <-readDone
	t.Logf("alice's read after the server was removed: %v", err)
	waitUntil(t, "no process of the removed server left", func() bool { return len(children(t, bin)) == 0 })
}

// TestPoolWaitingCallTakesFreedConnection: with one extra connection,
// alice's call parked on the shared connection and bob's on the extra
// one, carol's call (a client that can be asked) waits; once bob's call
// ends it runs on the connection he left, while alice's is still parked,
// not after alice answers.
func TestPoolWaitingCallTakesFreedConnection(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{MaxExtraConnections: 1, ParkTimeout: time.Minute}, "alice", "bob", "carol")
	alice := connectAs(t, url, "alice", v0728, manualRounds)
	bob := connectAs(t, url, "bob", v0728, manualRounds)
	carol := connectAs(t, url, "carol", v1125, declining)
	ctx := testCtx(t, 30*time.Second)
	parked := make(map[string]*mcp.CallToolResult)
	for who, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": who}})
		if err != nil || !res.NeedsInput() {
			t.Fatalf("%s's first round: %v %+v", who, err, res)
		}
		parked[who] = res
	}
	if n := g.servers()[0].pool.size(); n != 1 {
		t.Fatalf("%d extra connections with two parked calls, want 1", n)
	}
	carolDone := make(chan error, 1)
	go func() {
		res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "carol's"}})
		if err == nil && texts(res) != "carol's" {
			err = fmt.Errorf("result %q", texts(res))
		}
		carolDone <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if _, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "bob"}, RequestState: parked["bob"].RequestState,
		InputResponses: guestsAnswer(parked["bob"], 3)}); err != nil {
		t.Fatalf("bob's answer: %v", err)
	}
	select {
	case err := <-carolDone:
		if err != nil {
			t.Fatalf("carol's call: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("carol's call still waits for alice's parked call with the extra connection free")
	}
	if _, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "alice"}, RequestState: parked["alice"].RequestState,
		InputResponses: guestsAnswer(parked["alice"], 2)}); err != nil {
		t.Fatalf("alice's answer: %v", err)
	}
}

// TestPoolFailingExtraProcessNotRespawned: a stdio server of which only
// one process may run (the others exit at start, as a server holding a
// lock does); while bob's slow call holds the shared process, carol's
// call (a client that can be asked) waits for it, and the gateway tries
// an extra process for her no more often than the pool's pauses let it
// (at once, then after 1 s and 2 s more: three tries in bob's 3 s, each
// of which may start the server twice, as a connect that sees the
// process exit tries once more pinned to the handshake era), not in a
// loop.
func TestPoolFailingExtraProcessNotRespawned(t *testing.T) {
	bin := testserver.Build(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "one.sh")
	body := "#!/bin/sh\necho x >> " + dir + "/starts\nif mkdir " + dir + "/lock 2>/dev/null; then exec " + bin + " -era legacy; fi\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	_, url := startGateway(t, []Server{{Name: "s", Target: mcpadapter.Command{Path: script}}}, &Options{})
	bob := connect(t, url, v1125, declining)
	carol := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
		bobDone <- err
	}()
	time.Sleep(300 * time.Millisecond)
	res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "carol's"}})
	if err != nil || texts(res) != "carol's" {
		t.Fatalf("carol's call: %v %q", err, texts(res))
	}
	if err := <-bobDone; err != nil {
		t.Fatalf("bob's call: %v", err)
	}
	starts, _ := os.ReadFile(filepath.Join(dir, "starts"))
	n := bytes.Count(starts, []byte("x"))
	t.Logf("processes started: %d", n)
	if n > 7 {
		t.Errorf("%d processes started for one shared process and one waiting call, want at most 7", n)
	}
}

// TestPoolLateQuestionOfCancelledCall: alice cancels her call to a
// handshake-era server, which asks its question for that call a moment
// after (it was under way when the cancel came); bob's call, started
// once the gateway let go of alice's, is never asked alice's question,
// with or without extra connections.
func TestPoolLateQuestionOfCancelledCall(t *testing.T) {
	for _, extra := range []int{-1, 0} {
		t.Run(fmt.Sprintf("extra=%d", extra), func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "late"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
			asked := make(chan error, 1)
			schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
			srv.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				time.Sleep(200 * time.Millisecond)
				_, err := req.Session.Elicit(context.Background(), &mcp.ElicitParams{Message: "alice's question", RequestedSchema: schema})
				asked <- err
				return nil, ctx.Err()
			})
			srv.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				time.Sleep(600 * time.Millisecond)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited"}}}, nil
			})
			up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
			t.Cleanup(up.Close)
			_, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{MaxExtraConnections: extra})
			var mu sync.Mutex
			var bobAsked []string
			alice := connect(t, url, v1125, declining)
			bob := connect(t, url, v1125, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				bobAsked = append(bobAsked, req.Params.Message)
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "bob's answer"}}, nil
			}})
			ctx := testCtx(t, 30*time.Second)
			actx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err := alice.CallTool(actx, &mcp.CallToolParams{Name: "late", Arguments: map[string]any{}})
			cancel()
			if err == nil {
				t.Fatal("alice's cancelled call succeeded")
			}
			// The gateway has seen alice's cancel and ended her call.
			time.Sleep(100 * time.Millisecond)
			if _, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}); err != nil {
				t.Fatalf("bob's call: %v", err)
			}
			t.Logf("the server's late question got: %v", <-asked)
			mu.Lock()
			defer mu.Unlock()
			if len(bobAsked) > 0 {
				t.Errorf("bob was asked %q, the question of alice's cancelled call", bobAsked)
			}
		})
	}
}

// TestPoolCancelledCallsNeverCrossPrincipals: 6 principals, 3 sessions
// each, call a handshake-era server whose calls log, ask and log again,
// half of the calls cancelled after a few milliseconds (before, while or
// after the question comes), on the shared connection and 2 extra ones:
// no question or log message of one principal's call reaches another.
func TestPoolCancelledCallsNeverCrossPrincipals(t *testing.T) {
	a := chatty()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.srv }, nil)
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	who := []string{"alice", "bob", "carol", "dave", "erin", "frank"}
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{MaxExtraConnections: 2}, who...)
	ctx := testCtx(t, 120*time.Second)
	var mu sync.Mutex
	var crossed []string
	var wg sync.WaitGroup
	for _, p := range who {
		for i := range 3 {
			cs := connectAs(t, url, p, v1125, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if !strings.HasPrefix(req.Params.Message, p+"#") {
						mu.Lock()
						crossed = append(crossed, fmt.Sprintf("%s was asked %q", p, req.Params.Message))
						mu.Unlock()
					}
					time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "x"}}, nil
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					s, _ := req.Params.Data.(string)
					if !strings.Contains(s, " "+p+"#") {
						mu.Lock()
						crossed = append(crossed, fmt.Sprintf("%s got log %q", p, s))
						mu.Unlock()
					}
				},
			})
			_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range 8 {
					cctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(8))*time.Millisecond+time.Millisecond)
					if rand.IntN(2) == 0 {
						cancel()
						cctx, cancel = context.WithTimeout(ctx, 10*time.Second)
					}
					_, _ = cs.CallTool(cctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"who": fmt.Sprintf("%s#%d.%d", p, i, j)}})
					cancel()
				}
			}()
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, c := range crossed {
		t.Error(c)
	}
}

// TestPoolCancelledOpenKeepsPoolForOthers: mallory's call, which opens an
// extra connection to a stdio server slow to start, is cancelled while
// the process starts; carol's call right after still gets an extra
// connection (the pool does not hold back for a failure that was the
// caller's), and completes while bob's slow call holds the shared one.
func TestPoolCancelledOpenKeepsPoolForOthers(t *testing.T) {
	bin := testserver.Build(t)
	_, url := startGateway(t, []Server{{Name: "s", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-start-delay", "500ms"}}}}, &Options{})
	bob := connect(t, url, v1125, declining)
	mallory := connect(t, url, v1125, declining)
	carol := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	bobDone := make(chan struct{})
	go func() {
		defer close(bobDone)
		_, _ = bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 8000}})
	}()
	time.Sleep(300 * time.Millisecond)
	for range 3 {
		mctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		_, _ = mallory.CallTool(mctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "m"}})
		cancel()
		time.Sleep(100 * time.Millisecond)
	}
	start := time.Now()
	res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "carol's"}})
	if err != nil || texts(res) != "carol's" {
		t.Fatalf("carol's call: %v %q", err, texts(res))
	}
	t.Logf("carol's call took %v", time.Since(start))
	select {
	case <-bobDone:
		t.Errorf("carol's call waited for bob's (%v): mallory's cancelled calls held the pool back", time.Since(start))
	default:
	}
}
