package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSharedSessionsNegotiatedVersion: a client that asks for a protocol
// version the gateway does not speak gets the gateway's version, and its
// session is served by every replica, under that version.
func TestSharedSessionsNegotiatedVersion(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	code, id, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", "", "",
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if code != http.StatusOK || id == "" || !strings.Contains(body, `"protocolVersion":"`+v1125+`"`) {
		t.Fatalf("initialize: %d %q %s", code, id, body)
	}
	if code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", code, body)
	}
	for i := range 3 {
		if code, _, body := rawPost(t, ctx, rs[1].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
			t.Errorf("request %d on the other replica: %d %s", i, code, body)
		}
	}
	if n := sessionsWithID(rs[1].g, id); n != 1 {
		t.Errorf("the other replica has %d sessions with the id, want 1", n)
	}
}
