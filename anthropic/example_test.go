package anthropic_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type cityIn struct {
	City string `json:"city"`
}

// weatherServer is a go-sdk server with one tool; any MCP server will do
// (a URL, a mcpadapter.Command, a config).
func weatherServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's forecast for a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Sunny in " + in.City}}}, nil, nil
		})
	return srv
}

// weatherTools lists the server's tools through mcpadapter.
func weatherTools(ctx context.Context) ([]*mcpadapter.Tool, func()) {
	a, err := mcpadapter.New(weatherServer(), nil)
	if err != nil {
		log.Fatal(err)
	}
	tools, err := a.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	return tools, func() { a.Close() }
}

// The tools as Messages API tools, and a tool_use block run through them:
// send ts.Tools() as MessageNewParams.Tools, take the tool_use blocks of
// the reply with anthropic.Calls, and send anthropic.UserMessage(outs).
func Example() {
	ctx := context.Background()
	tools, done := weatherTools(ctx)
	defer done()

	ts, err := anthropic.New(tools, nil)
	if err != nil {
		log.Fatal(err)
	}
	def, err := json.Marshal(ts.Tools()[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(def))

	outs, err := ts.Run(ctx, []anthropic.Call{{ID: "toolu_1", Name: "get_forecast", Input: json.RawMessage(`{"city":"Paris"}`)}})
	if err != nil {
		log.Fatal(err)
	}
	msg, err := json.Marshal(anthropic.UserMessage(outs))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(msg))
	// Output:
	// {"input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false},"name":"get_forecast","description":"Tomorrow's forecast for a city"}
	// {"content":[{"tool_use_id":"toolu_1","content":[{"text":"Sunny in Paris","type":"text"}],"type":"tool_result"}],"role":"user"}
}
