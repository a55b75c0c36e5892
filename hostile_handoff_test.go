package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireRecorder records the JSON-RPC messages the client POSTs, as they
// leave it: each tools/call's id with the status of its answer, and each
// notifications/cancelled's requestId.
type wireRecorder struct {
	base http.RoundTripper

	mu      sync.Mutex
	calls   []wireCall
	cancels []string
}

type wireCall struct {
	tool, id string
	status   int
}

func (r *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(body)
			_ = body.Close()
			_ = json.Unmarshal(bytes.TrimSpace(data), &msg)
		}
	}
	resp, err := r.base.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch msg.Method {
	case "tools/call":
		c := wireCall{tool: msg.Params.Name, id: string(msg.ID)}
		if err == nil {
			c.status = resp.StatusCode
		}
		r.calls = append(r.calls, c)
	case "notifications/cancelled":
		r.cancels = append(r.cancels, string(msg.Params.RequestID))
	}
	return resp, err
}

func (r *wireRecorder) seen() ([]wireCall, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]wireCall(nil), r.calls...), append([]string(nil), r.cancels...)
}

// TestHTTPHandOffCancelAfterReauth: a fast-path call answered 401 (the
// access token expired) is handed over to go-sdk, which signs in again and
// sends the call itself, under its own id; the server runs that one. When
// the caller then gives up, the cancellation that reaches the server names
// the request it runs (go-sdk's id), not the fast path's refused POST.
// (The server is stateless, so the cancellation is checked as it leaves
// the client.)
func TestHTTPHandOffCancelAfterReauth(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	mcp.AddTool(srv, &mcp.Tool{Name: "hold", Description: "works until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			entered <- struct{}{}
			select {
			case <-ctx.Done():
			case <-release:
			}
			return nil, nil, errors.New("stopped")
		})
	as := testauth.Start(t, testauth.Options{MCP: srv})
	t.Cleanup(func() { close(release) }) // before the server closes, which waits for the handler
	user := &browser{}
	rec := &wireRecorder{base: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: user.open}, ConnectTimeout: 10 * time.Second,
		Logger: quietLogger(), HTTPClient: &http.Client{Transport: rec},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	echoOK(t, ctx, c, "signed in")
	as.ExpireAccessTokens()

	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(callCtx, "hold", json.RawMessage(`{}`), nil)
		done <- err
	}()
	select {
	case <-entered:
	case err := <-done:
		t.Fatalf("the call ended before the server ran it: %v", err)
	case <-ctx.Done():
		t.Fatal("the server never ran the call")
	}
	stop()
	<-done
	calls, cancels := rec.seen()
	for len(cancels) == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		calls, cancels = rec.seen()
	}
	var held []wireCall
	for _, c := range calls {
		if c.tool == "hold" {
			held = append(held, c)
		}
	}
	if mcpadapter.FastPathBuilt && (len(held) != 2 || !fastID(held[0].id) || held[0].status != http.StatusUnauthorized || fastID(held[1].id)) {
		t.Fatalf("want the fast path's POST refused (401), then go-sdk's own: %+v", held)
	}
	ran := held[len(held)-1]
	// (Its answer, an event stream, never began: the caller gave up first.)
	if ran.status == http.StatusUnauthorized || len(cancels) != 1 || cancels[0] != ran.id {
		t.Errorf("the server runs request %s (%+v); cancellations sent for %q", ran.id, held, cancels)
	}
}
