package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCancelReachesItsOwnRequest: two clients' calls to one server are in
// flight through the gateway (on its client's fast path when it takes
// one); one client gives up on its call. The server is told to cancel
// that call's request, by its id, and the other call is answered.
func TestCancelReachesItsOwnRequest(t *testing.T) {
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			up := testserver.StartScriptedHTTP(t, testserver.Legacy, false)
			g, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, nil)
			script := func(who string) map[string]any {
				var m map[string]any
				b := testserver.HTTPScriptArgs(testserver.HTTPScript{Gate: who,
					Body: `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"` + who + `"}]}}`})
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
			a, b := connect(t, url, v, nil), connect(t, url, v, nil)
			actx, cancelA := context.WithCancel(testCtx(t, 30*time.Second))
			defer cancelA()
			aDone := make(chan error, 1)
			var wg sync.WaitGroup
			var bErr error
			var bRes *mcp.CallToolResult
			wg.Go(func() {
				_, err := a.CallTool(actx, &mcp.CallToolParams{Name: testserver.ScriptedTool, Arguments: script("alice")})
				aDone <- err
			})
			// Alice's call first, in flight at the server (when the
			// gateway lets both go at once, bob's too).
			select {
			case <-up.Reached("alice"):
			case <-time.After(20 * time.Second):
				t.Fatal("alice's call never reached the server")
			}
			// Alice's call counts once in flight, or twice when it runs
			// parked (a 2026-07-28 client of a handshake-era server).
			alone := g.inflightCount()
			wg.Go(func() {
				bRes, bErr = b.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: testserver.ScriptedTool, Arguments: script("bob")})
			})
			waitUntil(t, "bob's call at the gateway", func() bool { return len(up.Calls()) == 2 || g.inflightCount() > alone })
			aliceID := up.Calls()[0].ID
			cancelA()
			if err := <-aDone; err == nil {
				t.Error("the cancelled call succeeded")
			}
			waitUntil(t, "the server told to cancel", func() bool { return len(up.Cancelled()) > 0 })
			up.Open("bob")
			wg.Wait()
			if bErr != nil || texts(bRes) != "bob" {
				t.Errorf("the other call: %v %q", bErr, texts(bRes))
			}
			if got := up.Cancelled(); len(got) != 1 || got[0] != aliceID {
				t.Errorf("the server was told to cancel %v, want alice's request %s only", got, aliceID)
			}
			up.Open("alice")
		})
	}
}
