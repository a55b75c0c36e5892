package eino_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/bindingtest"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRenamedPropertyError: under a profile that renames properties
// (Anthropic's), the argument check's message names each wrong argument
// as the model wrote it, and the server is not called.
func TestRenamedPropertyError(t *testing.T) {
	calls := 0
	srv := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "plan", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"user name":{"type":"string","maxLength":5},
		"stops":{"type":"array","items":{"type":"object","properties":{"stop name":{"type":"string"}},"required":["stop name"]}}},
		"required":["user name"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "planned"}}}, nil
		})
	wrapped, skipped := eino.ToolsWith(bindingtest.Tools(t, srv, nil), &eino.ToolOptions{Profile: schemaprofile.Anthropic})
	if len(wrapped) != 1 || len(skipped) != 0 {
		t.Fatalf("%d tools, skipped %v", len(wrapped), skipped)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := wrapped[0].(*eino.Tool).InvokableRun(ctx, `{"user_name":"Ada Lovelace","stops":[{"stop_name":"Rome"},{}]}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"$.user_name: expected at most 5 characters", "$.stops[1].stop_name: required"} {
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
