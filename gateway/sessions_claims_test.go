package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// claimServer is a handshake-era server whose tools "hold" and "hold2"
// run until the test releases them (one release a run, on release or
// release2) or their call is cancelled, and counts their runs; every run
// ends when the test ends.
type claimServer struct {
	url       string
	runs      atomic.Int64
	cancelled atomic.Int64
	started   chan struct{}
	release   chan struct{}
	release2  chan struct{}
	end       func() // ends every run: the test ended
}

func startClaimServer(t *testing.T) *claimServer {
	t.Helper()
	h := &claimServer{started: make(chan struct{}, 16), release: make(chan struct{}), release2: make(chan struct{})}
	ended := make(chan struct{})
	var once sync.Once
	h.end = func() { once.Do(func() { close(ended) }) }
	srv := mcp.NewServer(&mcp.Implementation{Name: "hold", Version: "1"}, nil)
	for name, release := range map[string]chan struct{}{"hold": h.release, "hold2": h.release2} {
		srv.AddTool(&mcp.Tool{Name: name, Description: "Run until released.", InputSchema: map[string]any{"type": "object"}},
			h.tool(release, ended))
	}
	h.url = testserver.StartStreamable(t, srv).URL
	t.Cleanup(h.end) // before the server's cleanup
	return h
}

// tool is a tool of h's that runs until release, ended, or its call is
// cancelled.
func (h *claimServer) tool(release, ended chan struct{}) mcp.ToolHandler {
	return func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := h.runs.Add(1)
		h.started <- struct{}{}
		select {
		case <-release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held run " + itoa(int(n))}}}, nil
		case <-ended:
			return nil, errors.New("the test ended")
		case <-ctx.Done():
			h.cancelled.Add(1)
			return nil, ctx.Err()
		}
	}
}

// claimFailStore is a session store whose claims fail (dead) or block
// until their context ends (block).
type claimFailStore struct {
	SessionStore
	dead, block atomic.Bool
}

func (s *claimFailStore) ClaimRequest(ctx context.Context, session, request, owner string, ttl time.Duration) (bool, error) {
	if s.block.Load() {
		<-ctx.Done()
		return false, ctx.Err()
	}
	if s.dead.Load() {
		return false, errKilled
	}
	return s.SessionStore.ClaimRequest(ctx, session, request, owner, ttl)
}

// claimRig is two replicas, A and B, sharing one MemorySessionStore over
// a claimServer, and alice's session, made on A.
type claimRig struct {
	t     *testing.T
	hold  *claimServer
	store *MemorySessionStore
	rs    []*replica
	id    string
}

func newClaimRig(t *testing.T, stores func(*MemorySessionStore) []SessionStore, hook func(*Gateway)) *claimRig {
	t.Helper()
	c := &claimRig{t: t, hold: startClaimServer(t), store: &MemorySessionStore{}}
	ss := []SessionStore{c.store, c.store}
	if stores != nil {
		ss = stores(c.store)
	}
	c.rs = startReplicasHook(t, ss, c.hold.url, Options{}, hook)
	t.Cleanup(c.hold.end) // before the replicas' cleanups, which wait for their requests
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	s := rawInitialize(t, hc, c.rs[0].ts.URL+"/mcp", "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	c.id = s.id
	drain(c.on(0).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return c
}

func (c *claimRig) on(replica int) *rawSession {
	return &rawSession{t: c.t, url: c.rs[replica].ts.URL + "/mcp", id: c.id}
}

// postAnswer is an HTTP answer: its status and body, or the error of the
// request.
type postAnswer struct {
	status int
	body   string
	err    error
}

// send posts body to replica in ctx, in the background, with the
// protocol version header v.
func (c *claimRig) send(ctx context.Context, replica int, v, body string) <-chan postAnswer {
	ch := make(chan postAnswer, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.rs[replica].ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", c.id)
		req.Header.Set("Mcp-Protocol-Version", v)
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- postAnswer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- postAnswer{status: resp.StatusCode, body: string(b), err: err}
	}()
	return ch
}

// free releases one run of hold.
func (c *claimRig) free() {
	c.t.Helper()
	select {
	case c.hold.release <- struct{}{}:
	case <-time.After(10 * time.Second):
		c.t.Fatal("no run of hold to release")
	}
}

// started waits for the server to start a run of hold.
func (c *claimRig) started(what string) {
	c.t.Helper()
	within(c.t, c.hold.started, 10*time.Second, what)
}

// refused sends body to replica and fails the test unless it is refused
// as a duplicate in-flight id, the server not running it.
func (c *claimRig) refused(replica int, v, body, what string) {
	c.t.Helper()
	ch := c.send(testCtx(c.t, 30*time.Second), replica, v, body)
	select {
	case a := <-ch:
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, "duplicate in-flight request ID") {
			c.t.Errorf("%s: %d %q %v, want 400 and a duplicate id error", what, a.status, a.body, a.err)
		}
	case <-c.hold.started:
		c.t.Errorf("%s: the server ran the call a second time (%d runs)", what, c.hold.runs.Load())
		c.free()
		within(c.t, ch, 30*time.Second, what+": its answer")
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: no answer", what)
	}
}

// runs sends body to replica, with the protocol version header v, and fails the test unless the server runs
// it and its answer reaches the client.
func (c *claimRig) runs(replica int, v, body, what string) {
	c.t.Helper()
	ch := c.send(testCtx(c.t, 30*time.Second), replica, v, body)
	select {
	case <-c.hold.started:
	case a := <-ch:
		c.t.Fatalf("%s: %d %q %v, want it run", what, a.status, a.body, a.err)
	case <-time.After(10 * time.Second):
		c.t.Fatalf("%s: the server never ran it", what)
	}
	c.free()
	if a := within(c.t, ch, 10*time.Second, what); a.status != http.StatusOK || !strings.Contains(a.body, "held run") {
		c.t.Errorf("%s: %d %q %v", what, a.status, a.body, a.err)
	}
}

// unclaimed waits until the store holds no claim.
func (c *claimRig) unclaimed(what string) {
	c.t.Helper()
	waitFor(c.t, what, func() bool {
		c.store.mu.Lock()
		defer c.store.mu.Unlock()
		return len(c.store.claims) == 0
	})
}

const (
	holdFast = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}`
	// holdSDK takes go-sdk's path: its _meta names a protocol member.
	holdSDK = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"io.modelcontextprotocol/x":1}}}`
)

var holdPaths = map[string]string{"fast": holdFast, "go-sdk": holdSDK}

// TestSharedSessionClaimOtherReplica: alice's call with id 7 is in flight
// on replica A, on either path; she sends id 7 again to replica B, on
// either path, and in a batch: B refuses each as a duplicate in-flight
// id and the server runs the call once. Once A answered, id 7 on B runs.
func TestSharedSessionClaimOtherReplica(t *testing.T) {
	for _, first := range []string{"fast", "go-sdk"} {
		t.Run(first+" on A", func(t *testing.T) {
			c := newClaimRig(t, nil, nil)
			onA := c.send(testCtx(t, 30*time.Second), 0, v1125, holdPaths[first])
			c.started("the call on A")
			onPath(t, c.rs[0].g, c.id, first == "go-sdk")
			c.refused(1, v1125, holdFast, "id 7 again on B, fast path")
			c.refused(1, v1125, holdSDK, "id 7 again on B, go-sdk's path")
			c.refused(1, "2025-03-26", `[`+holdFast+`]`, "a batch holding id 7 on B")
			c.refused(0, v1125, holdFast, "id 7 again on A")
			if n := c.hold.runs.Load(); n != 1 {
				t.Errorf("the server ran the call %d times, want once", n)
			}
			c.free()
			if a := within(t, onA, 10*time.Second, "A's answer"); a.status != http.StatusOK || !strings.Contains(a.body, "held run 1") {
				t.Errorf("A's answer: %d %q %v", a.status, a.body, a.err)
			}
			c.unclaimed("id 7 released once A answered")
			c.runs(1, v1125, holdFast, "id 7 on B once A answered")
			c.runs(1, "2025-03-26", `[`+holdSDK+`]`, "a batch holding id 7 on B once A answered")
			c.unclaimed("id 7 released once B answered")
		})
	}
}

// TestSharedSessionClaimClientGone: alice's call with id 7 runs on one
// replica (A, which made her session, or B, whose copy of it the call
// makes), on either path, and her client goes away (its connection
// drops) or cancels the call (notifications/cancelled). While the call
// runs, id 7 on the other replica is refused; once the call ended, its
// claim is released and id 7 on the other replica runs.
func TestSharedSessionClaimClientGone(t *testing.T) {
	for _, path := range []string{"fast", "go-sdk"} {
		for _, how := range []string{"disconnect", "cancel"} {
			for on, where := range []string{"A", "B's new copy"} {
				t.Run(path+"/"+how+"/"+where, func(t *testing.T) {
					c := newClaimRig(t, nil, nil)
					other := 1 - on
					ctx, drop := context.WithCancel(testCtx(t, 30*time.Second))
					defer drop()
					first := c.send(ctx, on, v1125, holdPaths[path])
					c.started("the call")
					if how == "disconnect" {
						drop()
						if a := within(t, first, 10*time.Second, "the dropped POST"); a.err == nil {
							t.Fatalf("the dropped POST: %d %q", a.status, a.body)
						}
						c.refused(other, v1125, holdFast, "id 7 on the other replica while the call runs")
						c.free()
					} else {
						drain(c.on(on).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
						waitFor(t, "the call cancelled at the server", func() bool { return c.hold.cancelled.Load() == 1 })
					}
					c.unclaimed("id 7 released once the call ended")
					c.runs(other, v1125, holdFast, "id 7 on the other replica once the call ended")
					if n := c.hold.runs.Load(); n != 2 {
						t.Errorf("the server ran %d calls, want 2", n)
					}
				})
			}
		}
	}
}

// TestSharedSessionClaimReplicaClose: alice's call with id 7 runs on A,
// on either path, her client gone; A closes: its claims are released,
// and id 7 on B runs.
func TestSharedSessionClaimReplicaClose(t *testing.T) {
	for _, path := range []string{"fast", "go-sdk"} {
		t.Run(path, func(t *testing.T) {
			c := newClaimRig(t, nil, nil)
			ctx, drop := context.WithCancel(testCtx(t, 30*time.Second))
			onA := c.send(ctx, 0, v1125, holdPaths[path])
			c.started("the call on A")
			drop()
			within(t, onA, 10*time.Second, "the dropped POST")
			c.refused(1, v1125, holdFast, "id 7 on B while A runs it")
			closed := make(chan error, 1)
			go func() { closed <- c.rs[0].g.Close() }()
			within(t, closed, 20*time.Second, "A's Close")
			c.unclaimed("A's claims released by its Close")
			c.runs(1, v1125, holdFast, "id 7 on B once A closed")
		})
	}
}

// TestSharedSessionClaimStoreFails: B's store fails when B claims a
// request (an error; a claim outlasting StoreTimeout): alice's call on B
// is refused with 503 on either path, the server never running it; once
// the store is back, it runs.
func TestSharedSessionClaimStoreFails(t *testing.T) {
	var fb *claimFailStore
	c := newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		fb = &claimFailStore{SessionStore: m}
		return []SessionStore{m, fb}
	}, func(g *Gateway) { g.shared.timeout = 200 * time.Millisecond })
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	for _, fail := range []*atomic.Bool{&fb.dead, &fb.block} {
		fail.Store(true)
		for name, body := range holdPaths {
			select {
			case a := <-c.send(testCtx(t, 30*time.Second), 1, v1125, body):
				if a.status != http.StatusServiceUnavailable {
					t.Errorf("%s call on B once its store fails: %d %q %v, want 503", name, a.status, a.body, a.err)
				}
			case <-c.hold.started:
				t.Fatalf("%s call on B ran unclaimed", name)
			case <-time.After(10 * time.Second):
				t.Fatalf("%s call on B: no answer", name)
			}
		}
		fail.Store(false)
	}
	if n := c.hold.runs.Load(); n != 0 {
		t.Errorf("the server ran %d calls", n)
	}
	c.runs(1, v1125, holdFast, "a call on B once its store is back")
	c.unclaimed("the call's claim released")
}

// TestClaimKey: request ids 1 and "1" are claimed apart; a long id is
// named by its hash, within maxClaimKey.
func TestClaimKey(t *testing.T) {
	ids := rpcIDs([]json.RawMessage{json.RawMessage(`1`), json.RawMessage(`"1"`), json.RawMessage(`"` + strings.Repeat("x", 5000) + `"`), json.RawMessage(`"` + strings.Repeat("x", 5001) + `"`)})
	keys := map[string]bool{}
	for _, id := range ids {
		k := claimKey(id)
		if len(k) > maxClaimKey+1 {
			t.Errorf("the key of %v is %d bytes", id, len(k))
		}
		keys[k] = true
	}
	if len(ids) != 4 || len(keys) != 4 {
		t.Errorf("%d ids, %d keys: %v", len(ids), len(keys), keys)
	}
}

// TestSharedSessionClaimSameIDAsSDK: alice's call with id 7 is in flight
// on A; she sends to B requests that go-sdk reads as id 7 (its decoder
// matches member names exactly: "ID" and "Method" are other members; 7.0
// and 7e0 are 7): B refuses each, the server running the call once. A
// string "7" is another id: it runs.
func TestSharedSessionClaimSameIDAsSDK(t *testing.T) {
	c := newClaimRig(t, nil, nil)
	onA := c.send(testCtx(t, 30*time.Second), 0, v1125, holdSDK)
	c.started("the call on A")
	params := `"params":{"name":"hold","arguments":{},"_meta":{"io.modelcontextprotocol/x":1}}`
	for what, body := range map[string]string{
		`"ID" after "id"`:         `{"jsonrpc":"2.0","id":7,"ID":99,"method":"tools/call",` + params + `}`,
		`"Id" after "id", fast`:   `{"jsonrpc":"2.0","id":7,"Id":"x","method":"tools/call","params":{"name":"hold","arguments":{}}}`,
		`"Method" after "method"`: `{"jsonrpc":"2.0","id":7,"method":"tools/call","Method":"",` + params + `}`,
		`"METHOD" in a batch`:     `[{"jsonrpc":"2.0","id":7,"method":"tools/call","METHOD":"",` + params + `}]`,
		`7.0`:                     `{"jsonrpc":"2.0","id":7.0,"method":"tools/call",` + params + `}`,
		`7e0`:                     `{"jsonrpc":"2.0","id":7e0,"method":"tools/call",` + params + `}`,
	} {
		v := v1125
		if strings.HasPrefix(body, "[") {
			v = "2025-03-26"
		}
		c.refused(1, v, body, what)
	}
	if n := c.hold.runs.Load(); n != 1 {
		t.Errorf("the server ran the call %d times, want once", n)
	}
	str := c.send(testCtx(t, 30*time.Second), 1, v1125, strings.Replace(holdSDK, `"id":7`, `"id":"7"`, 1))
	c.started(`id "7" on B while 7 runs on A`)
	c.free()
	c.free()
	for what, ch := range map[string]<-chan postAnswer{"A's answer": onA, `B's answer to "7"`: str} {
		if a := within(t, ch, 10*time.Second, what); a.status != http.StatusOK || !strings.Contains(a.body, "held run") {
			t.Errorf("%s: %d %q %v", what, a.status, a.body, a.err)
		}
	}
	c.unclaimed("every claim released")
}

// TestSharedSessionClaimRace: alice sends the same new id to A and B at
// once, round after round, on either path: each round the server runs
// one call, the other POST is refused as a duplicate in-flight id; once
// the call is answered, no claim is left.
func TestSharedSessionClaimRace(t *testing.T) {
	c := newClaimRig(t, nil, nil)
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	const rounds = 12
	for i := range rounds {
		body := strings.Replace(holdPaths[[]string{"fast", "go-sdk"}[i%2]], `"id":7`, `"id":`+itoa(100+i), 1)
		chs := []<-chan postAnswer{c.send(testCtx(t, 30*time.Second), 0, v1125, body), c.send(testCtx(t, 30*time.Second), 1, v1125, body)}
		c.started("round " + itoa(i) + ": a run")
		var refused, answered int
		for range 2 {
			var a postAnswer
			select {
			case a = <-chs[0]:
				chs[0] = nil
			case a = <-chs[1]:
				chs[1] = nil
			case <-c.hold.started:
				t.Fatalf("round %d: the server ran the call twice", i)
			case <-time.After(10 * time.Second):
				if refused == 0 {
					t.Fatalf("round %d: neither POST refused", i)
				}
				c.free()
				continue
			}
			switch {
			case a.status == http.StatusBadRequest && strings.Contains(a.body, "duplicate in-flight request ID"):
				refused++
				c.free()
			case a.status == http.StatusOK && strings.Contains(a.body, "held run"):
				answered++
			default:
				t.Errorf("round %d: %d %q %v", i, a.status, a.body, a.err)
			}
		}
		if refused != 1 || answered != 1 {
			t.Fatalf("round %d: %d refused, %d answered, want one each", i, refused, answered)
		}
	}
	if n := c.hold.runs.Load(); n != rounds {
		t.Errorf("the server ran %d calls in %d rounds", n, rounds)
	}
	c.unclaimed("no claim left")
}

// TestSharedSessionClaimReuseAtOnce: alice sends id 7 again as soon as
// she has its answer, to A or B, on either path, round after round:
// none is refused, and no claim is left.
func TestSharedSessionClaimReuseAtOnce(t *testing.T) {
	c := newClaimRig(t, nil, nil)
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	// Every pair of (replica, path), one after the other.
	for i := range 16 {
		for _, k := range []int{i / 4, i % 4} {
			path := []string{"fast", "go-sdk"}[k%2]
			c.runs(k/2, v1125, holdPaths[path], "round "+itoa(i)+" on "+[]string{"A", "B"}[k/2]+", "+path)
		}
	}
	c.unclaimed("no claim left")
}

// TestSharedSessionClaimOtherUser: bob, who knows alice's session id,
// sends requests under it, with ids alice then uses, to both replicas,
// on either path, and client answers and notifications under her ids:
// he is refused (403) and claims nothing, and alice's requests under
// those ids run.
func TestSharedSessionClaimOtherUser(t *testing.T) {
	c := newClaimRig(t, nil, nil)
	for r := range 2 {
		for _, body := range []string{holdFast, holdSDK, `[` + holdSDK + `]`} {
			resp := c.on(r).postAs(testCtx(t, 10*time.Second), "bob", body)
			drain(resp)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("bob's POST on replica %d: %d, want 403", r, resp.StatusCode)
			}
		}
	}
	// alice's own answers and notifications under id 7 claim nothing.
	for _, body := range []string{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`} {
		drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", body))
	}
	c.unclaimed("nothing claimed")
	if n := c.hold.runs.Load(); n != 0 {
		t.Errorf("the server ran %d calls", n)
	}
	c.runs(0, v1125, holdFast, "alice's id 7 on A")
	c.runs(1, v1125, holdSDK, "alice's id 7 on B")
	c.unclaimed("no claim left")
}

// TestSharedSessionClaimRerunnable: replica B's store fails every claim.
// alice's requests that change nothing run twice (ping, lists, reads,
// completions, log level, tasks' queries) are served on B all the same:
// they are not claimed, and cost no store round trip for it; a tool call,
// a batch holding one, and a request of a method the gateway does not
// know are claimed (503: never run unclaimed). A ping under the id of
// her call in flight on A is answered, not refused.
func TestSharedSessionClaimRerunnable(t *testing.T) {
	var fb *claimFailStore
	c := newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		fb = &claimFailStore{SessionStore: m}
		return []SessionStore{m, fb}
	}, nil)
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	call := c.send(testCtx(t, 30*time.Second), 0, v1125, holdFast)
	c.started("alice's call with id 7 on A")
	fb.dead.Store(true)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":9,"method":"prompts/list"}`,
		`{"jsonrpc":"2.0","id":10,"method":"resources/list"}`,
		`{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tasks/list"}`,
	} {
		a := within(t, c.send(testCtx(t, 30*time.Second), 1, v1125, body), 10*time.Second, body)
		if a.status != http.StatusOK || !strings.Contains(a.body, `"id":`) || strings.Contains(a.body, "duplicate") {
			t.Errorf("%s on B, whose store fails claims: %d %q %v, want its answer", body, a.status, a.body, a.err)
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"hold","arguments":{}}}`,
		`[{"jsonrpc":"2.0","id":21,"method":"ping"},{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"hold","arguments":{}}}]`,
		`{"jsonrpc":"2.0","id":23,"method":"x/unknown"}`,
	} {
		select {
		case a := <-c.send(testCtx(t, 30*time.Second), 1, v1125, body):
			if a.status != http.StatusServiceUnavailable {
				t.Errorf("%s on B, whose store fails claims: %d %q %v, want 503", body, a.status, a.body, a.err)
			}
		case <-c.hold.started:
			t.Fatalf("%s on B ran unclaimed", body)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on B: no answer", body)
		}
	}
	c.free()
	if a := within(t, call, 10*time.Second, "alice's call on A"); a.status != http.StatusOK || !strings.Contains(a.body, "held run 1") {
		t.Errorf("alice's call on A: %d %q %v", a.status, a.body, a.err)
	}
	if n := c.hold.runs.Load(); n != 1 {
		t.Errorf("the server ran %d calls, want 1", n)
	}
}

// TestSharedSessionReplayIDsNotClients: alice has a call in flight on
// replica B, on go-sdk's path, under the id "replay-level"; she sets her
// log level on replica A. Her next request on B has B's copy apply the
// level first, under an id of the gateway's own that no client's request
// in flight can hold: go-sdk does not refuse it as a duplicate, and B
// logs no change it could not apply.
func TestSharedSessionReplayIDsNotClients(t *testing.T) {
	logs := &lockedBuffer{}
	n := 0
	c := newClaimRig(t, nil, func(g *Gateway) {
		if n++; n == 2 {
			g.log = slog.New(slog.NewTextHandler(logs, nil))
		}
	})
	drain(c.on(1).postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	call := c.send(testCtx(t, 30*time.Second), 1, v1125, strings.Replace(holdSDK, `"id":7`, `"id":"replay-level"`, 1))
	c.started("alice's call with id \"replay-level\" on B")
	if a := within(t, c.send(testCtx(t, 30*time.Second), 0, v1125, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`), 10*time.Second, "setLevel on A"); a.status != http.StatusOK {
		t.Fatalf("alice's setLevel on A: %d %q %v", a.status, a.body, a.err)
	}
	if a := within(t, c.send(testCtx(t, 30*time.Second), 1, v1125, `{"jsonrpc":"2.0","id":3,"method":"ping"}`), 10*time.Second, "ping on B"); a.status != http.StatusOK {
		t.Fatalf("alice's ping on B: %d %q %v", a.status, a.body, a.err)
	}
	if strings.Contains(logs.String(), "could not be applied") {
		t.Errorf("B could not apply alice's log level to its copy: %s", logs.String())
	}
	c.free()
	if a := within(t, call, 10*time.Second, "alice's call on B"); a.status != http.StatusOK || !strings.Contains(a.body, "held run") {
		t.Errorf("alice's call on B: %d %q %v", a.status, a.body, a.err)
	}
}
