package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolSearchPair: over the threshold, clients of both versions see
// the pair search_tools and call_tool, byte for byte the adapter's and the
// same on every listing; search finds the catalog's tools and call_tool
// reaches them.
func TestToolSearchPair(t *testing.T) {
	_, url := startGateway(t, []Server{
		{Name: "a", Target: testserver.New(testserver.Options{ManyTools: true})},
		{Name: "b", Target: testserver.New(testserver.Options{Era: testserver.Legacy})},
	}, &Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	want, _ := json.Marshal(mcpadapter.SearchPairDefinitions())
	var first string
	for _, v := range []string{v1125, v0728} {
		cs := connect(t, url, v, nil)
		ctx := testCtx(t, 30*time.Second)
		for range 2 {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(res.Tools)
			if first == "" {
				first = string(got)
			}
			if string(got) != first {
				t.Fatalf("%s: the listing changed between turns:\n%s\n%s", v, got, first)
			}
		}
		var defs []map[string]any
		var wantDefs []map[string]any
		_ = json.Unmarshal([]byte(first), &defs)
		_ = json.Unmarshal(want, &wantDefs)
		if len(defs) != 2 || defs[0]["name"] != "call_tool" && defs[0]["name"] != "search_tools" {
			t.Fatalf("%s: tools %s, want the search pair", v, first)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "echo the text back", "limit": 3}})
		if err != nil || res.IsError || !strings.Contains(texts(res), `"a_echo"`) {
			t.Fatalf("%s search_tools: %s, %v", v, texts(res), err)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "b_echo", "arguments": map[string]any{"text": "via the pair"}}})
		if err != nil || texts(res) != "via the pair" {
			t.Fatalf("%s call_tool: %q, %v", v, texts(res), err)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "b_ecko", "arguments": map[string]any{}}})
		if err != nil || !res.IsError || !strings.Contains(texts(res), "closest names") {
			t.Fatalf("%s call_tool of an unknown tool: %q, %v", v, texts(res), err)
		}
	}
	for _, d := range mcpadapter.SearchPairDefinitions() {
		if !strings.Contains(first, d.Description) {
			t.Errorf("the pair's definition differs from the adapter's: %s", first)
		}
	}
}
