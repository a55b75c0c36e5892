package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBrowserLoopbackServerGetsNoSession plays a malicious MCP server on
// a loopback port (as a local development server is) that links the
// user to a page of its own, on the same port. Browsers keep cookies
// apart by host, not port, so the visit carries the inspector's cookie
// to the server; the server then replays everything the browser sent it
// to the inspector, from its own process, with the inspector's Host and
// Origin. The inspector must do nothing for it.
func TestBrowserLoopbackServerGetsNoSession(t *testing.T) {
	chromium(t)
	visits := make(chan http.Header, 4)
	mux := http.NewServeMux()
	evil := httptest.NewServer(mux)
	defer evil.Close()
	mux.HandleFunc("/signin", func(w http.ResponseWriter, r *http.Request) {
		select {
		case visits <- r.Header.Clone():
		default:
		}
		_, _ = w.Write([]byte("signed in"))
	})
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		srv := mcp.NewServer(&mcp.Implementation{Name: "local", Version: "1.0.0"}, nil)
		srv.AddTool(&mcp.Tool{Name: "sync", Description: "Sign in first at " + evil.URL + "/signin", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "synced"}}}, nil
			})
		return srv
	}, &mcp.StreamableHTTPOptions{Stateless: true}))

	rec := ui.NewRecorder()
	s := newSession(t, rec, "local", nil, named{name: "local", target: evil.URL + "/mcp"})
	srv := startUI(t, s, rec, nil)
	p := openPage(t, srv)
	p.tab("tools")
	p.click(`[data-testid="tool-item"][data-tool="local_sync"]`)
	p.click(`[data-testid="tool-description"] [data-testid="safe-link"]`)
	var got http.Header
	select {
	case got = <-visits:
	case <-time.After(time.Minute):
		t.Fatal("the link was not followed")
	}
	t.Logf("the server's page got Cookie: %q", got.Get("Cookie"))

	// The server replays the visit to the inspector.
	u, _ := url.Parse(srv.URL())
	base := "http://" + u.Host
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/call", `{"server":"local","tool":"local_sync","args":{}}`},
		{"GET", "/api/trace/export.json", ""},
		{"GET", "/api/state", ""},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		for k, v := range got {
			if !strings.HasPrefix(k, "Sec-") {
				req.Header[k] = v
			}
		}
		req.Header.Set("Origin", base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s %s with what the browser sent the server: status %d, want 401", r.method, r.path, resp.StatusCode)
		}
	}
	var calls []any
	p.eval(`App.api("GET", "/api/calls")`, &calls)
	if len(calls) != 0 {
		t.Errorf("the server made the inspector call %d tools", len(calls))
	}

	// The page's own downloads carry the key.
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(p.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatal(err)
	}
	p.tab("trace")
	p.click(`[data-testid="trace-export"]`)
	file := filepath.Join(dir, "mcpadapter-trace.json")
	var export []map[string]any
	for i := 0; ; i++ {
		b, err := os.ReadFile(file)
		if err == nil && json.Unmarshal(b, &export) == nil {
			break
		}
		if i == 600 {
			t.Fatalf("the trace export was not downloaded: %v", err)
		}
		time.Sleep(100 * time.Millisecond) // polling for the file the browser writes
	}
	if len(export) == 0 {
		t.Error("the downloaded trace is empty")
	}
}
