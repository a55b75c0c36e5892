// Package demotools is the small MCP server the provider examples give
// to the model: two tools with fixed answers, so transcripts are stable.
package demotools

import (
	"context"
	"fmt"

	"github.com/mcpadapter/mcpadapter/examples/internal/fakeprovider"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Question is what the examples ask the model.
const Question = "What is the weather in Paris, and how many people live there?"

type cityArgs struct {
	City string `json:"city" jsonschema:"the city's name, e.g. Paris"`
}

var (
	weather    = map[string]string{"Paris": "Sunny, 21 °C", "Oslo": "Snow, -3 °C"}
	population = map[string]string{"Paris": "2.1 million", "Oslo": "0.7 million"}
)

// NewServer returns an in-process MCP server with get_weather and
// get_population; an unknown city is a tool error (isError).
func NewServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo-cities", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_weather", Description: "Current weather in a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
			return answer(weather, a.City, "The weather in %s: %s.")
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_population", Description: "How many people live in a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
			return answer(population, a.City, "%s has %s inhabitants.")
		})
	return srv
}

func answer(table map[string]string, city, format string) (*mcp.CallToolResult, any, error) {
	v, ok := table[city]
	if !ok {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("unknown city %q (known: Paris, Oslo)", city)}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, city, v)}}}, nil, nil
}

// Script is what the fake providers answer: both tools at once for
// Paris, then a text built from the two results.
func Script() fakeprovider.Script {
	return fakeprovider.Script{Calls: []fakeprovider.Call{
		{Name: "get_weather", Args: map[string]any{"city": "Paris"}},
		{Name: "get_population", Args: map[string]any{"city": "Paris"}},
	}}
}

// MaxTurns bounds the examples' agent loops.
const MaxTurns = 8
