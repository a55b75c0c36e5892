package toolcall_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/toolcall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type textIn struct {
	Text string `json:"text"`
}

// server is a go-sdk server with two tools: echo, and fail, whose call is
// a tool error.
func server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Says the text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Fails with the text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, errors.New(in.Text)
		})
	return srv
}

// A binding runs one model turn's calls two at a time and renders each
// outcome as the text the model reads.
func Example() {
	ctx := context.Background()
	a, err := mcpadapter.New(server(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	byName := map[string]*mcpadapter.Tool{}
	for _, t := range tools {
		byName[t.Name] = t
	}

	type modelCall struct{ ID, Name, Args string }
	calls := []modelCall{
		{"c1", "echo", `{"text":"hello"}`},
		{"c2", "fail", `{"text":"no such city"}`},
		{"c3", "weather", `{}`},
	}
	outs := toolcall.RunTurn(ctx, calls, 2, func(ctx context.Context, c modelCall) (*mcpadapter.Result, error) {
		t, ok := byName[c.Name]
		if !ok {
			return toolcall.ErrorResult(fmt.Sprintf("unknown tool %q", c.Name)), nil
		}
		return t.Call(ctx, json.RawMessage(c.Args))
	})
	for _, o := range outs {
		var parts []string
		for _, c := range o.Result.Content {
			parts = append(parts, toolcall.ContentText(c))
		}
		fmt.Printf("%s error=%t %s\n", o.Call.ID, o.Result.IsError, strings.Join(parts, "\n"))
	}
	if err := toolcall.Failures(outs, func(c modelCall, err error) error {
		return fmt.Errorf("call %s: %w", c.ID, err)
	}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// c1 error=false hello
	// c2 error=true no such city
	// c3 error=true unknown tool "weather"
}
