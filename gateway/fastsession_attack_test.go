package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// holdServer is a go-sdk server behind the gateway whose tool hold runs
// until its call is cancelled or the test ends, counting its runs and
// their cancellations.
type holdServer struct {
	url       string
	runs      atomic.Int64
	cancelled atomic.Int64
}

func startHoldServer(t *testing.T) *holdServer {
	t.Helper()
	h := &holdServer{}
	end := make(chan struct{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "hold", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.runs.Add(1)
			select {
			case <-ctx.Done():
				h.cancelled.Add(1)
				return nil, ctx.Err()
			case <-end:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil
			}
		})
	h.url = testserver.StartStreamable(t, srv).URL
	t.Cleanup(func() { close(end) }) // before the server closes: its calls end
	return h
}

// holdSession starts a gateway with the session fast path over a hold
// server of its own and opens a handshake-era session, which it returns
// with the gateway's record of it.
func holdSession(t *testing.T) (*holdServer, *Gateway, *rawSession, *liveSession) {
	t.Helper()
	hold := startHoldServer(t)
	g, url := startGateway(t, []Server{{Name: "h", Target: hold.url}}, nil)
	s := rawInit(t, url, `{}`)
	ls := g.live.get(s.id, "")
	if ls == nil {
		t.Fatal("no live session")
	}
	return hold, g, s, ls
}

// holdGateways starts a gateway with the session fast path and one
// without it (go-sdk's handler serves every request), both over a hold
// server of their own.
func holdGateways(t *testing.T) (fast, slow *Gateway, fastURL, slowURL string, fastHold, slowHold *holdServer) {
	t.Helper()
	fastHold, slowHold = startHoldServer(t), startHoldServer(t)
	fast, fastURL = startGateway(t, []Server{{Name: "h", Target: fastHold.url}}, nil)
	slow, slowURL = startGateway(t, []Server{{Name: "h", Target: slowHold.url}}, &Options{slowPathOnly: true})
	return fast, slow, fastURL, slowURL, fastHold, slowHold
}

const holdCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}`

// sdkMeta is a _meta that keeps a session's call off the session fast
// path (its rule leaves io.modelcontextprotocol/… members to go-sdk):
// go-sdk's handler serves the call.
const sdkMeta = `{"io.modelcontextprotocol/x":1}`

// holdCallSDK is holdCall with sdkMeta: go-sdk's handler serves it on
// both gateways.
const holdCallSDK = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{},"_meta":` + sdkMeta + `}}`

// postStatus posts body in session s and returns the answer's status and
// body, reading at most 2 s of it (a call's stream stays open).
func postStatus(t *testing.T, s *rawSession, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": v1125} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// endRawSession ends session s (DELETE), when the test ends too.
func endRawSession(t *testing.T, s *rawSession) {
	t.Helper()
	t.Cleanup(func() { _ = s.end() })
	_ = s.end()
}

// postAway posts body in session s from a goroutine of its own (the
// fast path writes its answer's headers with the answer); drop drops
// the request and waits for its end.
func postAway(t *testing.T, s *rawSession, body string) (drop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": v1125} {
			req.Header.Set(k, v)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	t.Cleanup(cancel)
	return func() {
		cancel()
		<-done
	}
}

// TestSessionFastDuplicateID: a request naming the id of a call in flight
// in its session (a retry after its stream dropped, or the same id sent
// by way of go-sdk's handler) is refused as go-sdk refuses it (400,
// duplicate in-flight request ID), on both gateways, and the call runs
// once.
func TestSessionFastDuplicateID(t *testing.T) {
	fast, slow, fastURL, slowURL, fastHold, slowHold := holdGateways(t)
	for _, c := range []struct{ name, first, retry string }{
		{"plain retry", holdCall, holdCall},
		{"plain then go-sdk's", holdCall, holdCallSDK},
		{"go-sdk's then plain", holdCallSDK, holdCall},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, side := range []struct {
				name string
				g    *Gateway
				url  string
				hold *holdServer
			}{{"fast", fast, fastURL, fastHold}, {"go-sdk", slow, slowURL, slowHold}} {
				s := rawInit(t, side.url, `{}`)
				runs := side.hold.runs.Load()
				drop := postAway(t, s, c.first)
				waitFor(t, "the first call at the server", func() bool { return side.hold.runs.Load() == runs+1 })
				drop() // the client loses the call's stream; the call goes on
				status, body := postStatus(t, s, c.retry)
				if status != http.StatusBadRequest || !strings.Contains(body, "duplicate in-flight request ID 7") {
					t.Errorf("%s: the retry was answered %d %.300s, want 400 duplicate in-flight request ID 7", side.name, status, body)
				}
				if n := side.hold.runs.Load() - runs; n != 1 {
					t.Errorf("%s: the call ran %d times, want 1", side.name, n)
				}
				endRawSession(t, s) // its call ends with it
				waitFor(t, "the call's end", func() bool { return side.g.inflightCount() == 0 })
			}
		})
	}
}

// TestSessionFastDeleteRace: a request that found its session live just
// before the session's client ended it (DELETE) is not served by the
// fast path once the DELETE has run: go-sdk answers it (404), and the
// call never reaches the server.
func TestSessionFastDeleteRace(t *testing.T) {
	hold, g, s, ls := holdSession(t)
	// The DELETE runs between the POST's look-up and its call.
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequestWithContext(testCtx(t, 5*time.Second), http.MethodPost, "/mcp", strings.NewReader(holdCall))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": s.id, "Mcp-Protocol-Version": v1125} {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.serveLive(w, r, ls, g.stateful.ServeHTTP)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the request on the deleted session is being served")
	}
	if w.Code != http.StatusNotFound || hold.runs.Load() != 0 {
		t.Errorf("a request of the deleted session: %d %q, %d runs at the server; want 404 and none", w.Code, w.Body.String(), hold.runs.Load())
	}
}

// TestSessionFastCancelRules: a call on the session fast path is
// cancelled by a notifications/cancelled of its own session naming its
// id, and by nothing else: not by one in a batch (go-sdk refuses batches
// at 2025-06-18 and later), not by one naming "7" for 7, not by another
// session's.
func TestSessionFastCancelRules(t *testing.T) {
	fast, slow, fastURL, slowURL, fastHold, slowHold := holdGateways(t)
	for _, side := range []struct {
		name string
		g    *Gateway
		url  string
		hold *holdServer
	}{{"fast", fast, fastURL, fastHold}, {"go-sdk", slow, slowURL, slowHold}} {
		s, other := rawInit(t, side.url, `{}`), rawInit(t, side.url, `{}`)
		drop := postAway(t, s, holdCall)
		waitFor(t, "the call at the server", func() bool { return side.hold.runs.Load() == 1 })
		for _, n := range []struct {
			who  *rawSession
			body string
		}{
			{s, `[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}]`},
			{s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"7"}}`},
			{other, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`},
		} {
			status, _ := postStatus(t, n.who, n.body)
			time.Sleep(100 * time.Millisecond) // a cancellation would reach the server by now
			if got := side.hold.cancelled.Load(); got != 0 {
				t.Errorf("%s: %s (answered %d) cancelled the call", side.name, n.body, status)
			}
		}
		if status, _ := postStatus(t, s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`); status != http.StatusAccepted {
			t.Errorf("%s: the cancellation was answered %d", side.name, status)
		}
		waitFor(t, "the cancelled call's end at the server", func() bool { return side.hold.cancelled.Load() == 1 })
		drop()
		waitFor(t, "the call's end", func() bool { return side.g.inflightCount() == 0 })
	}
}

// TestSessionFastDifferentialSearch: with tool search on (search_tools,
// call_tool), a handshake-era session's requests get the same answers
// from a gateway with the session fast path and from one without it.
func TestSessionFastDifferentialSearch(t *testing.T) {
	fast, _, fastURL, slowURL := startDiffGateways(t, true)
	fs, ss := rawInit(t, fastURL, `{}`), rawInit(t, slowURL, `{}`)
	before := fast.sessionFast.Load()
	for _, c := range fastCases() {
		if !c.search {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			fbody, fheader := sessionCase(c, fs.id)
			sbody, sheader := sessionCase(c, ss.id)
			got, want := sendSession(t, fastURL, fbody, fheader), sendSession(t, slowURL, sbody, sheader)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
		})
	}
	t.Logf("%d calls on the session fast path", fast.sessionFast.Load()-before)
}

// TestSessionFastChurn: 1000 sessions that open, make a call on the fast
// path and end (DELETE) leave no live session, no per-session goroutine
// and no call or stream counted behind them.
func TestSessionFastChurn(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	before := g.sessionFast.Load()
	const n = 1000
	for i := range n {
		s := rawInit(t, url, `{}`)
		if i%10 == 0 {
			if status, body := postStatus(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c"}}}`); status != http.StatusOK || !strings.Contains(body, `"text":"c"`) {
				t.Fatalf("session %d: %d %.300s", i, status, body)
			}
		}
		if err := s.end(); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.sessionFast.Load() - before; got != n/10 {
		t.Errorf("%d of %d calls on the session fast path", got, n/10)
	}
	waitFor(t, "no live session", func() bool {
		g.live.mu.Lock()
		defer g.live.mu.Unlock()
		return len(g.live.by) == 0
	})
	if g.inflightCount() != 0 {
		t.Errorf("%d calls counted in flight", g.inflightCount())
	}
}
