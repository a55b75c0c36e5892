//lint:file-ignore SA1019 the tests relay a handshake-era server's log messages, deprecated in 2026-07-28 but alive in the handshake era

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectAs connects a go-sdk client of version v to url as principal
// who.
func connectAs(t *testing.T, url, who, v string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: who}, opts)
	cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{who}}}, &mcp.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("%s connecting: %v", who, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// declining is a handshake-era client that can be asked (it declares
// elicitation) and declines.
var declining = &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}}

// TestPoolParkedCallHoldsNoOtherPrincipal: alice's call parked on the
// server's question (she holds her answer) does not hold bob's calls to
// the same handshake-era server, a stdio child or over streamable HTTP:
// his go-sdk client's and this library's client's (both can be asked)
// complete in well under a second, on another connection; alice's
// answer then completes her call. The stdio server's extra process is
// gone after Gateway.Close.
func TestPoolParkedCallHoldsNoOtherPrincipal(t *testing.T) {
	bin := testserver.Build(t)
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) any
	}{
		{"stdio", func(*testing.T) any { return mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy"}} }},
		{"http", func(t *testing.T) any {
			return testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy})).URL
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, url := startForPrincipals(t, []Server{{Name: "s", Target: tc.target(t)}}, &Options{ParkTimeout: time.Minute}, "alice", "bob")
			alice := connectAs(t, url, "alice", v0728, manualRounds)
			bob := connectAs(t, url, "bob", v1125, declining)
			ctx := testCtx(t, 30*time.Second)
			var shared int
			if tc.name == "stdio" {
				shared = pidOf(t, bob)
			}
			first, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}})
			if err != nil || !first.NeedsInput() {
				t.Fatalf("alice's first round: %v %+v", err, first)
			}
			start := time.Now()
			res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bob's"}})
			if err != nil || texts(res) != "bob's" {
				t.Fatalf("bob's call while alice's is parked: %v %q", err, texts(res))
			}
			lib, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
				HTTPClient: &http.Client{Transport: bearer{"bob"}},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = lib.Close() })
			lres, err := lib.CallTool(ctx, "echo", []byte(`{"text":"bob's library"}`), nil)
			if err != nil || lres.Text() != "bob's library" {
				t.Fatalf("bob's call through this library's client: %v %+v", err, lres)
			}
			d := time.Since(start)
			if d > time.Second {
				t.Errorf("bob's calls took %v while alice's call was parked, want well under a second", d)
			}
			t.Logf("bob's two calls while alice's call was parked: %v", d)
			var extra int
			if tc.name == "stdio" {
				if extra = pidOf(t, bob); extra == shared {
					t.Fatalf("bob's call ran in the shared process %d while alice's call was parked there", shared)
				}
			}
			got, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}, RequestState: first.RequestState,
				InputResponses: guestsAnswer(first, 4)})
			if err != nil || !strings.HasPrefix(texts(got), "Booked 4 guests") {
				t.Fatalf("alice's answer: %v %q", err, texts(got))
			}
			if tc.name != "stdio" {
				return
			}
			if err := g.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			for _, pid := range []int{shared, extra} {
				for end := time.Now().Add(10 * time.Second); alive(pid); {
					if time.Now().After(end) {
						t.Fatalf("server process %d outlived the gateway", pid)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// guestsAnswer answers every question of res with n guests.
func guestsAnswer(res *mcp.CallToolResult, n int) mcp.InputResponseMap {
	out := mcp.InputResponseMap{}
	for id := range res.InputRequests {
		out[id] = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": n}}
	}
	return out
}

// TestPoolSlowCallsOverlap: alice's slow call and bob's, both from
// clients that can be asked, run at the same time on a handshake-era
// server: bob's reaches the server while alice's is still in flight.
func TestPoolSlowCallsOverlap(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	_, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{}, "alice", "bob")
	alice := connectAs(t, url, "alice", v1125, declining)
	bob := connectAs(t, url, "bob", v1125, declining)
	ctx := testCtx(t, 30*time.Second)
	aliceDone := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
		aliceDone <- err
	}()
	if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
		t.Fatal(err)
	}
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
		bobDone <- err
	}()
	if err := st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") == 2 }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-aliceDone:
		t.Fatalf("alice's call ended (%v) before bob's reached the server: the calls ran one after the other", err)
	default:
	}
	if err := <-aliceDone; err != nil {
		t.Errorf("alice's call: %v", err)
	}
	if err := <-bobDone; err != nil {
		t.Errorf("bob's call: %v", err)
	}
}

// TestPoolBoundWaits: past MaxExtraConnections (1 here), a call that may
// not run beside the calls in flight waits its turn, and completes once
// the shared connection's call ends; the pool never grows past its bound.
func TestPoolBoundWaits(t *testing.T) {
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
	u := g.servers()[0]
	if n := u.pool.size(); n != 1 {
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
	select {
	case err := <-carolDone:
		t.Fatalf("carol's call ended (%v) past the pool's bound while both connections held a parked call", err)
	case <-time.After(300 * time.Millisecond):
	}
	if n := u.pool.size(); n != 1 {
		t.Fatalf("%d extra connections, want at most MaxExtraConnections (1)", n)
	}
	for who, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": who}, RequestState: parked[who].RequestState,
			InputResponses: guestsAnswer(parked[who], len(who))})
		if want := fmt.Sprintf("Booked %d guests", len(who)); err != nil || !strings.HasPrefix(texts(got), want) || !strings.HasSuffix(texts(got), " on "+who) {
			t.Fatalf("%s's answer: %v %q, want %q... on %s", who, err, texts(got), want, who)
		}
	}
	if err := <-carolDone; err != nil {
		t.Fatalf("carol's call that waited: %v", err)
	}
}

// TestPoolIdleConnectionClosed: an extra connection idle for the pool's
// idle time is closed.
func TestPoolIdleConnectionClosed(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{extraIdle: 200 * time.Millisecond, ParkTimeout: time.Minute}, "alice", "bob")
	alice := connectAs(t, url, "alice", v0728, manualRounds)
	bob := connectAs(t, url, "bob", v1125, declining)
	ctx := testCtx(t, 30*time.Second)
	first, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("alice's first round: %v %+v", err, first)
	}
	u := g.servers()[0]
	for i := range 3 { // the extra connection is reused
		if _, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatalf("bob's call %d: %v", i, err)
		}
		if n := u.pool.size(); n != 1 {
			t.Fatalf("after bob's call %d: %d extra connections, want 1", i, n)
		}
	}
	waitUntil(t, "the idle extra connection closed", func() bool { return u.pool.size() == 0 })
	if _, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "friday"}, RequestState: first.RequestState,
		InputResponses: guestsAnswer(first, 2)}); err != nil {
		t.Fatalf("alice's answer: %v", err)
	}
}

// chatty is a handshake-era server whose ask tool logs, asks (with
// elicitation/create) for a name for its argument who, logs again and
// answers "WHO got NAME"; it records every answer it receives.
func chatty() *asking {
	a := &asking{srv: mcp.NewServer(&mcp.Implementation{Name: "chatty"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})}
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
	a.srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Who string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "before " + in.Who})
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Who, RequestedSchema: schema})
			if err != nil {
				return nil, err
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "after " + in.Who})
			s := fmt.Sprintf("%s got %v", in.Who, res.Content["name"])
			a.mu.Lock()
			a.got = append(a.got, s)
			a.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		})
	return a
}

// TestPoolQuestionsNeverCrossPrincipals: 4 principals make 4 calls each
// at once (16 client sessions) to a handshake-era server over streamable
// HTTP whose calls ask and log mid-call; the calls run on the shared
// connection and the 3 extra ones, the others wait; every question and
// log message reaches the principal whose call caused it, each answer
// reaches its own call, once.
func TestPoolQuestionsNeverCrossPrincipals(t *testing.T) {
	a := chatty()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.srv }, nil)
	up := httptest.NewServer(h)
	t.Cleanup(up.Close)
	who := []string{"alice", "bob", "carol", "dave"}
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{}, who...)
	ctx := testCtx(t, 60*time.Second)
	var mu sync.Mutex
	var crossed []string
	logs := make(map[string]int) // "principal: data"
	var wg sync.WaitGroup
	results := make(chan string, 16)
	// The first questions wait until one is asked on every connection the
	// pool may hold (or 10 s pass), so the calls overlap however slowly
	// the machine starts them.
	var asking int
	full := make(chan struct{})
	overlap := func() {
		mu.Lock()
		asking++
		if asking == 1+DefaultMaxExtraConnections {
			close(full)
		}
		mu.Unlock()
		select {
		case <-full:
		case <-time.After(10 * time.Second):
		}
	}
	for _, p := range who {
		for i := range 4 {
			// A session per call: calls of one session share its key, and
			// a question of either may go to the other's request.
			cs := connectAs(t, url, p, v1125, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					if !strings.HasPrefix(req.Params.Message, p+"#") {
						mu.Lock()
						crossed = append(crossed, fmt.Sprintf("%s was asked %q", p, req.Params.Message))
						mu.Unlock()
					}
					overlap()
					time.Sleep(20 * time.Millisecond) // questions of several calls overlap
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "answer of " + req.Params.Message}}, nil
				},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					mu.Lock()
					defer mu.Unlock()
					s, _ := req.Params.Data.(string)
					logs[p+": "+s]++
				},
			})
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				tag := fmt.Sprintf("%s#%d", p, i)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"who": tag}})
				if err != nil {
					results <- fmt.Sprintf("%s: %v", tag, err)
					return
				}
				results <- texts(res)
			}()
		}
	}
	wg.Wait()
	close(results)
	if n := g.servers()[0].pool.size(); n != DefaultMaxExtraConnections {
		t.Errorf("%d extra connections after 16 calls at once, want %d", n, DefaultMaxExtraConnections)
	}
	for r := range results {
		var tag string
		if _, err := fmt.Sscanf(r, "%s got", &tag); err != nil || r != tag+" got answer of "+tag {
			t.Errorf("a call's result: %q, want its own answer", r)
		}
	}
	// A client's go-sdk session hands log messages to their handler
	// after the call they came before may have returned.
	waitUntil(t, "the log messages handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(logs) >= 2*len(who)*4
	})
	mu.Lock()
	defer mu.Unlock()
	for _, c := range crossed {
		t.Error(c)
	}
	for _, p := range who {
		for i := range 4 {
			tag := fmt.Sprintf("%s#%d", p, i)
			if n := a.answers()[tag+" got answer of "+tag]; n != 1 {
				t.Errorf("the server received %s's answer %d times, want once", tag, n)
			}
			for _, when := range []string{"before", "after"} {
				if n := logs[p+": "+when+" "+tag]; n != 1 {
					t.Errorf("%s got the log message %q %d times, want once", p, when+" "+tag, n)
				}
			}
		}
	}
	for k := range logs {
		p, data, _ := strings.Cut(k, ": ")
		if !strings.Contains(data, " "+p+"#") {
			t.Errorf("%s got another's log message %q", p, data)
		}
	}
}
