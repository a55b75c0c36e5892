package openai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/openai"
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

// The tools as Chat Completions tools, and a model's call run through
// them: send ts.ChatTools() as ChatCompletionNewParams.Tools, take the
// calls of the reply with openai.ChatCalls, and append each outcome's
// ChatMessage to the conversation.
func Example() {
	ctx := context.Background()
	tools, done := weatherTools(ctx)
	defer done()

	ts, err := openai.New(tools, nil)
	if err != nil {
		log.Fatal(err)
	}
	def, err := json.Marshal(ts.ChatTools()[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(def))

	outs, err := ts.Run(ctx, []openai.Call{{ID: "call_1", Name: "get_forecast", Arguments: `{"city":"Paris"}`}})
	if err != nil {
		log.Fatal(err) // the server could not be reached
	}
	fmt.Println(outs[0].Call.ID, outs[0].Text())
	// Output:
	// {"function":{"name":"get_forecast","strict":true,"description":"Tomorrow's forecast for a city","parameters":{"additionalProperties":false,"properties":{"city":{"type":"string"}},"required":["city"],"type":"object"}},"type":"function"}
	// call_1 Sunny in Paris
}
