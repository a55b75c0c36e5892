// Package tripserver is the MCP server of the agent examples
// examples/genkit and examples/langchaingo: a go-sdk server run in the
// example's own process, with a tool that returns structured content, one
// that fails the way a tool fails (isError), and one that asks the user a
// question (elicitation). It lives in the core module's internal tree so
// that examples/genkit, a module of its own (see CONTRIBUTING.md, Modules), can
// use it too.
package tripserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ForecastIn is the input of the forecast tool.
type ForecastIn struct {
	City string `json:"city" jsonschema:"the city to forecast"`
}

// Forecast is the forecast tool's structured content.
type Forecast struct {
	City       string  `json:"city"`
	Conditions string  `json:"conditions"`
	HighC      float64 `json:"highC"`
}

// BookIn is the input of the book_table tool.
type BookIn struct {
	Restaurant string `json:"restaurant" jsonschema:"the restaurant's name"`
	Date       string `json:"date" jsonschema:"the day, e.g. Friday"`
}

// New returns the server. It speaks every protocol version go-sdk knows,
// 2026-07-28 included.
func New() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "trips", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Tomorrow's weather for a city."},
		func(_ context.Context, _ *mcp.CallToolRequest, in ForecastIn) (*mcp.CallToolResult, Forecast, error) {
			if in.City != "Paris" && in.City != "Lyon" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
					Text: fmt.Sprintf("no forecast for %q: only Paris and Lyon are covered", in.City)}}}, Forecast{}, nil
			}
			out := Forecast{City: in.City, Conditions: "sunny", HighC: 24}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("%s: sunny, high 24°C", in.City)}}}, out, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "book_table", Description: "Book a restaurant table; asks the user how many guests."},
		func(_ context.Context, req *mcp.CallToolRequest, in BookIn) (*mcp.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["guests"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"guests": &mcp.ElicitParams{
					Mode:    "form",
					Message: fmt.Sprintf("How many guests at %s on %s?", in.Restaurant, in.Date),
					RequestedSchema: map[string]any{"type": "object", "required": []any{"guests"}, "properties": map[string]any{
						"guests": map[string]any{"type": "integer", "minimum": 1, "maximum": 12}}},
				}}}, nil, nil
			}
			er, _ := resp.(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The user did not book."}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("Booked %v at %s on %s.", er.Content["guests"], in.Restaurant, in.Date)}}}, nil, nil
		})
	return srv
}
