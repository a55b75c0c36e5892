package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHeaderToolServer serves, stateless at 2026-07-28, a tool region
// whose input schema binds its argument region to the header
// Mcp-Param-Region with the key x-mcp-header written as key (escaped, say).
func startHeaderToolServer(t *testing.T, key string) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "hdr", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"region":{"type":"string",` + key + `:"Region"}}}`)
	s.AddTool(&mcp.Tool{Name: "region", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + string(req.Params.Arguments)}}}, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestFastPathParamHeaderSchemas: a tool whose schema binds an argument to
// a header (x-mcp-header, its key written plainly, escaped, or in other
// case) has its calls checked for that header as go-sdk's handler checks
// them: a call without the header is refused alike on both paths, and
// never runs on the fast path.
func TestFastPathParamHeaderSchemas(t *testing.T) {
	for _, key := range []string{`"x-mcp-header"`, `"x-mcp-he\u0061der"`, `"\u0078-mcp-header"`, `"X-MCP-HEADER"`} {
		t.Run(key, func(t *testing.T) {
			up := startHeaderToolServer(t, key)
			servers := []Server{{Name: "hdr", Target: up}}
			fast, fastURL := startGateway(t, servers, &Options{})
			_, slowURL := startGateway(t, servers, &Options{slowPathOnly: true})
			c := fastCase{name: "no header", header: map[string]string{"Mcp-Name": "region"}, body: fastCall("1", `"region"`, `{"region":"eu"}`)}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(c.body))
			for k, v := range fastHeaders("region") {
				req.Header.Set(k, v)
			}
			if _, ok := fast.cat.tool("region"); !ok {
				t.Fatalf("the gateway lists %v", fast.cat.toolNames())
			}
			got, want := sendCase(t, fastURL, c), sendCase(t, slowURL, c)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fast path answered\n%s\ngo-sdk answered\n%s", dump(got), dump(want))
			}
			if fast.fastRequestOf(req) != nil && want.Status == http.StatusBadRequest {
				t.Errorf("the fast path takes a call go-sdk refuses: %s", dump(want))
			}
		})
	}
}

// TestFastPathCloseMidCall: the gateway closing while a call runs on the
// fast path ends the call's HTTP request as it ends one on go-sdk's
// handler: neither waits for the client to go away.
func TestFastPathCloseMidCall(t *testing.T) {
	for _, slowOnly := range []bool{true, false} {
		up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "up", Era: testserver.Modern}), testserver.Stateless())
		g, u := startGateway(t, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: slowOnly})
		done := make(chan string, 1)
		go func() {
			req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, u, strings.NewReader(fastCall("1", `"slow"`, `{"ms":6000}`)))
			for k, v := range fastHeaders("slow") {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			done <- resp.Status + " " + string(b)
		}()
		deadline := time.Now().Add(5 * time.Second)
		for g.inflightCount() == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		closed := make(chan error, 1)
		go func() { closed <- g.Close() }()
		select {
		case a := <-done:
			t.Logf("slow path only %v: the call got %s", slowOnly, a)
		case <-time.After(4 * time.Second):
			t.Errorf("slow path only %v: the call's request still runs 4s after the gateway closed", slowOnly)
		}
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Errorf("slow path only %v: Close still runs", slowOnly)
		}
	}
}
