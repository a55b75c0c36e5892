package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callIDRecorder is an HTTP transport that records the JSON-RPC id of
// every tools/call the client POSTs.
type callIDRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	ids  []string
}

func (r *callIDRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			_ = body.Close()
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(bytes.TrimSpace(data), &msg) == nil && msg.Method == "tools/call" {
				r.mu.Lock()
				r.ids = append(r.ids, string(msg.ID))
				r.mu.Unlock()
			}
		}
	}
	return r.base.RoundTrip(req)
}

func (r *callIDRecorder) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ids) == 0 {
		return ""
	}
	return r.ids[len(r.ids)-1]
}

// The fast path against a server nobody here wrote: server-everything over
// streamable HTTP (2025-11-25, event streams) gives the same results with
// and without it, including a call during which the server elicits.
func TestHTTPFastPathEverything(t *testing.T) {
	t.Parallel()
	url := testenv.StartEverythingHTTP(t, testenv.TransportStreamable)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mk := func(disable bool) (*mcpadapter.Client, *callIDRecorder) {
		rec := &callIDRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
		c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
			DisableFastPath: disable, Logger: quietLogger(), HTTPClient: &http.Client{Transport: rec},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c, rec
	}
	fast, frec := mk(false)
	sdk, _ := mk(true)
	for _, call := range []struct{ tool, args string }{
		{"echo", `{"message":"hello"}`},
		{"get-sum", `{"a":2,"b":3}`},
		{"get-structured-content", `{"location":"Chicago"}`},
		{"get-tiny-image", `{}`},
		{"get-resource-links", `{"count":2}`},
		{"trigger-elicitation-request", `{}`},
		{"get-sum", `{"a":"not a number"}`},
	} {
		one := func(c *mcpadapter.Client) string {
			res, err := c.CallTool(ctx, call.tool, json.RawMessage(call.args), nil)
			return describe(outcome{res: res, err: errText(err)})
		}
		f := one(fast)
		if id := frec.last(); fastID(id) != mcpadapter.FastPathBuilt {
			t.Errorf("%s: sent with id %s; fast path built: %v", call.tool, id, mcpadapter.FastPathBuilt)
		}
		if s := one(sdk); f != s {
			t.Errorf("%s %s:\nfast path: %s\ngo-sdk:    %s", call.tool, call.args, f, s)
		}
	}
}
