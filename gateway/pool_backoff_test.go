package gateway

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPoolWaitingCallTriesAgainAfterBackoff: a handshake-era server over
// streamable HTTP that refuses one handshake (503: a moment of overload)
// after the shared connection's. While bob's slow call holds the shared
// connection, carol's call (a client that can be asked) finds the extra
// connection opened for it refused and waits; once the pool may open one
// again (a second later) it does, and carol's call runs then, not only
// after bob's call.
func TestPoolWaitingCallTriesAgainAfterBackoff(t *testing.T) {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testserver.New(testserver.Options{Era: testserver.Legacy}) }, nil)
	var inits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			if strings.Contains(string(body), `"initialize"`) && inits.Add(1) == 2 {
				http.Error(w, "overloaded", http.StatusServiceUnavailable)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	_, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, &Options{})
	bob := connect(t, url, v1125, declining)
	carol := connect(t, url, v1125, declining)
	ctx := testCtx(t, 60*time.Second)
	bobDone := make(chan error, 1)
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 8000}})
		bobDone <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	res, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "carol's"}})
	if err != nil || texts(res) != "carol's" {
		t.Fatalf("carol's call: %v %q", err, texts(res))
	}
	d := time.Since(start)
	t.Logf("carol's call after a refused extra connection: %v (handshakes: %d)", d, inits.Load())
	if d > 4*time.Second {
		t.Errorf("carol's call took %v: it waited for bob's call, not for the pool's pause after one refused handshake", d)
	}
	if err := <-bobDone; err != nil {
		t.Fatalf("bob's call: %v", err)
	}
}
