package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSharedSessionClaimScopeTricks: replica B's store fails every claim,
// so that a request B does not claim runs there and one it claims is
// refused (503). alice sends B tool calls dressed as requests that are
// not claimed: a batch naming one id for a ping and a tool call (in both
// orders), a "method" member named twice (in both orders), "Method" next
// to "method", an escaped method name, a tool call with a task, and
// methods a letter or a space away from tools/call. The server never runs
// the tool on B: each is refused, or read by go-sdk as what the gateway
// read it as (not a tool call).
func TestSharedSessionClaimScopeTricks(t *testing.T) {
	var fb *claimFailStore
	c := newClaimRig(t, func(m *MemorySessionStore) []SessionStore {
		fb = &claimFailStore{SessionStore: m}
		return []SessionStore{m, fb}
	}, nil)
	fb.dead.Store(true)
	const call = `"params":{"name":"hold","arguments":{}}`
	for _, tc := range []struct{ v, body string }{
		{v0326, `[{"jsonrpc":"2.0","id":30,"method":"ping"},{"jsonrpc":"2.0","id":30,"method":"tools/call",` + call + `}]`},
		{v0326, `[{"jsonrpc":"2.0","id":31,"method":"tools/call",` + call + `},{"jsonrpc":"2.0","id":31,"method":"ping"}]`},
		{v0326, `[{"jsonrpc":"2.0","id":"32","method":"ping"},{"jsonrpc":"2.0","id":32,"method":"tools/call",` + call + `}]`},
		{v1125, `{"jsonrpc":"2.0","id":33,"method":"ping","method":"tools/call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":34,"method":"tools/call","method":"ping",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":35,"Method":"tools/call","method":"ping",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":36,"method":"ping","Method":"tools/call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":37,"method":"tools\/c\u0061ll",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"hold","arguments":{},"task":{"ttl":60000}}}`},
		{v1125, `{"jsonrpc":"2.0","id":39,"method":"Tools/Call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":40,"method":" tools/call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":41,"method":"tools/call ",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":42,"method":"ping",` + call + `,"params":{"name":"hold","arguments":{}}}`},
		{v1125, "\ufeff" + `{"jsonrpc":"2.0","id":43,"method":"tools/call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":44.0,"method":"tools/call",` + call + `}`},
		{v1125, `{"jsonrpc":"2.0","id":45,"method":"tasks/result","params":{"taskId":"hold.00000000000000000000000000000000"},"method":"tools/call",` + call + `}`},
	} {
		ch := c.send(testCtx(t, 30*time.Second), 1, tc.v, tc.body)
		select {
		case a := <-ch:
			if a.status == http.StatusOK && strings.Contains(a.body, "held run") {
				t.Errorf("%s on B, whose store fails claims: ran unclaimed: %q", tc.body, a.body)
			}
			t.Logf("%s: %d %.160q", tc.body, a.status, a.body)
		case <-c.hold.started:
			t.Errorf("%s on B, whose store fails claims: the server ran it unclaimed", tc.body)
			c.free()
			within(t, ch, 30*time.Second, tc.body)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on B: no answer", tc.body)
		}
	}
	if n := c.hold.runs.Load(); n != 0 {
		t.Errorf("the server ran %d calls, want 0", n)
	}
}
