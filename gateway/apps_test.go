package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppToolsReachTheHost: a server's MCP Apps tools pass through the
// gateway with their _meta.ui, the one for the app only too (the client is
// a host: it keeps that one from its model and lets its app call it), and
// their ui:// view is read through the gateway. With the search pair
// shown, the app-only tool is still listed beside it, and a model can
// neither find it with search_tools nor call it with call_tool.
func TestAppToolsReachTheHost(t *testing.T) {
	for _, search := range []bool{false, true} {
		for _, v := range []string{v1125, v0728} {
			name := v
			if search {
				name += "/search"
			}
			t.Run(name, func(t *testing.T) {
				up := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "apps", Apps: true}), testserver.Stateless())
				opts := &Options{}
				if search {
					opts.ToolSearch = &mcpadapter.ToolSearch{Threshold: -1}
				}
				_, url := startGateway(t, []Server{{Name: "apps", Target: up.URL}}, opts)
				cs := connect(t, url, v, nil)
				ctx := testCtx(t, 30*time.Second)
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				byName := map[string]*mcp.Tool{}
				for _, tl := range res.Tools {
					byName[tl.Name] = tl
				}
				appOnly := byName[testserver.AppOnlyTool]
				if appOnly == nil {
					t.Fatalf("the app-only tool is not listed: %v", toolNames(t, cs))
				}
				ui, _ := appOnly.Meta["ui"].(map[string]any)
				if vis, _ := ui["visibility"].([]any); len(vis) != 1 || vis[0] != "app" || ui["resourceUri"] != testserver.AppViewURI {
					t.Fatalf("the app-only tool's _meta.ui: %v", appOnly.Meta)
				}
				if _, ok := byName[testserver.AppModelTool]; ok == search {
					t.Errorf("the tool for model and app listed: %v, with the search pair %v", ok, search)
				}
				got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: testserver.AppOnlyTool, Arguments: map[string]any{}})
				if err != nil || texts(got) != testserver.AppOnlyTool+" done" {
					t.Fatalf("the app's call: %v %q", err, texts(got))
				}
				view, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: testserver.AppViewURI})
				if err != nil || len(view.Contents) != 1 || view.Contents[0].Text != testserver.AppViewHTML {
					t.Fatalf("the view: %v %v", view, err)
				}
				if !search {
					return
				}
				found, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpadapter.SearchToolsName, Arguments: map[string]any{"query": "refresh the app dashboard"}})
				if err != nil {
					t.Fatal(err)
				}
				if txt := texts(found); strings.Contains(txt, testserver.AppOnlyTool) {
					t.Errorf("search_tools offers the app-only tool to the model: %s", txt)
				}
				via, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpadapter.CallToolName, Arguments: map[string]any{"name": testserver.AppOnlyTool, "arguments": map[string]any{}}})
				if err != nil || !via.IsError {
					t.Errorf("call_tool of the app-only tool: %v %q, want a refusal", err, texts(via))
				}
			})
		}
	}
}
