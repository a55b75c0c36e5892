//lint:file-ignore SA1019 a handshake-era client's roots capability, deprecated in 2026-07-28, is compared as it came

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sharedPair starts two replicas sharing a MemorySessionStore over a
// handshake-era server that records its calls and cancellations, with
// the session fast path or (slow) without it; alice's session is made on
// the first one.
func sharedPair(t *testing.T, slow bool, opts Options) (rs []*replica, st *testserver.State, id string, hc *http.Client) {
	t.Helper()
	srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	store := &MemorySessionStore{}
	opts.slowPathOnly = slow
	rs = startReplicasWith(t, []SessionStore{store, store}, up.URL, opts)
	hc = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: s.id}
	onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return rs, st, s.id, hc
}

// onPath fails the test unless the call in flight in session id's copy
// on g is on the path the pair was started with: the session fast path
// unless slow.
func onPath(t *testing.T, g *Gateway, id string, slow bool) {
	t.Helper()
	ls := g.live.get(id, "alice")
	if fast := ls != nil && g.live.calling(ls); fast == slow {
		t.Fatalf("the call in flight on B is on the session fast path: %v, want %v", fast, !slow)
	}
}

// TestSharedSessionFastCopyIdle: with Options.SessionTimeout, a copy of
// a shared session is not idle while a call of it is in flight on either
// path: replica B does not close its copy under a call that outlasts the
// timeout (go-sdk's handler pauses its idle timer while a POST of the
// session is served; the session fast path serves a POST without it).
func TestSharedSessionFastCopyIdle(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "go-sdk"}[slow], func(t *testing.T) {
			rs, st, id, _ := sharedPair(t, slow, Options{SessionTimeout: timeout})
			onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
			// The copy is made by a ping, then called.
			resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ss := rs[1].g.shared.held(id)
			if resp.StatusCode != http.StatusOK || ss == nil {
				t.Fatalf("ping on B: %s, copy held: %v", resp.Status, ss != nil)
			}
			closed := make(chan time.Time, 1)
			go func() { _ = ss.Wait(); closed <- time.Now() }()
			answered := make(chan string, 1)
			go func() {
				resp := onB.postAs(testCtx(t, 20*time.Second), "alice", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":`+itoa(int(10*timeout/time.Millisecond))+`}}}`)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				answered <- string(b)
			}()
			if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatalf("the call never reached the server: %v", err)
			}
			onPath(t, rs[1].g, id, slow)
			b := within(t, answered, 20*time.Second, "the call's answer")
			at := time.Now()
			if !strings.Contains(b, "slept") {
				t.Errorf("the call's answer: %q", b)
			}
			select {
			case c := <-closed:
				if c.Before(at) {
					t.Errorf("B closed its copy while the call was in flight (%v before its answer)", at.Sub(c))
				}
			default:
			}
		})
	}
}

// TestSharedSessionFastCallInFlightBusy: replica B, at its cap of 1,
// holds its copy of alice's session with a call on the session fast path
// in flight whose client dropped the call's stream: another principal's
// initialize on B is refused (503) rather than end the copy and the call
// with it; once alice cancels the call, the copy is idle and the next
// initialize ends it.
func TestSharedSessionFastCallInFlightBusy(t *testing.T) {
	rs, st, id, hc := sharedPair(t, false, Options{MaxSessions: 1, MaxSessionsPerPrincipal: -1})
	gb, b := rs[1].g, rs[1].ts.URL+"/mcp"
	onB := &rawSession{t: t, url: b, id: id}
	resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b, strings.NewReader(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		req.Header.Set("Authorization", "Bearer alice")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
		t.Fatalf("the call never reached the server: %v", err)
	}
	onPath(t, gb, id, false)
	cancel() // the client drops the call's stream
	if d := rawInitialize(t, hc, b, "dave"); d.status != http.StatusServiceUnavailable {
		t.Fatalf("dave's initialize on B while alice's fast call is in flight in B's copy: %d %q, want 503", d.status, d.body)
	}
	if gb.shared.held(id) == nil {
		t.Fatal("alice's copy on B, with a call in flight, was ended")
	}
	onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long"}}`).Body.Close()
	if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
		t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
	}
	waitIdle(t, gb, 1)
	if d := rawInitialize(t, hc, b, "dave"); d.status != http.StatusOK || d.id == "" {
		t.Fatalf("dave's initialize once alice's copy on B is idle: %d %q, want a session", d.status, d.body)
	}
	// The copy is ended once dave's session is kept, which may be after
	// his answer reached him.
	waitFor(t, "end of alice's idle copy on B at the cap", func() bool { return gb.shared.held(id) == nil })
}

// getAs opens the standalone stream (GET) of session sid on replica as
// principal and returns the data of its events.
func (a *answerRig) getAs(replica int, principal, sid string) <-chan string {
	t := a.t
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodGet, a.rs[replica].ts.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+principal)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET of %s's session on replica %d: %d", principal, replica, drain(resp))
	}
	return streamData(resp)
}

// TestSharedSessionFastQuestionsCrossed: alice's and bob's sessions, made
// on replica 0, each with its standalone stream open on replica 1, call
// tools that ask them a question, on replica 1, under the same JSON-RPC
// id: both calls take replica 1's session fast path, each question
// reaches its own session's stream only, bob's answer under alice's
// question's id (in his session) reaches neither call, and each client's
// answer, sent to replica 0, is handed to its own question.
func TestSharedSessionFastQuestionsCrossed(t *testing.T) {
	a := newAnswerRig(t)
	x, y := a.id, a.openAs(0, "bob")
	g1 := a.rs[1].g
	sx, sy := a.getAs(1, "alice", x), a.getAs(1, "bob", y)
	waitFor(t, "both streams served on replica 1", func() bool {
		lx, ly := g1.live.get(x, "alice"), g1.live.get(y, "bob")
		return lx != nil && ly != nil && g1.live.streaming(lx) && g1.live.streaming(ly)
	})
	before := g1.sessionFast.Load()
	cx, cy := a.callAs(1, "alice", x, 7, "q1"), a.callAs(1, "bob", y, 7, "q2")
	qx := within(t, sx, 10*time.Second, "alice's question on her stream")
	qy := within(t, sy, 10*time.Second, "bob's question on his stream")
	if !strings.Contains(qx, "question q1") || !strings.Contains(qy, "question q2") {
		t.Fatalf("alice's stream carried %s, bob's %s", qx, qy)
	}
	if !g1.live.calling(g1.live.get(x, "alice")) || !g1.live.calling(g1.live.get(y, "bob")) {
		t.Fatal("the calls are not on replica 1's session fast path")
	}
	// Bob answers alice's question, in his own session, on either replica.
	for r := range 2 {
		drain(a.postAs(r, "bob", y, answerBody(questionIDOf(qx), "bob's for alice")))
	}
	// Alice and bob answer their own, on replica 0.
	drain(a.postAs(0, "alice", x, answerBody(questionIDOf(qx), "for alice")))
	drain(a.postAs(0, "bob", y, answerBody(questionIDOf(qy), "for bob")))
	rx := within(t, cx, 10*time.Second, "alice's result")
	ry := within(t, cy, 10*time.Second, "bob's result")
	if !strings.Contains(rx, "q1 got accept map[answer:for alice]") || !strings.Contains(ry, "q2 got accept map[answer:for bob]") {
		t.Fatalf("alice's result %s; bob's %s", rx, ry)
	}
	if n := g1.sessionFast.Load() - before; n != 2 {
		t.Errorf("%d calls took replica 1's session fast path, want 2", n)
	}
	quiet(t, sx, 300*time.Millisecond, "alice's stream after her call")
	quiet(t, sy, 300*time.Millisecond, "bob's stream after his call")
}

// TestSharedSessionCopyInitializeParams: a client's odd initialize params
// (extensions, experimental members, elicitation form and url, sampling
// tools and context, roots with and without listChanged, _meta, a rich
// clientInfo) reach the copy another replica makes from the session's
// record exactly as they reached the replica that made it. (An empty
// experimental or extensions object is left out, as go-sdk writes it:
// the copy has none, which reads as the empty one.)
func TestSharedSessionCopyInitializeParams(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	ga, aURL := startGateway(t, []Server{{Name: "s", Target: old.URL}}, &Options{Sessions: &SessionOptions{Store: store}})
	gb, bURL := startGateway(t, []Server{{Name: "s", Target: old.URL}}, &Options{Sessions: &SessionOptions{Store: store}})
	for _, caps := range []string{
		`{"extensions":{"io.example/ui":{"mimeTypes":["text/html"]},"io.example/empty":{}}}`,
		`{"experimental":{"x":{"deep":[1,2,{"k":null}]},"flag":true}}`,
		`{"elicitation":{"form":{},"url":{}}}`,
		`{"elicitation":{"url":{}}}`,
		`{"sampling":{"tools":{},"context":{}}}`,
		`{"roots":{"listChanged":false}}`,
		`{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{}}}`,
	} {
		t.Run(caps, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.example/trace":"t1","n":2},"protocolVersion":"2025-06-18","capabilities":` + caps + `,"clientInfo":{"name":"odd","title":"Odd \u00e9","version":"9","websiteUrl":"https://example.com"}}}`
			req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, aURL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			drain(resp)
			s := &rawSession{t: t, url: aURL, id: resp.Header.Get("Mcp-Session-Id")}
			if s.id == "" {
				t.Fatalf("initialize on A: %s", resp.Status)
			}
			s.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
			onB := &rawSession{t: t, url: bURL, id: s.id}
			if code := drain(onB.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)); code != http.StatusOK {
				t.Fatalf("ping on B: %d", code)
			}
			var want, got *mcp.InitializeParams
			for ss := range ga.server.Sessions() {
				if ss.ID() == s.id {
					want = ss.InitializeParams()
				}
			}
			for ss := range gb.server.Sessions() {
				if ss.ID() == s.id {
					got = ss.InitializeParams()
				}
			}
			if want == nil || got == nil {
				t.Fatalf("the session on A (%v) or its copy on B (%v) is missing", want != nil, got != nil)
			}
			if !reflect.DeepEqual(got, want) {
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				t.Errorf("B's copy has initialize params\n%s (roots %v)\nthe client sent\n%s (roots %v)", gj, got.Capabilities.RootsV2, wj, want.Capabilities.RootsV2)
			}
		})
	}
}

// TestSharedSessionFastReplicaClose: replica B closes (Gateway.Close)
// while alice's call runs on its session fast path, in B's copy of her
// session: Close returns, the server is told the call is cancelled, the
// call's POST ends, and the session goes on on replica A.
func TestSharedSessionFastReplicaClose(t *testing.T) {
	rs, st, id, _ := sharedPair(t, false, Options{})
	gb := rs[1].g
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
	ended := startSlowCall(t, http.DefaultClient, st, onB.url, id, 1)
	onPath(t, gb, id, false)
	closed := make(chan error, 1)
	go func() { closed <- gb.Close() }()
	within(t, closed, 20*time.Second, "B's Close")
	if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
		t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
	}
	if b := within(t, ended, 20*time.Second, "the call's POST"); strings.Contains(b, "slept") {
		t.Errorf("the call was answered as done: %q", b)
	}
	onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: id}
	resp := onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still"}}}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "still") {
		t.Errorf("alice's call on A after B closed: %s %q", resp.Status, b)
	}
}

// TestSharedSessionFastRetryInFlight: alice's call with id 5 is in
// flight in replica B's copy of her session, on B's session fast path
// (then, again, on go-sdk's path: its _meta names a protocol member);
// a retry of id 5 on B, on either path, is refused as go-sdk refuses a
// duplicate in-flight id, and so is a batch holding it; the server runs
// the call once.
func TestSharedSessionFastRetryInFlight(t *testing.T) {
	const plain, sdk = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000},"_meta":{"io.modelcontextprotocol/x":1}}}`
	for _, first := range []string{plain, sdk} {
		t.Run(map[string]string{plain: "fast first", sdk: "go-sdk first"}[first], func(t *testing.T) {
			rs, st, id, _ := sharedPair(t, false, Options{})
			gb := rs[1].g
			onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, onB.url, strings.NewReader(first))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", v1125)
				req.Header.Set("Authorization", "Bearer alice")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatalf("the call never reached the server: %v", err)
			}
			onPath(t, gb, id, first == sdk)
			for _, retry := range []string{plain, sdk} {
				resp := onB.postAs(testCtx(t, 10*time.Second), "alice", retry)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "duplicate in-flight request ID") {
					t.Errorf("a retry of id 5 on B: %s %q, want 400 and a duplicate id error", resp.Status, b)
				}
			}
			// A batch holding the id, under a protocol version whose
			// batches go-sdk's handler takes.
			req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, onB.url, strings.NewReader(`[`+plain+`]`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
			req.Header.Set("Authorization", "Bearer alice")
			if resp, err := http.DefaultClient.Do(req); err != nil {
				t.Fatal(err)
			} else {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "duplicate in-flight request ID") {
					t.Errorf("a batch retrying id 5 on B: %s %q, want 400 and a duplicate id error", resp.Status, b)
				}
			}
			// An echo lets the server take a second call, if one came.
			resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
			drain(resp)
			if n := st.Calls("slow"); n != 1 {
				t.Errorf("the server ran the call %d times, want once", n)
			}
			drain(onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`))
			if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
				t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
			}
		})
	}
}

// loadFailStore is a session store whose loads fail (dead) or block until
// their context ends (block), for the replica that holds it.
type loadFailStore struct {
	SessionStore
	dead, block atomic.Bool
}

func (s *loadFailStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	if s.block.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.dead.Load() {
		return nil, errKilled
	}
	return s.SessionStore.LoadSession(ctx, id)
}

// TestSharedSessionFastStoreFails: replica B holds its copy of alice's
// session and has served her calls on its session fast path; once B's
// session store fails (an error; a load that outlasts StoreTimeout), her
// next call on B is refused (503) on every path, the server never
// getting it: a copy held is never served unchecked.
func TestSharedSessionFastStoreFails(t *testing.T) {
	srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
	up := testserver.StartStreamable(t, srv)
	store := &MemorySessionStore{}
	fb := &loadFailStore{SessionStore: store}
	rs := startReplicasHook(t, []SessionStore{store, fb}, up.URL, Options{}, func(g *Gateway) { g.shared.timeout = 200 * time.Millisecond })
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	s := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: s.id}
	onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	gb := rs[1].g
	call := func(n int) (int, string) {
		resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":`+itoa(n)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c`+itoa(n)+`"}}}`)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	before := gb.sessionFast.Load()
	if code, b := call(1); code != http.StatusOK || !strings.Contains(b, "c1") || gb.sessionFast.Load() != before+1 {
		t.Fatalf("alice's call on B: %d %q, on the fast path: %v", code, b, gb.sessionFast.Load() == before+1)
	}
	for _, fail := range []*atomic.Bool{&fb.dead, &fb.block} {
		fail.Store(true)
		calls := st.Calls("echo")
		if code, b := call(2); code != http.StatusServiceUnavailable || strings.Contains(b, "c2") {
			t.Errorf("alice's call on B once its store fails: %d %q, want 503", code, b)
		}
		if n := st.Calls("echo"); n != calls {
			t.Errorf("the server got %d calls while B's store failed", n-calls)
		}
		fail.Store(false)
	}
	if code, b := call(3); code != http.StatusOK || !strings.Contains(b, "c3") {
		t.Errorf("alice's call on B once its store is back: %d %q", code, b)
	}
}

// TestSharedSessionFastResumedStreamNotStandalone: on replica B, alice
// (a client that can be asked) resumes (GET with Last-Event-ID) the
// stream of a call she dropped, whose question waits; her next call on
// B, whose server asks her a question too, does not take the session
// fast path (a request of the session is in go-sdk's handler): its
// question reaches her on a stream she has open, and her answer
// reaches it.
func TestSharedSessionFastResumedStreamNotStandalone(t *testing.T) {
	a := newAnswerRig(t)
	gb := a.rs[1].g
	drain(a.post(1, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	prime := dropAfterPrime(t, a.post(1, `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"q2","arguments":{},"_meta":{"io.modelcontextprotocol/x":1}}}`), func() {})
	resumed := streamData(a.get(1, prime))
	q2 := within(t, resumed, 10*time.Second, "q2's question on the resumed stream")
	before := gb.sessionFast.Load()
	c1 := a.call(1, 12, "q1")
	// go-sdk sends the question on an open stream of the session: the
	// call's, or the one resumed.
	var q1 string
	select {
	case q1 = <-c1:
	case q1 = <-resumed:
	case <-time.After(10 * time.Second):
		t.Fatalf("q1's question reached no stream of the client (%d calls on B's session fast path)", gb.sessionFast.Load()-before)
	}
	if !strings.Contains(q1, "question q1") {
		t.Fatalf("q1's call stream carried %s", q1)
	}
	a.answer(1, questionIDOf(q1), "for q1")
	if res := within(t, c1, 10*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:for q1]") {
		t.Fatalf("q1's result: %s", res)
	}
	if n := gb.sessionFast.Load() - before; n != 0 {
		t.Errorf("%d calls took B's session fast path with no standalone stream open", n)
	}
	a.answer(1, questionIDOf(q2), "for q2")
}

// TestSharedSessionFastCloseQuestionWaiting: replica B closes while
// alice's call on its session fast path waits for her answer to the
// server's question (on her standalone stream on B): Close returns, the
// call's stream and the standalone stream end, and her late answer, to
// replica A, is accepted and reaches nothing.
func TestSharedSessionFastCloseQuestionWaiting(t *testing.T) {
	a := newAnswerRig(t)
	gb := a.rs[1].g
	sx := a.getAs(1, "alice", a.id)
	waitFor(t, "the standalone stream served on B", func() bool {
		ls := gb.live.get(a.id, "alice")
		return ls != nil && gb.live.streaming(ls)
	})
	before := gb.sessionFast.Load()
	c1 := a.call(1, 7, "q1")
	q := within(t, sx, 10*time.Second, "q1's question on the standalone stream")
	if !gb.live.calling(gb.live.get(a.id, "alice")) {
		t.Fatal("q1's call is not on B's session fast path")
	}
	closed := make(chan error, 1)
	go func() { closed <- gb.Close() }()
	within(t, closed, 20*time.Second, "B's Close")
	for _, ch := range []<-chan string{c1, sx} {
		for deadline := time.After(20 * time.Second); ; {
			var l string
			var ok bool
			select {
			case l, ok = <-ch:
			case <-deadline:
				t.Fatal("a stream of the closed replica is still open")
			}
			if !ok {
				break
			}
			if strings.Contains(l, "got accept") {
				t.Errorf("a stream of the closed replica carried %s", l)
			}
		}
	}
	if code := a.answer(0, questionIDOf(q), "late"); code != http.StatusAccepted {
		t.Errorf("the late answer to A: %d, want 202", code)
	}
	if n := gb.sessionFast.Load() - before; n > 1 {
		t.Errorf("%d calls on B's fast path", n)
	}
}

// TestSharedSessionCopyEndedIdleServed: replica B ends its copy of alice's
// session each time it is idle for a few milliseconds (its idle timer;
// the session's record lives on), while alice sends requests to B at about that pace, on go-sdk's path
// (ping) and the session fast path (tools/call). Her session goes on: a
// request that comes as the copy ends is served by a copy made again,
// never answered 404 by the copy closing, and never lost to the end of
// the copy before it.
func TestSharedSessionCopyEndedIdleServed(t *testing.T) {
	rs, _, id, _ := sharedPair(t, false, Options{})
	rs[1].g.live.timeout = 3 * time.Millisecond // before B makes its copy
	onB := &rawSession{t: t, url: rs[1].ts.URL + "/mcp", id: id}
	bodies := []string{
		`{"jsonrpc":"2.0","id":%d,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
	}
	for i := range 300 {
		resp := onB.postAs(testCtx(t, 10*time.Second), "alice", fmt.Sprintf(bodies[i%2], i+1))
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"result"`) {
			t.Fatalf("request %d of alice's session on B: %d %q, want its result", i+1, resp.StatusCode, body)
		}
		time.Sleep(time.Duration(i%7) * time.Millisecond)
	}
}
