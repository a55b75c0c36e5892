package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestClientCancelReachesServer: a client that gives up on a call (a
// handshake-era client's notifications/cancelled, a 2026-07-28 client's
// closed request) cancels the server's call, for servers of both eras.
func TestClientCancelReachesServer(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Modern, testserver.Legacy} {
		srv, st := testserver.NewWithState(testserver.Options{Era: era})
		hs := testserver.StartStreamable(t, srv, func(o *mcp.StreamableHTTPOptions) {
			o.Stateless = era == testserver.Modern
			o.PropagateRequestCancellation = true
		})
		_, url := startGateway(t, []Server{{Name: "s", Target: hs.URL}}, nil)
		for i, v := range []string{v1125, v0728} {
			t.Run(era.String()+"/"+v, func(t *testing.T) {
				cs := connect(t, url, v, nil)
				ctx, cancel := context.WithCancel(testCtx(t, 30*time.Second))
				go func() {
					_ = st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") > i })
					time.Sleep(100 * time.Millisecond)
					cancel()
				}()
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}})
				if err == nil {
					t.Fatal("a cancelled call succeeded")
				}
				wctx := testCtx(t, 10*time.Second)
				if err := st.Wait(wctx, func(s *testserver.State) bool { return s.Cancellations() > i }); err != nil {
					t.Fatalf("the server's call was not cancelled: %d cancellations", st.Cancellations())
				}
			})
		}
	}
}
