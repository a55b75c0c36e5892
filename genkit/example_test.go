package genkit_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/genkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type cityIn struct {
	City string `json:"city"`
}

// The tools of an MCP server as Genkit tools: pass ts.Refs() to
// ai.WithTools in genkit.Generate; nothing is registered with Genkit.
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
	ts, err := genkit.New(tools, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range ts.Tools() {
		fmt.Println(t.Name(), "-", t.Definition().Description)
	}
	fmt.Println(len(ts.Refs()), "ref")
	// Output:
	// get_forecast - Tomorrow's forecast for a city
	// 1 ref
}
