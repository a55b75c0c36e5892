package eino_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type cityIn struct {
	City string `json:"city"`
}

// The tools of an MCP server as eino tools. eino.NewAgent does this for
// an agent (with a chat model and a checkpoint store); eino.Tools gives
// the tools to any eino graph or ToolsNode.
func Example() {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's forecast for a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny in " + in.City}}}, nil, nil
		})
	a, err := mcpadapter.New(srv, nil) // Options{Elicitation: mcpadapter.ElicitInterrupt} for interrupts
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}

	wrapped, skipped := eino.Tools(tools)
	fmt.Println(len(wrapped), "tools,", len(skipped), "skipped")
	t, err := eino.NewTool(tools[0])
	if err != nil {
		log.Fatal(err)
	}
	info, err := t.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	out, err := t.InvokableRun(ctx, `{"city":"Paris"}`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Name, "->", out)
	// Output:
	// 1 tools, 0 skipped
	// get_forecast -> Sunny in Paris
}
