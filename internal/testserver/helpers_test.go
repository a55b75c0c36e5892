package testserver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressLog collects progress notifications received by a client.
type progressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
}

func (p *progressLog) add(n *mcp.ProgressNotificationParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notes = append(p.notes, n)
}

func (p *progressLog) get() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), p.notes...)
}

// newClient returns a plain go-sdk client recording progress into log.
func newClient(log *progressLog) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0.0.1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if log != nil {
				log.add(req.Params)
			}
		},
	})
}

// connect connects a plain go-sdk client over tr, closing it on cleanup.
//
// The Connect context must outlive the session: SSEClientTransport binds its
// hanging GET to it (see TestSSEConnectContext), so it is only cancelled on
// cleanup, or if Connect takes more than 20s.
func connect(t *testing.T, tr mcp.Transport, log *progressLog) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(20*time.Second, cancel)
	cs, err := newClient(log).Connect(ctx, tr, nil)
	timer.Stop()
	if err != nil {
		cancel()
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
	})
	return cs
}

// inMemory connects srv to a new in-memory transport and returns the client
// end.
func inMemory(t *testing.T, srv *mcp.Server) mcp.Transport {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return ct
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// texts returns the text of every text block of res.
func texts(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// checkBasics asserts the negotiated version and exercises echo, add, fail
// and progress.
func checkBasics(t *testing.T, cs *mcp.ClientSession, log *progressLog, wantVersion string) {
	t.Helper()
	if got := cs.InitializeResult().ProtocolVersion; got != wantVersion {
		t.Errorf("negotiated protocol version %q, want %q", got, wantVersion)
	}
	if got := texts(call(t, cs, "echo", map[string]any{"text": "hi there"})); got != "hi there" {
		t.Errorf("echo = %q", got)
	}

	res := call(t, cs, "add", map[string]any{"a": 2, "b": 3.5})
	if res.IsError || texts(res) != "5.5" {
		t.Errorf("add: IsError=%v text=%q", res.IsError, texts(res))
	}
	var out AddOut
	if data, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(data, &out) != nil || out.Sum != 5.5 {
		t.Errorf("add structuredContent = %#v", res.StructuredContent)
	}

	res = call(t, cs, "fail", map[string]any{"message": "boom"})
	if !res.IsError || texts(res) != "boom" {
		t.Errorf("fail: IsError=%v text=%q", res.IsError, texts(res))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	params := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"steps": 3}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || texts(res) != "done" {
		t.Fatalf("progress: %v, %v", res, err)
	}
	// Notifications may trail the result on some transports.
	deadline := time.Now().Add(5 * time.Second)
	for len(log.get()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	notes := log.get()
	if len(notes) != 3 {
		t.Fatalf("got %d progress notifications, want 3", len(notes))
	}
	for i, n := range notes {
		if n.ProgressToken != "tok-1" || n.Progress != float64(i+1) || n.Total != 3 || n.Message != "step "+string(rune('1'+i)) {
			t.Errorf("progress notification %d = %+v", i, n)
		}
	}
}
