package genkit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"
	"github.com/mcpadapter/mcpadapter/genkit"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRenamedPropertyError: under a profile that renames properties and
// moves bounds strict mode lacks into descriptions (AnthropicStrict:
// Genkit's own check of the model's input, against the profile's schema,
// lets them through), the argument check's message names each wrong
// argument as the model wrote it, and the server is not called.
func TestRenamedPropertyError(t *testing.T) {
	calls := 0
	srv := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "plan", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"user name":{"type":"string","maxLength":5},
		"stops":{"type":"array","items":{"type":"object","properties":{"stop name":{"type":"string","maxLength":3}},"required":["stop name"]}}},
		"required":["user name"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "planned"}}}, nil
		})
	ts := toolset(t, srv, nil, &genkit.Options{Profile: schemaprofile.AnthropicStrict})
	g, m := scripted(t, &ai.ToolRequest{Name: "plan", Ref: "c1",
		Input: map[string]any{"user_name": "Ada Lovelace", "stops": []any{map[string]any{"stop_name": "Rio"}, map[string]any{"stop_name": "Rome"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("go"), ai.WithTools(ts.Refs()...))
	if err != nil {
		t.Fatal(err)
	}
	got := resp.Text()
	for _, want := range []string{"$.user_name: expected at most 5 characters", "$.stops[1].stop_name: expected at most 3 characters"} {
		if !strings.Contains(got, want) {
			t.Errorf("message lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "user name") || strings.Contains(got, "stop name") {
		t.Errorf("message names the server's argument names:\n%s", got)
	}
	if calls != 0 {
		t.Errorf("the server was called %d times", calls)
	}
}
