package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
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
	dir, cfg := oldServerConfig(t)
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
	waitStderr(t, p, "a client session is refused")
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

// TestServeMaxSessionsLogsNoKey: `serve -v --api-key alice=KEY_ALICE
// --max-sessions-per-principal 1`: alice's second session, her first one
// busy (its standalone stream open), is refused with 429 and logged;
// her third, the first one idle, ends it and is logged. Both lines name
// alice, never her API key.
func TestServeMaxSessionsLogsNoKey(t *testing.T) {
	dir, cfg := oldServerConfig(t)
	const key = "sk-alice-3f9c1d7e5b2a48c6"
	p := startServe(t, dir, []string{"KEY_ALICE=" + key}, "-v", "--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "alice=KEY_ALICE", "--max-sessions-per-principal", "1")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	do := func(method, id, body string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, method, p.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+key)
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	initialize := func() (int, string) {
		resp := do(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	status, first := initialize()
	if status != http.StatusOK || first == "" {
		t.Fatalf("alice's first session: %d", status)
	}
	stream := do(http.MethodGet, first, "")
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("the first session's stream: %s", stream.Status)
	}
	if status, _ := initialize(); status != http.StatusTooManyRequests {
		t.Fatalf("alice's second session, her first busy: %d, want 429", status)
	}
	waitStderr(t, p, "a client session is refused")
	stream.Body.Close()
	var third string
	for deadline := time.Now().Add(time.Minute); third == ""; time.Sleep(20 * time.Millisecond) {
		if status, third = initialize(); status != http.StatusOK && time.Now().After(deadline) {
			t.Fatalf("alice's session once her first is idle: %d", status)
		}
	}
	waitStderr(t, p, "the client session idle longest is ended")
	logs := p.stderr.String()
	if strings.Contains(logs, key) || strings.Contains(logs, key[len(key)-8:]) {
		t.Fatalf("alice's API key logged:\n%s", logs)
	}
	for _, want := range []string{"cap=MaxSessionsPerPrincipal max=1 principal=alice", "cap=MaxSessionsPerPrincipal principal=alice"} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %q logged:\n%s", want, logs)
		}
	}
}

// waitStderr waits (a minute at most) until p has written what on its
// stderr.
func waitStderr(t *testing.T, p *serveProc, what string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(p.stderr.String(), what); {
		if time.Now().After(deadline) {
			t.Fatalf("no %q logged:\n%s", what, p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// oldServerConfig starts a handshake-era test server and writes a config
// naming it "old" in a new directory; it returns the directory and the
// config's path.
func oldServerConfig(t *testing.T) (dir, cfg string) {
	t.Helper()
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	dir = t.TempDir()
	return dir, writeConfig(t, dir, "mcp.json", fmt.Sprintf(`{"mcpServers": {"old": {"url": %q}}}`, old.URL))
}
