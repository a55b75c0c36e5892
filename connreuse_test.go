package mcpadapter_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPConnectionsReused: sequential calls over streamable HTTP reuse
// their keep-alive connection. A call's context ends when the call
// returns, while go-sdk may still be reading the end of the response's
// event stream; a request context cancelled then makes net/http drop the
// connection, and the next call dials a new one (issue 19: 42–46% of
// calls did).
func TestHTTPConnectionsReused(t *testing.T) {
	t.Parallel()
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := testserver.New(testserver.Options{Era: era})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
			var conns atomic.Int64
			hs := httptest.NewUnstartedServer(h)
			hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			hs.Start()
			t.Cleanup(hs.Close)
			c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Name: "reuse"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Connect(ctx); err != nil {
				t.Fatal(err)
			}
			before := conns.Load()
			const calls = 200
			for i := range calls {
				res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"x"}`), nil)
				if err != nil || res.IsError {
					t.Fatalf("call %d: %v %+v", i, err, res)
				}
			}
			n := conns.Load() - before
			t.Logf("%d calls, %d new TCP connections", calls, n)
			if float64(n) > 0.01*calls {
				t.Errorf("%d calls opened %d new TCP connections (%.3f per call), want at most 0.01 per call", calls, n, float64(n)/calls)
			}
		})
	}
}
