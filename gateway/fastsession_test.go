package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCase returns c, a 2026-07-28 client's request, as a request of a
// handshake-era session: its _meta's client members replaced by one of
// no meaning to go-sdk, the session's headers set.
func sessionCase(c fastCase, id string) (body string, header map[string]string) {
	header = map[string]string{"Mcp-Protocol-Version": v1125, "Mcp-Session-Id": id, "Mcp-Method": "", "Mcp-Name": ""}
	for k, v := range c.header {
		if k != "Mcp-Method" && k != "Mcp-Name" {
			header[k] = v
		}
	}
	return strings.ReplaceAll(c.body, fastMeta, `"x-diff":1`), header
}

// sendSession posts body with header over fastHeaders and returns what a
// client sees of the answer, without what only go-sdk's handler writes
// and a client cannot tell apart: the priming event and the events' ids
// (go-sdk's stream can be resumed, the fast path's cannot).
func sendSession(t *testing.T, url, body string, header map[string]string) fastAnswer {
	t.Helper()
	req, err := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range fastHeaders("") {
		req.Header.Set(k, v)
	}
	setHeaders(req.Header, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	raw = eventIDRE.ReplaceAll(raw, nil)
	raw = primeRE.ReplaceAll(raw, nil)
	return answerOf(resp.StatusCode, resp.Header, raw)
}

// eventIDRE matches an event's id line; primeRE the priming event, the
// first of a stream, whose data is empty.
var (
	eventIDRE = regexp.MustCompile(`(?m)^id: [^\n]*\n`)
	primeRE   = regexp.MustCompile(`\A(event: prime\n)?data: ?\n\n`)
)

// TestSessionFastDifferential sends the fast path's requests, good, bad
// and hostile, as requests of a handshake-era session to a gateway with
// the session fast path and to one without it: a client sees the same
// status, headers and JSON-RPC answers, and the plain calls are answered
// on the fast path.
func TestSessionFastDifferential(t *testing.T) {
	fast, _, fastURL, slowURL := startDiffGateways(t, false)
	fs, ss := rawInit(t, fastURL, `{}`), rawInit(t, slowURL, `{}`)
	ls := fast.live.get(fs.id, "")
	if ls == nil {
		t.Fatal("the fast gateway holds no live session for its client")
	}
	wantFast := map[string]bool{
		"echo": true, "string id": true, "unicode text": true, "policy denial": true, "tool error": true,
		"upstream dies mid-call": true, "no meta": true, "arguments null": true, "meta first": true,
		"bad arguments": true, "wrong argument type": true, "result type input_required": true,
		"huge id": false, "unknown tool": false, "progress token": true, "batch": false,
		"meta version old": false, "task": false, "unknown request state": false, "Accept json only": false,
		"no Content-Type": false, "session id": false, "Last-Event-ID": false, "meta null": false,
	}
	taken := 0
	for _, c := range fastCases() {
		if c.search {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			fbody, fheader := sessionCase(c, fs.id)
			sbody, sheader := sessionCase(c, ss.id)
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(fbody))
			for k, v := range fastHeaders("") {
				req.Header.Set(k, v)
			}
			setHeaders(req.Header, fheader)
			var f *fastRequest
			if fheader["Mcp-Session-Id"] == fs.id {
				if body, ok := fast.readBody(req); ok {
					f = fast.sessionFastRequestOf(req, ls, body)
				}
			}
			if want, ok := wantFast[c.name]; ok && (f != nil) != want {
				t.Errorf("session fast path taken: %v, want %v", f != nil, want)
			}
			if f != nil {
				taken++
			}
			if b, _ := io.ReadAll(req.Body); string(b) != fbody {
				t.Errorf("the body put back is %q, want %q", b, fbody)
			}
			sameSessionAnswers(t, fastURL, fbody, fheader, slowURL, sbody, sheader)
		})
	}
	if taken < 40 {
		t.Errorf("%d requests took the session fast path, want most plain calls (40 or more)", taken)
	}

	// Once the sessions asked for log messages, the calls that send some
	// take the session fast path too, their log messages and progress
	// reports on their own streams, as go-sdk's handler sends them.
	setLevelInfo(t, fs, ss)
	waitSDKDone(t, fast, ls)
	for _, c := range streamedFastCases() {
		t.Run("log level info/"+c.name, func(t *testing.T) {
			c.body = logLevelRE.ReplaceAllString(c.body, "")
			fbody, fheader := sessionCase(c, fs.id)
			sbody, sheader := sessionCase(c, ss.id)
			before := fast.sessionFast.Load()
			got := sameSessionAnswers(t, fastURL, fbody, fheader, slowURL, sbody, sheader)
			if n := fast.sessionFast.Load() - before; n != 1 && !c.session {
				t.Errorf("%d calls took the session fast path, want 1", n)
			}
			if raw, _ := json.Marshal(got.Body); !c.session && !strings.Contains(string(raw), c.want) {
				t.Errorf("the answer %.2000s holds no %s", raw, c.want)
			}
		})
	}
}

// logLevelRE matches a log level's member in a request's _meta.
var logLevelRE = regexp.MustCompile(`"io\.modelcontextprotocol/logLevel":[^,}]*,`)

// TestSessionFastRealClients: go-sdk clients of both handshake-era
// versions call through the session fast path, and a server's question
// during such a call reaches the client (on its session's standalone
// stream) and its answer the server.
func TestSessionFastRealClients(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	for _, v := range []string{"2025-06-18", v1125} {
		t.Run(v, func(t *testing.T) {
			asked := make(chan string, 4)
			cs := connect(t, url, v, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 4, "seating": "inside"}}, nil
				},
			})
			ctx := testCtx(t, 30*time.Second)
			waitFor(t, "the session's standalone stream", func() bool { return g.live.streaming(liveOf(t, g, cs)) })
			before := g.sessionFast.Load()
			for i := range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				if err != nil || res.IsError || texts(res) != "hi" {
					t.Fatalf("call %d: %v %v", i, err, texts(res))
				}
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "mon"}})
			if err != nil || res.IsError || !strings.Contains(texts(res), "Booked 4 guests (inside) on mon") {
				t.Fatalf("book: %v %v", err, texts(res))
			}
			if q := <-asked; !strings.Contains(q, "How many guests on mon") {
				t.Errorf("the client was asked %q", q)
			}
			if n := g.sessionFast.Load() - before; n != 4 {
				t.Errorf("%d of 4 calls answered on the session fast path", n)
			}
		})
	}
}

// liveOf returns the gateway's live session of cs.
func liveOf(t *testing.T, g *Gateway, cs *mcp.ClientSession) *liveSession {
	t.Helper()
	ls := g.live.get(cs.ID(), "")
	if ls == nil {
		t.Fatalf("no live session %s", cs.ID())
	}
	return ls
}

// waitFor waits up to 10 s for ok.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSessionFastCancel: a client that cancels a call on the session fast
// path (notifications/cancelled) ends it at the gateway and at the server,
// and a client that ends its session (DELETE) ends its calls.
func TestSessionFastCancel(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	cs := connect(t, url, v1125, nil)
	waitFor(t, "the session's standalone stream", func() bool { return g.live.streaming(liveOf(t, g, cs)) })
	before := g.sessionFast.Load()
	ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}})
		done <- err
	}()
	waitFor(t, "the call in flight", func() bool { return g.inflightCount() == 1 })
	if g.sessionFast.Load() != before {
		t.Fatal("the call was answered before it ended")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v", err)
	}
	waitFor(t, "the cancelled call's end at the gateway", func() bool { return g.inflightCount() == 0 })

	// DELETE: the client closes its session with a call in flight.
	cs2 := connect(t, url, v1125, nil)
	waitFor(t, "the second session's standalone stream", func() bool { return g.live.streaming(liveOf(t, g, cs2)) })
	go func() {
		_, err := cs2.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}})
		done <- err
	}()
	waitFor(t, "the second call in flight", func() bool { return g.inflightCount() == 1 })
	_ = cs2.Close()
	<-done
	waitFor(t, "the call's end with its session", func() bool { return g.inflightCount() == 0 })
	if n := g.sessionFast.Load() - before; n != 2 {
		t.Errorf("%d of 2 calls taken on the session fast path", n)
	}
}

// TestSessionFastOtherPrincipal: a request naming another principal's
// session never takes the fast path: go-sdk refuses it (403), and the
// session's own principal is served.
func TestSessionFastOtherPrincipal(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startForPrincipals(t, []Server{{Name: "old", Target: old.URL}}, nil)
	alice := connectAs(t, url, "alice", v1125, nil)
	if res, err := alice.CallTool(testCtx(t, 10*time.Second), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a"}}); err != nil || texts(res) != "a" {
		t.Fatalf("alice: %v %v", err, texts(res))
	}
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"mallory"}}}`
	for _, who := range []string{"mallory", ""} {
		header := map[string]string{"Mcp-Protocol-Version": v1125, "Mcp-Session-Id": alice.ID(), "Mcp-Method": "", "Mcp-Name": "", "Authorization": "Bearer " + who}
		if who == "" {
			header["Authorization"] = ""
		}
		before := g.sessionFast.Load()
		a := sendSession(t, url, body, header)
		if a.Status == http.StatusOK || g.sessionFast.Load() != before {
			t.Errorf("%q with alice's session: %d %v (fast path: %v)", who, a.Status, a.Body, g.sessionFast.Load() != before)
		}
	}
}

// TestSessionIdleTimeout: Options.SessionTimeout ends a handshake-era
// session idle that long and no busier one: calls on the session fast path
// and requests on go-sdk's keep it, as does a call in flight longer than
// the timeout.
func TestSessionIdleTimeout(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	const idle = time.Second
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{SessionTimeout: idle})
	cs := connect(t, url, v1125, nil)
	ctx := testCtx(t, 30*time.Second)
	before := g.sessionFast.Load()
	for i := range 12 { // 3 s, three timeouts
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil || texts(res) != "x" {
			t.Fatalf("call %d: %v %v", i, err, texts(res))
		}
		if i%4 == 0 {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("tools/list %d: %v", i, err)
			}
		}
		time.Sleep(idle / 4)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 2 * idle.Milliseconds()}}); err != nil || res.IsError {
		t.Fatalf("a call longer than the timeout: %v %v", err, texts(res))
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "y"}}); err != nil || texts(res) != "y" {
		t.Fatalf("after the long call: %v %v", err, texts(res))
	}
	if n := g.sessionFast.Load() - before; n != 14 {
		t.Errorf("%d of 14 calls on the session fast path", n)
	}
	id := cs.ID()
	waitFor(t, "the idle session's end", func() bool { return g.live.get(id, "") == nil })
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "z"}})
	if !errors.Is(err, mcp.ErrSessionMissing) {
		t.Errorf("a call of the ended session returned %v, want the session missing", err)
	}
}

// TestSessionFastHeaderBeforeLongAnswer: a call on the session fast path
// that runs longer than a second has its response's header sent before its
// answer, as go-sdk's handler sends it at once (a client bounding the wait
// for a header does not fail a long call).
func TestSessionFastHeaderBeforeLongAnswer(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	s := rawInit(t, url, `{}`)
	before := g.sessionFast.Load()
	resp := s.post(testCtx(t, 30*time.Second), `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":5000}}}`)
	headed := time.Now()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	answered := time.Now()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"id":5,"result"`) {
		t.Fatalf("%d %v %s", resp.StatusCode, err, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if gap := answered.Sub(headed); gap < 2*time.Second {
		t.Errorf("the header came %v before the answer of a 5 s call, want it about 4 s before", gap)
	}
	if g.sessionFast.Load() != before+1 {
		t.Error("the call did not take the session fast path")
	}
}

// sameSessionAnswers sends fbody with fheader to fastURL and sbody with
// sheader to slowURL (sendSession), checks that a client reads both
// answers alike and can read them, and returns the first.
func sameSessionAnswers(t *testing.T, fastURL, fbody string, fheader map[string]string, slowURL, sbody string, sheader map[string]string) fastAnswer {
	t.Helper()
	got, want := sendSession(t, fastURL, fbody, fheader), sendSession(t, slowURL, sbody, sheader)
	if raw, _ := json.Marshal(got.Body); strings.Contains(string(raw), `"unreadable: `) {
		t.Errorf("the answer %.2000s cannot be read", raw)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
	}
	return got
}

// setLevelInfo has each session ask for log messages at level info.
func setLevelInfo(t *testing.T, sessions ...*rawSession) {
	t.Helper()
	for _, s := range sessions {
		resp := s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":"lv","method":"logging/setLevel","params":{"level":"info"}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
