package openai_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/openai"
)

// TestToolSearchPair: the openai binding runs the core's search pair
// unchanged: the model is given two tools, searches, then calls what it
// found.
func TestToolSearchPair(t *testing.T) {
	ts := toolsetOf(t, testserver.New(testserver.Options{}), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	data, err := json.Marshal(ts.ChatTools())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), `"type":"function"`); n != 2 || !strings.Contains(string(data), `"name":"search_tools"`) || !strings.Contains(string(data), `"name":"call_tool"`) {
		t.Fatalf("ChatTools: want search_tools and call_tool only:\n%s", data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []openai.Call{
		{ID: "c1", Name: "search_tools", Arguments: `{"query":"add two numbers","limit":null}`},
		{ID: "c2", Name: "call_tool", Arguments: `{"name":"add","arguments":{"a":2,"b":3}}`},
		{ID: "c3", Name: "call_tool", Arguments: `{"name":"ad","arguments":{}}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Text(); !strings.HasPrefix(got, `{"tools":[{"name":"add"`) {
		t.Errorf("search_tools: %q", got)
	}
	if got := outs[1].Text(); got != "5" {
		t.Errorf("call_tool add: %q", got)
	}
	if got := outs[2].Text(); !strings.Contains(got, `there is no tool named "ad"`) {
		t.Errorf("call_tool ad: %q", got)
	}
}
