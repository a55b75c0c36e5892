package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSessionQuestionOutlivesOtherCall: a handshake-era client session
// with two calls in flight to a handshake-era server, one of which asks a
// question. The server's question does not say which call it is for, so
// the gateway sends it over either call's request; when the other call
// ends before the client answers, the question still gets its answer and
// the call that asked completes.
func TestSessionQuestionOutlivesOtherCall(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	_, url := startGateway(t, []Server{{Name: "old", Target: up.URL}}, nil)
	for round := range 6 {
		ctx := testCtx(t, 30*time.Second)
		asked := make(chan struct{}, 1)
		release := make(chan struct{})
		cs := connect(t, url, v1125, &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked <- struct{}{}
				select {
				case <-release: // the other call has ended
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
			},
		})
		var wg sync.WaitGroup
		var bookErr, slowErr error
		var booked *mcp.CallToolResult
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, slowErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 400}})
		}()
		time.Sleep(50 * time.Millisecond) // the slow call is in flight first
		go func() {
			defer wg.Done()
			booked, bookErr = cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "mon"}})
		}()
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatalf("round %d: the question never came", round)
		}
		// The slow call ends while the question waits for its answer.
		time.Sleep(600 * time.Millisecond)
		close(release)
		wg.Wait()
		if slowErr != nil {
			t.Fatalf("round %d: slow: %v", round, slowErr)
		}
		if bookErr != nil || booked.IsError {
			t.Fatalf("round %d: book: %v %s", round, bookErr, texts(booked))
		}
		_ = cs.Close()
	}
}

// holdingServer is a handshake-era go-sdk server served over loopback
// HTTP. Its tool "slow" takes ms milliseconds; "hold" waits delay_ms
// milliseconds, then asks the client a question outside the call's
// request, with a context that outlives the call: a hostile server that
// keeps its question open once the call is cancelled, so that only the
// gateway (or the test's end) ends it.
type holdingServer struct {
	url       string
	started   chan string // a call of this tool reached the server
	cancelled chan string // the server saw a call of this tool cancelled
	ended     chan error  // how a question ended (nil: answered)
}

// startHolding starts a holdingServer, closed when the test ends.
func startHolding(t *testing.T) *holdingServer {
	t.Helper()
	a := &holdingServer{started: make(chan string, 64), cancelled: make(chan string, 64), ended: make(chan error, 64)}
	srv := mcp.NewServer(&mcp.Implementation{Name: "holding"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	type slowIn struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		a.started <- "slow"
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
			a.cancelled <- "slow"
			return nil, nil, ctx.Err()
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept"}}}, nil, nil
	})
	type holdIn struct {
		DelayMS int `json:"delay_ms,omitempty"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "hold"}, func(ctx context.Context, req *mcp.CallToolRequest, in holdIn) (*mcp.CallToolResult, any, error) {
		a.started <- "hold"
		defer context.AfterFunc(ctx, func() { a.cancelled <- "hold" })()
		// A context of its own: not the call's (whose stream may be
		// gone), ended with the test only.
		ctx, stop := context.WithCancel(context.Background())
		defer context.AfterFunc(t.Context(), stop)()
		select {
		case <-time.After(time.Duration(in.DelayMS) * time.Millisecond):
		case <-ctx.Done():
		}
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "How many guests?", RequestedSchema: map[string]any{"type": "object"}})
		a.ended <- err
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered"}}}, nil, nil
	})
	a.url = testserver.StartStreamable(t, srv).URL
	return a
}

// wait waits for tool on ch (started or cancelled), skipping others.
func (a *holdingServer) wait(t *testing.T, ch <-chan string, tool, what string) {
	t.Helper()
	for within(t, ch, 10*time.Second, "a "+tool+" call to "+what) != tool {
	}
}

// silentClient connects a 2025-11-25 client that can be asked and never
// answers: each question is reported on asked, and its handler returns
// when the question is withdrawn (its context ends), release is closed
// or the test ends.
func silentClient(t *testing.T, url string, release <-chan struct{}) (*mcp.ClientSession, <-chan struct{}) {
	t.Helper()
	asked := make(chan struct{}, 16)
	cs := connect(t, url, v1125, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
			case <-t.Context().Done():
			}
			return nil, errors.New("no answer")
		},
	})
	return cs, asked
}

// within waits for ch at most d and says what did not come.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: not within %s", what, d)
	}
	panic("unreachable")
}

// callIn has cs call tool with args in the background; the call's error
// comes on the channel returned.
func callIn(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) <-chan error {
	ch := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		ch <- err
	}()
	return ch
}

// askOnOtherCall makes, in cs's session, a question of the server that
// the gateway sends over the request of another call: cs calls "slow"
// (ms milliseconds) and "hold", and cancels the hold call once the
// server has it; the server asks all the same 200 ms later, and the
// gateway sends the question over the slow call's request, the one still
// open. It waits for the question at the client, and returns where the
// slow call's error comes and what cancels it.
func askOnOtherCall(t *testing.T, a *holdingServer, cs *mcp.ClientSession, asked <-chan struct{}, ms int) (slow <-chan error, cancel func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(testCtx(t, 60*time.Second))
	slow = callIn(ctx, cs, "slow", map[string]any{"ms": ms})
	a.wait(t, a.started, "slow", "reach the server")
	hctx, hcancel := context.WithCancel(ctx)
	held := callIn(hctx, cs, "hold", map[string]any{"delay_ms": 200})
	a.wait(t, a.started, "hold", "reach the server")
	hcancel()
	within(t, held, 5*time.Second, "the cancelled hold call's end")
	a.wait(t, a.cancelled, "hold", "cancelled at the server")
	within(t, asked, 10*time.Second, "the question")
	return slow, cancel
}

// askOnAnsweredCall is askOnOtherCall with a slow call of 400 ms: it
// waits for the slow call's answer, and checks that the server's
// question still waits. With keep, a long call of the session is in
// flight from when the question was asked; the returned function cancels
// it.
func askOnAnsweredCall(t *testing.T, a *holdingServer, cs *mcp.ClientSession, asked <-chan struct{}, keep bool) (stop func()) {
	t.Helper()
	slow, cancel := askOnOtherCall(t, a, cs, asked, 400)
	var kept <-chan error
	if keep {
		kept = callIn(testCtx(t, 60*time.Second), cs, "slow", map[string]any{"ms": 30000})
	}
	if err := within(t, slow, 10*time.Second, "the slow call's answer"); err != nil {
		t.Fatalf("slow: %v", err)
	}
	select {
	case err := <-a.ended:
		t.Fatalf("the server's question ended with the request that carried it: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	return func() {
		cancel()
		if kept != nil {
			<-kept
		}
	}
}

// TestSessionQuestionEndsWithCancelledCarrier: a question the gateway sent
// over the request of another call of the session ends when that request
// is cancelled (its client may have dropped its stream before the
// question reached it), not later.
func TestSessionQuestionEndsWithCancelledCarrier(t *testing.T) {
	a := startHolding(t)
	_, url := startGateway(t, []Server{{Name: "s", Target: a.url}}, nil)
	cs, asked := silentClient(t, url, nil)
	slow, cancel := askOnOtherCall(t, a, cs, asked, 30000)
	cancel()
	within(t, slow, 5*time.Second, "the cancelled slow call's end")
	err := within(t, a.ended, 10*time.Second, "the server's question ending")
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("the server's question ended with %v, want %q (the request that carried it)", err, context.Canceled)
	}
}

// TestSessionQuestionEndsWhenGatewayCloses: Gateway.Close, while a
// session's question waits past the request that carried it (another
// call of the session in flight), returns at once; the question fails,
// and no goroutine is left.
func TestSessionQuestionEndsWhenGatewayCloses(t *testing.T) {
	a := startHolding(t)
	base := settleGoroutines(runtime.NumGoroutine())
	g, err := New([]Server{{Name: "s", Target: a.url}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	release := make(chan struct{})
	cs, asked := silentClient(t, ts.URL+"/mcp", release)
	stop := askOnAnsweredCall(t, a, cs, asked, true)
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	if err := within(t, closed, 5*time.Second, "Gateway.Close"); err != nil {
		t.Errorf("Close: %v", err)
	}
	t.Logf("Gateway.Close with a question waiting took %s", time.Since(start).Round(time.Millisecond))
	if err := within(t, a.ended, 5*time.Second, "the server's question ending"); err == nil || !strings.Contains(err.Error(), errClosed.Error()) {
		t.Errorf("the server's question ended with %v, want %q", err, errClosed)
	}
	stop()
	// The client's session closes with the gateway: the question's
	// withdrawal need not reach it.
	close(release)
	_ = cs.Close()
	ts.Close()
	http.DefaultClient.CloseIdleConnections()
	if n := settleGoroutines(base); n > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Gateway.Close, %d before the gateway:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// deleteSession ends session id as its client does (DELETE); the outcome
// comes on the channel returned.
func deleteSession(t *testing.T, url, id string) <-chan error {
	deleted := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				err = fmt.Errorf("DELETE: %s", resp.Status)
			}
		}
		deleted <- err
	}()
	return deleted
}

// TestSessionQuestionEndsWithSessionDelete: a client that ends its
// session (DELETE) while a question waits past the request that carried
// it (another call of the session in flight) gets its session ended at
// once, and the server's question ends with an error that says so.
func TestSessionQuestionEndsWithSessionDelete(t *testing.T) {
	a := startHolding(t)
	_, url := startGateway(t, []Server{{Name: "s", Target: a.url}}, nil)
	cs, asked := silentClient(t, url, nil)
	defer askOnAnsweredCall(t, a, cs, asked, true)()
	start := time.Now()
	if err := within(t, deleteSession(t, url, cs.ID()), 5*time.Second, "ending the session"); err != nil {
		t.Fatal(err)
	}
	t.Logf("DELETE with a question waiting took %s", time.Since(start).Round(time.Millisecond))
	if err := within(t, a.ended, 5*time.Second, "the server's question ending"); err == nil || !strings.Contains(err.Error(), errSessionEnded.Error()) {
		t.Fatalf("the server's question ended with %v, want %q", err, errSessionEnded)
	}
}

// TestHostileQuestionOutlivingCall: a server that keeps its question open
// once the call that asked it was cancelled gets it ended when no call of
// the session is in flight any more, and neither the session's end nor
// Gateway.Close waits for it.
func TestHostileQuestionOutlivingCall(t *testing.T) {
	a := startHolding(t)
	g, url := startGateway(t, []Server{{Name: "s", Target: a.url}}, nil)
	cs, asked := silentClient(t, url, nil)
	defer askOnAnsweredCall(t, a, cs, asked, false)()
	start := time.Now()
	err := within(t, a.ended, 10*time.Second, "the server's question ending")
	if err == nil || !strings.Contains(err.Error(), errNoCallInFlight.Error()) {
		t.Errorf("the server's question ended with %v, want %q", err, errNoCallInFlight)
	}
	t.Logf("the question ended %s after the slow call's answer", time.Since(start).Round(time.Millisecond))
	// The client's session ends all the same.
	if err := within(t, deleteSession(t, url, cs.ID()), 5*time.Second, "ending the session"); err != nil {
		t.Error(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- g.Close() }()
	within(t, closed, 5*time.Second, "Gateway.Close")
}

// TestSessionQuestionSkipsEndedRequest: a client cancels one call and
// then makes another, which asks a question while the cancelled one is
// still counted in flight (lateQuiet): the question goes over the request
// still open, and reaches the client.
func TestSessionQuestionSkipsEndedRequest(t *testing.T) {
	a := startHolding(t)
	_, url := startGateway(t, []Server{{Name: "s", Target: a.url}}, nil)
	for round := range 6 {
		cs, asked := silentClient(t, url, nil)
		ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
		slow := callIn(ctx, cs, "slow", map[string]any{"ms": 10000})
		a.wait(t, a.started, "slow", "reach the server")
		cancel()
		within(t, slow, 5*time.Second, "the cancelled call's end")
		a.wait(t, a.cancelled, "slow", "cancelled at the server")
		callIn(testCtx(t, 30*time.Second), cs, "hold", map[string]any{})
		a.wait(t, a.started, "hold", "reach the server")
		select {
		case <-asked:
		case err := <-a.ended:
			t.Fatalf("round %d: the question failed: %v", round, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the question never reached the client", round)
		}
		// The session's end ends the question, and the next round
		// finds the server's connection free.
		if err := within(t, deleteSession(t, url, cs.ID()), 5*time.Second, "ending the session"); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		within(t, a.ended, 5*time.Second, "the server's question ending")
	}
}

// TestSessionQuestionWithdrawalReachesClient: a question withdrawn once
// the request that carried it was answered (here: no call of the session
// is in flight any more) is withdrawn at the client too, on its session's
// standalone stream: the client's handler sees its context end, and the
// client closes without waiting for it.
func TestSessionQuestionWithdrawalReachesClient(t *testing.T) {
	a := startHolding(t)
	_, url := startGateway(t, []Server{{Name: "s", Target: a.url}}, nil)
	asked := make(chan struct{}, 16)
	withdrawn := make(chan error, 16)
	cs := connect(t, url, v1125, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-ctx.Done():
				withdrawn <- ctx.Err()
				return nil, ctx.Err()
			case <-t.Context().Done():
				return nil, errors.New("no answer")
			}
		},
	})
	defer askOnAnsweredCall(t, a, cs, asked, false)()
	if err := within(t, a.ended, 10*time.Second, "the server's question ending"); err == nil || !strings.Contains(err.Error(), errNoCallInFlight.Error()) {
		t.Fatalf("the server's question ended with %v, want %q", err, errNoCallInFlight)
	}
	within(t, withdrawn, 5*time.Second, "the question's withdrawal at the client")
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	within(t, closed, 5*time.Second, "the client's Close")
}

// TestSessionQuestionsManyLeaveNothing: a server that puts a hundred
// questions at once to a client session, outside the call that asks
// them, while another call of the session is in flight, and never
// withdraws them: once the session's calls end, every question ends at
// the server and is withdrawn at the client, and once the client and the
// gateway are closed no goroutine is left.
func TestSessionQuestionsManyLeaveNothing(t *testing.T) {
	const n = 100
	srv := mcp.NewServer(&mcp.Implementation{Name: "flood"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	ended := make(chan error, n)
	mcp.AddTool(srv, &mcp.Tool{Name: "flood"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				_, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "How many guests?", RequestedSchema: map[string]any{"type": "object"}})
				ended <- err
			})
		}
		wg.Wait()
		return &mcp.CallToolResult{}, nil, nil
	})
	type slowIn struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(in.MS) * time.Millisecond):
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{}, nil, nil
	})
	up := testserver.StartStreamable(t, srv)
	base := settleGoroutines(runtime.NumGoroutine())
	g, err := New([]Server{{Name: "s", Target: up.URL}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(g)
	url := ts.URL + "/mcp"
	asked := make(chan struct{}, n)
	withdrawn := make(chan struct{}, n)
	c := mcp.NewClient(&mcp.Implementation{Name: "asked"}, &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		select {
		case <-ctx.Done():
			withdrawn <- struct{}{}
		case <-t.Context().Done():
		}
		return nil, errors.New("no answer")
	}})
	cs, err := c.Connect(testCtx(t, 30*time.Second), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t, 60*time.Second))
	slow := callIn(ctx, cs, "slow", map[string]any{"ms": 60000})
	flood := callIn(ctx, cs, "flood", map[string]any{})
	for i := range n {
		within(t, asked, 10*time.Second, fmt.Sprintf("question %d at the client", i))
	}
	t.Logf("%d goroutines with %d questions waiting, %d before the gateway", runtime.NumGoroutine(), n, base)
	cancel()
	within(t, slow, 5*time.Second, "the slow call's end")
	within(t, flood, 5*time.Second, "the asking call's end")
	for i := range n {
		if err := within(t, ended, 10*time.Second, fmt.Sprintf("question %d ending at the server", i)); err == nil {
			t.Fatalf("question %d was answered", i)
		}
		within(t, withdrawn, 10*time.Second, fmt.Sprintf("question %d withdrawn at the client", i))
	}
	closed := make(chan error, 1)
	go func() { closed <- cs.Close() }()
	within(t, closed, 5*time.Second, "the client's Close")
	if err := g.Close(); err != nil {
		t.Errorf("Gateway.Close: %v", err)
	}
	ts.Close()
	http.DefaultClient.CloseIdleConnections()
	if got := settleGoroutines(base); got > base {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after the questions ended and the gateway closed, %d before the gateway:\n%s", got, base, buf[:runtime.Stack(buf, true)])
	}
}
