//lint:file-ignore SA1019 a handshake-era client's roots capability, deprecated in 2026-07-28, is compared as it came

package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSharedSessionFastDifferential: with shared sessions, a session made
// on one replica and called on another (its copy made there from the
// store's record) gets the same answers from a pair of replicas with the
// session fast path as from a pair without it, to the fast path's good,
// bad and hostile requests; the plain calls are answered on the fast path
// of the replica that got them. Once the session asks for log messages
// on the replica that made it, the other replica applies the change
// before its next call, whose log messages and progress reports go on
// the call's own stream.
func TestSharedSessionFastDifferential(t *testing.T) {
	servers := diffServers(t)
	pair := func(slowOnly bool) (a, b *Gateway, aURL, bURL string) {
		store := &MemorySessionStore{}
		oa, ob := diffOptions(false, slowOnly), diffOptions(false, slowOnly)
		oa.Sessions, ob.Sessions = &SessionOptions{Store: store}, &SessionOptions{Store: store}
		a, aURL = startGateway(t, servers, oa)
		b, bURL = startGateway(t, servers, ob)
		return a, b, aURL, bURL
	}
	_, fastB, fastA, fastBURL := pair(false)
	_, slowB, slowA, slowBURL := pair(true)
	t.Cleanup(func() {
		if n := slowB.sessionFast.Load(); n != 0 {
			t.Errorf("%d calls took the fast path of a replica without it", n)
		}
	})
	fs, ss := rawInit(t, fastA, `{}`), rawInit(t, slowA, `{}`)

	wantFast := map[string]bool{
		"echo": true, "string id": true, "unicode text": true, "policy denial": true, "tool error": true,
		"upstream dies mid-call": true, "no meta": true, "arguments null": true, "meta first": true,
		"bad arguments": true, "wrong argument type": true, "result type input_required": true,
		"huge id": false, "unknown tool": false, "progress token": true, "batch": false,
		"meta version old": false, "task": true, // its task member lifted into _meta (liftTask)
		"unknown request state": false, "Accept json only": false,
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
			before := fastB.sessionFast.Load()
			sameSessionAnswers(t, fastBURL, fbody, fheader, slowBURL, sbody, sheader)
			n := fastB.sessionFast.Load() - before
			if w, ok := wantFast[c.name]; ok && (n == 1) != w {
				t.Errorf("%d calls took the session fast path, want it taken: %v", n, w)
			}
			taken += int(n)
		})
	}
	if taken < 40 {
		t.Errorf("%d requests took the session fast path on the replica holding a copy, want most plain calls (40 or more)", taken)
	}

	setLevelInfo(t, fs, ss)
	for _, c := range streamedFastCases() {
		t.Run("log level info/"+c.name, func(t *testing.T) {
			c.body = logLevelRE.ReplaceAllString(c.body, "")
			fbody, fheader := sessionCase(c, fs.id)
			sbody, sheader := sessionCase(c, ss.id)
			before := fastB.sessionFast.Load()
			got := sameSessionAnswers(t, fastBURL, fbody, fheader, slowBURL, sbody, sheader)
			if n := fastB.sessionFast.Load() - before; n != 1 && !c.session {
				t.Errorf("%d calls took the session fast path, want 1", n)
			}
			if raw, _ := json.Marshal(got.Body); !c.session && !strings.Contains(string(raw), c.want) {
				t.Errorf("the answer %.2000s holds no %s", raw, c.want)
			}
		})
	}
}

// TestSharedSessionFastReplicas: a session made on replica A and called
// on replica B takes B's fast path for its own principal only; another
// principal naming it is refused as go-sdk refuses it, and once its
// client ended it on A, B serves it on no path.
func TestSharedSessionFastReplicas(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicasWith(t, []SessionStore{store, store}, old.URL, Options{})
	a, b := rs[0].ts.URL+"/mcp", rs[1].ts.URL+"/mcp"
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	s := rawInitialize(t, hc, a, "alice")
	if s.status != http.StatusOK || s.id == "" {
		t.Fatalf("initialize on A: %d %q", s.status, s.body)
	}
	onA := &rawSession{t: t, url: a, id: s.id}
	resp := onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	onB := &rawSession{t: t, url: b, id: s.id}
	call := func(token string, id int) (int, string) {
		resp := onB.postAs(testCtx(t, 10*time.Second), token, `{"jsonrpc":"2.0","id":`+itoa(id)+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"from `+token+`"}}}`)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	gb := rs[1].g
	for i := range 3 {
		before := gb.sessionFast.Load()
		status, body := call("alice", 10+i)
		if status != http.StatusOK || !strings.Contains(body, "from alice") {
			t.Fatalf("alice's call %d on B: %d %q", i, status, body)
		}
		if n := gb.sessionFast.Load() - before; n != 1 {
			t.Errorf("alice's call %d on B: %d calls on B's fast path, want 1", i, n)
		}
	}
	before := gb.sessionFast.Load()
	if status, body := call("bob", 20); status != http.StatusForbidden || strings.Contains(body, "from bob") {
		t.Errorf("bob's call in alice's session on B: %d %q, want 403 and no answer", status, body)
	}
	if n := gb.sessionFast.Load() - before; n != 0 {
		t.Errorf("bob's call in alice's session took B's fast path (%d)", n)
	}
	rawDelete(t, hc, a, s.id, "alice")
	if status, body := call("alice", 30); status != http.StatusNotFound || strings.Contains(body, "from alice") {
		t.Errorf("alice's call on B after she ended the session on A: %d %q, want 404", status, body)
	}
	if n := gb.sessionFast.Load() - before; n != 0 {
		t.Errorf("a call after the session ended took B's fast path (%d)", n)
	}
	waitFor(t, "B's copy of the ended session forgotten", func() bool { return gb.live.get(s.id, "alice") == nil })
}

// TestSharedSessionCopyCapabilities: the copy of a session another
// replica makes from its record has the capabilities its client declared
// in its initialize request, no more: a client without roots is not
// taken, on the other replica, for one a server can ask for its roots.
func TestSharedSessionCopyCapabilities(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	oa, ob := &Options{Sessions: &SessionOptions{Store: store}}, &Options{Sessions: &SessionOptions{Store: store}}
	ga, aURL := startGateway(t, []Server{{Name: "s", Target: old.URL}}, oa)
	gb, bURL := startGateway(t, []Server{{Name: "s", Target: old.URL}}, ob)
	for _, caps := range []string{`{}`, `{"roots":{}}`, `{"roots":{"listChanged":true}}`, `{"elicitation":{}}`, `{"sampling":{},"roots":{"listChanged":false}}`} {
		t.Run(caps, func(t *testing.T) {
			s := rawInit(t, aURL, caps)
			onB := &rawSession{t: t, url: bURL, id: s.id}
			resp := onB.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("ping on B: %s", resp.Status)
			}
			var want, got *mcp.ClientCapabilities
			for ss := range ga.server.Sessions() {
				if ss.ID() == s.id {
					want = ss.InitializeParams().Capabilities
				}
			}
			for ss := range gb.server.Sessions() {
				if ss.ID() == s.id {
					got = ss.InitializeParams().Capabilities
				}
			}
			if want == nil || got == nil {
				t.Fatalf("the session on A (%v) or its copy on B (%v) is missing", want != nil, got != nil)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("B's copy has capabilities %+v (roots %v), the client declared %+v (roots %v)", got, got.RootsV2, want, want.RootsV2)
			}
			if canBeAsked(got) != canBeAsked(want) {
				t.Errorf("B's copy can be asked: %v, the client: %v", canBeAsked(got), canBeAsked(want))
			}
		})
	}
}
