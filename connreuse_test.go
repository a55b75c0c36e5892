package mcpadapter_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
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
// connection, and the next call would dial a new one.
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

// TestHTTPConnectionsReusedConcurrent: calls made in parallel bursts keep
// their keep-alive connections between bursts. http.DefaultTransport keeps
// 2 idle connections per host, so each burst of 8 calls dialled 6 new
// ones (and a sequential caller dials one whenever a call starts while the
// previous response is still being read: callcost measured 0.06 new
// connections per call on a busy machine).
func TestHTTPConnectionsReusedConcurrent(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Modern})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var conns atomic.Int64
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{Name: "reuse-burst"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	const workers, rounds = 8, 20
	before := conns.Load()
	for r := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				// The server answers after 20 ms, so the burst's calls
				// overlap and need their own connections.
				res, err := c.CallTool(ctx, "slow", json.RawMessage(`{"ms":20}`), nil)
				if err == nil && res.IsError {
					err = fmt.Errorf("error result %q", res.Text())
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", r, err)
			}
		}
	}
	n := conns.Load() - before
	t.Logf("%d bursts of %d calls, %d new TCP connections", rounds, workers, n)
	if n > 2*workers {
		t.Errorf("%d bursts of %d parallel calls opened %d new TCP connections, want at most %d (the first burst's, and a few more)", rounds, workers, n, 2*workers)
	}
}
