package gateway

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// settleGoroutines waits until at most want goroutines run, and returns
// how many do.
func settleGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(20 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

// TestNoGoroutinesLeftByClients: clients of every version that call,
// are asked and go away (closing their sessions or dropping their
// connections mid-stream) leave no goroutine behind in the gateway.
func TestNoGoroutinesLeftByClients(t *testing.T) {
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	// A dropped call keeps its connection a moment (lateQuiet), so the
	// next client's may run on an extra connection: those close once
	// idle (extraIdle), and are the server's, not any client's.
	_, url := startGateway(t, []Server{{Name: "s", Target: srv.URL}}, &Options{ParkTimeout: 500 * time.Millisecond, extraIdle: 200 * time.Millisecond})
	round := func(i int) {
		for _, v := range clientVersions {
			c := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
			}})
			cs, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			ctx := testCtx(t, 20*time.Second)
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "d"}}); err != nil {
				t.Fatalf("%s book: %v", v, err)
			}
			_ = cs.Close()
		}
		hostile := rawInit(t, url, `{"elicitation":{}}`)
		hostile.callUntil("book", `{"date":"r`+itoa(i)+`"}`, "elicitation/create")()
		hostile.post(testCtx(t, 5*time.Second), "").Body.Close()
		req, _ := http.NewRequest(http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", hostile.id)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	// Warm up with one round: the gateway's connections to the server
	// (a pool that grows with concurrency) are not per client.
	round(0)
	http.DefaultClient.CloseIdleConnections()
	base := settleGoroutines(0)
	for i := range 5 {
		round(i + 1)
	}
	http.DefaultClient.CloseIdleConnections()
	if n := settleGoroutines(base + 8); n > base+8 {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after 20 clients came and went, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestEndingSessionCancelsItsCalls: a handshake-era client that ends its
// session (DELETE) while its call is in flight gets its session ended at
// once, and the server's call is cancelled.
func TestEndingSessionCancelsItsCalls(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	hs := testserver.StartStreamable(t, srv)
	_, url := startGateway(t, []Server{{Name: "s", Target: hs.URL}}, nil)
	s := rawInit(t, url, `{}`)
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		resp := s.post(testCtx(t, 60*time.Second), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30000}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	defer func() {
		select {
		case <-posted: // the call's stream ended with its session
		case <-time.After(20 * time.Second):
			t.Error("the call's stream did not end with its session")
		}
	}()
	if err := st.Wait(testCtx(t, 20*time.Second), func(s *testserver.State) bool { return s.Calls("slow") > 0 }); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the call's request has reached the server
	closed := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(testCtx(t, 60*time.Second), http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", s.id)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		closed <- err
	}()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ending the session waited for its call")
	}
	if err := st.Wait(testCtx(t, 20*time.Second), func(s *testserver.State) bool { return s.Cancellations() > 0 }); err != nil {
		t.Fatal("the server's call was not cancelled")
	}
}
