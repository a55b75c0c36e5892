package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSessionCapInitializeReadAsSDK: at a cap of 1 with the one session
// busy (its standalone stream open), a hostile client sends initialize
// requests that go-sdk reads as one and a lenient reader does not: a
// member "Method" after "method" (go-sdk matches keys exactly, the
// last of members named alike in any case wins in encoding/json), and
// data after the message or the batch (go-sdk reads the first value).
// Each is refused (503) with no session made: go-sdk holds one session.
func TestSessionCapInitializeReadAsSDK(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{MaxSessions: 1})
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	first := rawInitialize(t, hc, url, "")
	if first.status != http.StatusOK || first.id == "" {
		t.Fatalf("the first session: %d %q", first.status, first.body)
	}
	openStream(t, url, first.id, "")
	waitIdle(t, g, 0)
	params := `"params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"}}`
	for _, c := range []struct{ name, version, body string }{
		{"a member Method after method", "2025-03-26", `{"jsonrpc":"2.0","id":1,"method":"initialize","Method":"ping",` + params + `}`},
		{"a member METHOD after method, no version", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","METHOD":"ping",` + params + `}`},
		{"data after the message", "2025-03-26", `{"jsonrpc":"2.0","id":1,"method":"initialize",` + params + `} x`},
		{"data after a batch", "2025-03-26", `[{"jsonrpc":"2.0","id":1,"method":"initialize",` + params + `}] x`},
	} {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		if c.version != "" {
			h["Mcp-Protocol-Version"] = c.version
		}
		st := rawPostNoSession(t, hc, url, c.body, h)
		n := countSessions(g.server)
		all, _ := g.slots.taken("")
		t.Logf("%s: answered %d; go-sdk holds %d sessions, %d places taken", c.name, st, n, all)
		if st != http.StatusServiceUnavailable || n != 1 || all != 1 {
			t.Errorf("%s, past a cap of 1: answered %d, go-sdk holds %d sessions and %d places are taken; want 503, 1 and 1", c.name, st, n, all)
		}
	}
}

// TestSessionCapSharedCallInFlightBusy: with shared sessions, a replica
// at its cap of 1 whose one copy has a call in go-sdk's session (its
// client dropped the call's stream, to resume it later) refuses another
// principal's initialize (503) rather than end the copy and the call
// with it; once the call's client cancels it, the copy is idle and
// the next initialize ends it.
func TestSessionCapSharedCallInFlightBusy(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicasWith(t, []SessionStore{store}, old.URL, Options{MaxSessions: 1, MaxSessionsPerPrincipal: -1})
	g, url := rs[0].g, rs[0].ts.URL+"/mcp"
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	a := rawInitialize(t, hc, url, "carol")
	if a.status != http.StatusOK || a.id == "" {
		t.Fatalf("carol's session: %d %q", a.status, a.body)
	}
	s := &rawSession{t: t, url: url, id: a.id}
	s.postAs(testCtx(t, 10*time.Second), "carol", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// sdkMeta: the call is go-sdk's, whose stream can be resumed.
	dropAfterPrime(t, s.postAs(ctx, "carol", `{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"slow","arguments":{"ms":60000},"_meta":{"progressToken":"p","io.modelcontextprotocol/x":1}}}`), cancel)
	waitFor(t, "the call's POST served", func() bool { return g.posts.Load() == 0 })
	if d := rawInitialize(t, hc, url, "dave"); d.status != http.StatusServiceUnavailable {
		t.Fatalf("dave's initialize while carol's call is in flight in her session's copy: %d %q, want 503", d.status, d.body)
	}
	if g.shared.held(a.id) == nil {
		t.Fatal("carol's copy, with a call in flight, was ended")
	}
	s.postAs(testCtx(t, 10*time.Second), "carol", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long"}}`).Body.Close()
	waitIdle(t, g, 1)
	if d := rawInitialize(t, hc, url, "dave"); d.status != http.StatusOK || d.id == "" {
		t.Fatalf("dave's initialize once carol's copy is idle: %d %q, want a session", d.status, d.body)
	}
	if g.shared.held(a.id) != nil {
		t.Fatal("carol's idle copy was not ended at the cap")
	}
}
