package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// floodServer is a server whose tool floods its caller: n progress
// notifications, each with a message of size bytes, before its result.
func floodServer(n, size int) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "flood", Description: "floods the trace", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := range n {
				if tok == nil {
					break
				}
				msg := fmt.Sprintf("%06d ", i) + strings.Repeat("x", size)
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(n), Message: msg}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
		})
	return srv
}

// TestBrowserTraceFlood plays a server that floods a call with 18 MB of
// progress messages: the inspector's trace and events, and the page's
// copy of the trace, stay within a bounded size, and the page still
// shows the call's end and the latest messages.
func TestBrowserTraceFlood(t *testing.T) {
	chromium(t)
	const n, size = 270, 66 << 10
	rec := ui.NewRecorder()
	s := newSession(t, rec, "flood", nil, named{name: "flood", target: floodServer(n, size)})
	srv := startUI(t, s, rec, nil)
	p := openPage(t, srv)
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="flood_flood"]`)
	p.click(`[data-testid="call-button"]`)
	p.wait(`[data-testid="call"][data-status="done"] [data-testid="content-text"]`)
	var shown int
	p.eval(`document.querySelector('[data-testid="progress-text"]').textContent.length`, &shown)
	if shown > 8<<10 {
		t.Errorf("the progress line holds %d characters of the server's message", shown)
	}

	// The page keeps the latest of the trace, up to a bound.
	p.tab("trace")
	p.wait(`[data-testid="trace-row"][data-dir="recv"][data-method=""]`)
	var kept struct{ Entries, Chars int }
	p.eval(`({entries: App.trace.length, chars: App.trace.reduce((n, e) => n + e.message.length, 0)})`, &kept)
	t.Logf("the page keeps %d trace entries, %d characters", kept.Entries, kept.Chars)
	if kept.Chars > 17<<20 {
		t.Errorf("the page keeps %d characters of trace from a %d-byte flood", kept.Chars, n*size)
	}

	// The inspector's export: bounded, latest kept.
	var export []map[string]any
	var exportLen int
	p.eval(`App.fetch("GET", "/api/trace/export.json").then((r) => r.text()).then((t) => t.length)`, &exportLen)
	p.eval(`App.api("GET", "/api/trace/export.json")`, &export)
	t.Logf("the export: %d entries, %d bytes", len(export), exportLen)
	if exportLen > 18<<20 {
		t.Errorf("the exported trace is %d bytes after a %d-byte flood", exportLen, n*size)
	}
	if len(export) == 0 || !strings.Contains(fmt.Sprint(export[len(export)-1]), "flooded") {
		t.Errorf("the export does not end with the result")
	}
	for _, e := range export {
		if b, _ := json.Marshal(e); len(b) > 66<<10 {
			t.Errorf("an exported entry of %d bytes: a message is cut at 64 KB", len(b))
		}
	}
}
