package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gemini"
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

// The tools as Gemini function declarations, and a function call run
// through them: put ts.Tool() in GenerateContentConfig.Tools, take the
// calls of the response with gemini.Calls, and send
// gemini.UserContent(outs).
func Example() {
	ctx := context.Background()
	tools, done := weatherTools(ctx)
	defer done()

	ts, err := gemini.New(tools, nil)
	if err != nil {
		log.Fatal(err)
	}
	def, err := json.Marshal(ts.FunctionDeclarations()[0])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(def))

	outs, err := ts.Run(ctx, []gemini.Call{{Name: "get_forecast", Args: map[string]any{"city": "Paris"}}})
	if err != nil {
		log.Fatal(err)
	}
	content, err := json.Marshal(gemini.UserContent(outs))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(content))
	// Output:
	// {"description":"Tomorrow's forecast for a city","name":"get_forecast","parameters":{"description":"additionalProperties: false.","properties":{"city":{"type":"STRING"}},"required":["city"],"type":"OBJECT"}}
	// {"parts":[{"functionResponse":{"name":"get_forecast","response":{"output":"Sunny in Paris"}}}],"role":"user"}
}
