package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeMaxSessions: `mcpadapter serve --max-sessions 2` holds two
// handshake-era client sessions; with both standalone streams open a
// third is refused with 503 and an error naming the flag, logged on
// stderr; once one stream is closed (its session idle) a third gets in,
// ending the idle one (its next request is answered 404).
func TestServeMaxSessions(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `{"mcpServers": {"old": {"url": %q}}}`, old.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, nil, "--config", cfg, "--listen", "127.0.0.1:0", "--max-sessions", "2")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	initialize := func() (status int, id, answer string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	// stream opens session id's standalone stream; it is open once the
	// gateway answered it.
	stream := func(id string) (stop func()) {
		sctx, cancel := context.WithCancel(ctx)
		req, _ := http.NewRequestWithContext(sctx, http.MethodGet, p.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			cancel()
			t.Fatalf("the stream of session %s: %v %v", id, err, resp)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return func() { cancel(); resp.Body.Close() }
	}
	var stops []func()
	var ids []string
	for i := range 2 {
		status, id, answer := initialize()
		if status != http.StatusOK || id == "" {
			t.Fatalf("session %d: %d %s", i, status, answer)
		}
		stop := stream(id)
		defer stop()
		stops = append(stops, stop)
		ids = append(ids, id)
	}
	status, _, answer := initialize()
	if status != http.StatusServiceUnavailable || !strings.Contains(answer, `"code":-32018`) || !strings.Contains(answer, "sessions it allows: 2 (MaxSessions, --max-sessions)") {
		t.Fatalf("a 3rd session: %d %s", status, answer)
	}
	waitLog := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !strings.Contains(p.stderr.String(), what); {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged:\n%s", what, p.stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLog("a client session is refused")
	stops[0]() // its session is idle once the gateway sees the stream end
	c := mcp.NewClient(&mcp.Implementation{Name: "cap", Version: "1"}, nil)
	var cs *mcp.ClientSession
	for deadline := time.Now().Add(time.Minute); ; {
		var err error
		if cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a session once another was idle: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "in"}}); err != nil || res.IsError {
		t.Fatalf("a call of the new session: %v %v", err, res)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", ids[0])
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("the session ended to make room: %s, want 404", resp.Status)
	}
}
