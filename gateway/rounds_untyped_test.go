package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamRoundWithoutResultType: a 2026-07-28 server that asks for
// input with inputRequests but leaves resultType out (as a server may)
// is relayed as a round, as this library's client reads one: clients of
// both versions are asked once, their answer reaches the server with its
// requestState, and the call ends with the server's result.
func TestUpstreamRoundWithoutResultType(t *testing.T) {
	var answered atomic.Int32
	srv := mcp.NewServer(&mcp.Implementation{Name: "untyped"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState != "s1" {
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}},
				RequestState:  "s1",
			}, nil
		}
		answered.Add(1)
		b, _ := json.Marshal(req.Params.InputResponses["q"])
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered " + string(b)}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		req, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(req))
		if !bytes.Contains(req, []byte(`"tools/call"`)) {
			h.ServeHTTP(w, r) // a stream such as subscriptions/listen stays open
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"resultType":"input_required",`), nil)
		body = bytes.ReplaceAll(body, []byte(`,"resultType":"input_required"`), nil)
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				w.Header()[k] = v
			}
		}
		w.WriteHeader(rec.Code)
		_, _ = io.Copy(w, bytes.NewReader(body))
	}))
	t.Cleanup(up.Close)
	_, url := startGateway(t, []Server{{Name: "untyped", Target: up.URL}}, nil)
	for _, v := range []string{v0728, v1125} {
		t.Run(v, func(t *testing.T) {
			var asked atomic.Int32
			before := answered.Load()
			cs := connect(t, url, v, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Add(1)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			}})
			res, err := cs.CallTool(testCtx(t, 20*time.Second), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
			if err != nil || !strings.Contains(texts(res), `"ok":true`) {
				t.Fatalf("%q, %v", texts(res), err)
			}
			if asked.Load() != 1 || answered.Load()-before != 1 {
				t.Errorf("asked %d times, the server took %d answers; want 1 and 1", asked.Load(), answered.Load()-before)
			}
		})
	}
}
