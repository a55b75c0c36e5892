package gateway

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
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

// TestFastPathDirectCallsUnderListChanged: while 2026-07-28 clients'
// calls are in flight (their one-request sessions listed by the gateway's
// server: a direct call's on the fast path, go-sdk's stateless handler's
// off it), another user makes the server change its tool list: the
// handshake-era sessions of the gateway are told (one made before the
// calls, one after, so that go-sdk's broadcast has passed every session
// between them), while each 2026-07-28 call gets its own answer and
// nothing else on its stream, and the gateway logs no failed list_changed.
// Each side asserts the path its calls took.
func TestFastPathDirectCallsUnderListChanged(t *testing.T) {
	const calls = 16
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "go-sdk stateless"}[slow], func(t *testing.T) {
			up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern, Mutable: true}), testserver.Stateless())
			logs := &lockedBuffer{}
			g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: slow, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			probe, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(fastCall("1", `"slow"`, `{"ms":1}`)))
			for k, v := range fastHeaders("slow") {
				probe.Header.Set(k, v)
			}
			if f := g.fastRequestOf(probe); slow != (f == nil) || !slow && f.call == nil {
				t.Fatalf("the call does not take the path of its side: %+v", f)
			}
			var before, after atomic.Int32
			a := connect(t, u, v1125, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { before.Add(1) }})

			ctx, goAway := context.WithCancel(testCtx(t, 60*time.Second))
			defer goAway()
			answers := make(chan string, calls)
			for i := range calls {
				go func() {
					status, body := fastPost(ctx, u, "slow", fastCall(itoa(100+i), `"slow"`, `{"ms":3000}`))
					answers <- itoa(status) + " " + body
				}()
			}
			waitUntil(t, "the calls in flight", func() bool { return g.inflightCount() == calls })
			if n := requestSessions(g); n != calls {
				t.Fatalf("%d sessions of a request while %d calls run", n, calls)
			}
			connect(t, u, v1125, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { after.Add(1) }})
			if _, err := a.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "tool_add", Arguments: map[string]any{"name": "fresh"}}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "both handshake-era sessions told", func() bool { return before.Load() > 0 && after.Load() > 0 })
			if n := g.inflightCount(); n != calls {
				t.Fatalf("%d calls in flight when the list changed, want %d: the test did not overlap them", n, calls)
			}
			for range calls {
				select {
				case got := <-answers:
					if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"result"`) || strings.Count(got, "event: message") != 1 || strings.Contains(got, "list_changed") {
						t.Errorf("a call's stream: %.300s", got)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("a call was not answered")
				}
			}
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "list_changed") && (strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR")) {
					t.Errorf("a broadcast failed: %s", line)
				}
			}
		})
	}
}

// TestFastPathDirectFloodCloseReload: a flood of 2026-07-28 calls in
// flight (hostile clients holding them open), direct on the fast path and
// on go-sdk's stateless handler, while the gateway is reloaded and closed
// at once: Close and Reload return, every handler
// returns without an answer written after it did, each client's request
// ends, no session of a request is left in the gateway's server, and the
// goroutines come back to what they were.
func TestFastPathDirectFloodCloseReload(t *testing.T) {
	bin := testserver.Build(t)
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "direct", true: "go-sdk stateless"}[slow], func(t *testing.T) { floodCloseReload(t, bin, slow) })
	}
}

// floodCloseReload is TestFastPathDirectFloodCloseReload on one side:
// the fast path's direct calls, or (slow) go-sdk's stateless handler.
func floodCloseReload(t *testing.T, bin string, slow bool) {
	const calls = 200
	servers := []Server{{Name: "up", Target: mcpadapter.Command{Path: bin}}}
	g, err := New(servers, &Options{Logger: quietLogger(t), slowPathOnly: slow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	var late atomic.Int32
	var handlers sync.WaitGroup
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Add(1)
		defer handlers.Done()
		lw := &lateWriter{ResponseWriter: w, late: &late}
		g.ServeHTTP(lw, r)
		lw.returned.Store(true)
	}))
	t.Cleanup(ts.Close)
	u := ts.URL + "/mcp"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: calls}}
	post := func(ctx context.Context, body string) string {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
		for k, v := range fastHeaders("slow") {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		// At most 1 MiB: an answer without end fails the test, not the
		// machine.
		got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return itoa(resp.StatusCode) + " " + string(got)
	}
	probe, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(fastCall("1", `"slow"`, `{"ms":1}`)))
	for k, v := range fastHeaders("slow") {
		probe.Header.Set(k, v)
	}
	if f := g.fastRequestOf(probe); slow != (f == nil) || !slow && f.call == nil {
		t.Fatalf("the call does not take the path of its side: %+v", f)
	}
	if got := post(testCtx(t, 30*time.Second), fastCall("1", `"slow"`, `{"ms":1}`)); !strings.Contains(got, `"result"`) {
		t.Fatalf("a call: %.300s", got)
	}
	client.CloseIdleConnections()
	base := runtime.NumGoroutine()

	ctx, goAway := context.WithCancel(context.Background())
	defer goAway()
	answers := make(chan string, calls)
	for i := range calls {
		go func() { answers <- post(ctx, fastCall(itoa(10+i), `"slow"`, `{"ms":120000}`)) }()
	}
	waitUntil(t, "the flood in flight", func() bool { return g.inflightCount() == calls })
	if n := requestSessions(g); n != calls {
		t.Errorf("%d sessions of a request while %d calls run", n, calls)
	}
	t.Logf("%d goroutines in flight for %d calls (%d before)", runtime.NumGoroutine(), calls, base)
	began := time.Now()
	reloaded := make(chan error, 1)
	closed := make(chan error, 1)
	go func() {
		reloaded <- g.Reload(context.Background(), append(servers, Server{Name: "up2", Target: mcpadapter.Command{Path: bin}}))
	}()
	go func() { closed <- g.Close() }()
	for what, ch := range map[string]chan error{"Close": closed, "Reload": reloaded} {
		select {
		case err := <-ch:
			// Reload may be refused: the gateway is closing.
			if err != nil && what == "Close" {
				t.Errorf("Close: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s waits for the calls in flight", what)
		}
	}
	t.Logf("Close and Reload returned %s after they were called", time.Since(began).Round(time.Millisecond))
	for range calls {
		select {
		case got := <-answers:
			if strings.Contains(got, `"result"`) {
				t.Errorf("a call the gateway's Close ended was answered: %.300s", got)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a client's request did not end")
		}
	}
	done := make(chan struct{})
	go func() { handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a handler did not return")
	}
	waitUntil(t, "no session of a request", func() bool { return requestSessions(g) == 0 })
	client.CloseIdleConnections()
	if n := settleGoroutines(base + 1); n > base+1 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after %d calls ended, %d before:\n%s", n, calls, base, buf[:runtime.Stack(buf, true)])
	}
	if n := late.Load(); n != 0 {
		t.Errorf("%d writes to a response after its handler returned", n)
	}
}

// TestFastPathDirectUpstreamDiesMidCall: a server that dies while
// 2026-07-28 direct calls are in flight (one of them made it crash):
// each call is answered (with an error: none is left waiting), every
// session of a request leaves the gateway's server, and once the server
// is back the goroutines are what they were.
func TestFastPathDirectUpstreamDiesMidCall(t *testing.T) {
	const calls = 24
	bin := testserver.Build(t)
	g, err := New([]Server{{Name: "up", Target: mcpadapter.Command{Path: bin}}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	u := ts.URL + "/mcp"
	probe, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(fastCall("1", `"crash"`, `{}`)))
	for k, v := range fastHeaders("crash") {
		probe.Header.Set(k, v)
	}
	if f := g.fastRequestOf(probe); f == nil || f.call == nil {
		t.Fatalf("the call is not direct: %+v", f)
	}
	answered := func() bool {
		status, got := fastPost(testCtx(t, 10*time.Second), u, "slow", fastCall("1", `"slow"`, `{"ms":1}`))
		return status == http.StatusOK && strings.Contains(got, `"result"`) && !strings.Contains(got, `"isError":true`)
	}
	if !answered() {
		t.Fatal("a call before the server dies was not answered")
	}
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()

	ctx := testCtx(t, 60*time.Second)
	answers := make(chan string, calls)
	for i := range calls {
		go func() {
			status, body := fastPost(ctx, u, "slow", fastCall(itoa(10+i), `"slow"`, `{"ms":120000}`))
			answers <- itoa(status) + " " + body
		}()
	}
	waitUntil(t, "the calls in flight", func() bool { return g.inflightCount() == calls })
	if status, got := fastPost(ctx, u, "crash", fastCall("2", `"crash"`, `{}`)); status == 0 {
		t.Logf("the crash call: %s", got)
	}
	for range calls {
		select {
		case got := <-answers:
			if !strings.HasPrefix(got, "200 ") && !strings.HasPrefix(got, "5") {
				t.Errorf("a call whose server died: %.300s", got)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a call whose server died was not answered")
		}
	}
	waitUntil(t, "no call in flight", func() bool { return g.inflightCount() == 0 })
	waitUntil(t, "no session of a request", func() bool { return requestSessions(g) == 0 })
	waitUntil(t, "the server back", answered)
	http.DefaultClient.CloseIdleConnections()
	if n := settleGoroutines(base + 1); n > base+1 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the server came back, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// panickyPolicy allows everything, and panics on a tool call of "slow"
// once armed.
type panickyPolicy struct{ armed atomic.Bool }

func (p *panickyPolicy) Allow(_ context.Context, _, _, kind, name string) bool {
	if p.armed.Load() && kind == "tool" && name == "slow" {
		panic("the policy fails")
	}
	return true
}

// TestFastPathDirectCallPanics: a direct call whose handling panics (the
// gateway's Policy fails) leaves no session of a request in the gateway's
// server, no call counted in flight and no goroutine; the gateway answers
// the next call.
func TestFastPathDirectCallPanics(t *testing.T) {
	bin := testserver.Build(t)
	pol := &panickyPolicy{}
	g, err := New([]Server{{Name: "up", Target: mcpadapter.Command{Path: bin}}}, &Options{Logger: quietLogger(t), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(g)
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // net/http reports each panic it recovers
	ts.Start()
	t.Cleanup(ts.Close)
	u := ts.URL + "/mcp"
	body := fastCall("1", `"slow"`, `{"ms":1}`)
	probe, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	for k, v := range fastHeaders("slow") {
		probe.Header.Set(k, v)
	}
	if f := g.fastRequestOf(probe); f == nil || f.call == nil {
		t.Fatalf("the call is not direct: %+v", f)
	}
	if status, got := fastPost(testCtx(t, 10*time.Second), u, "slow", body); status != http.StatusOK || !strings.Contains(got, `"result"`) {
		t.Fatalf("a call: %d %.300s", status, got)
	}
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	pol.armed.Store(true)
	for i := range 8 {
		if status, got := fastPost(testCtx(t, 10*time.Second), u, "slow", fastCall(itoa(10+i), `"slow"`, `{"ms":1}`)); strings.Contains(got, `"result"`) {
			t.Fatalf("a call whose handling panicked: %d %.300s", status, got)
		}
	}
	pol.armed.Store(false)
	waitUntil(t, "no session of a request", func() bool { return requestSessions(g) == 0 })
	if n := g.inflightCount(); n != 0 {
		t.Errorf("%d calls counted in flight after the calls that panicked", n)
	}
	if status, got := fastPost(testCtx(t, 10*time.Second), u, "slow", body); status != http.StatusOK || !strings.Contains(got, `"result"`) {
		t.Fatalf("a call after: %d %.300s", status, got)
	}
	http.DefaultClient.CloseIdleConnections()
	if n := settleGoroutines(base + 1); n > base+1 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the calls that panicked, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}
