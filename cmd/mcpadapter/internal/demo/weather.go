package demo

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type forecastIn struct {
	City string `json:"city" jsonschema:"the city, e.g. Paris"`
	Days int    `json:"days,omitempty" jsonschema:"how many days, 1 to 5 (default 3)"`
}

type dayForecast struct {
	Day        int    `json:"day"`
	Conditions string `json:"conditions"`
	HighC      int    `json:"highC"`
	LowC       int    `json:"lowC"`
}

type forecastOut struct {
	City string        `json:"city"`
	Days []dayForecast `json:"days"`
}

type subscribeIn struct {
	City string `json:"city" jsonschema:"the city to get alerts for"`
}

// Weather is the demo's 2026-07-28 server: a deterministic forecast and
// a subscription that asks the user for an email address (elicitation).
func Weather() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo-weather", Version: mcpadapter.Version()},
		&mcp.ServerOptions{Instructions: "Demo weather data: deterministic, not real."})
	mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Weather forecast for a city (demo data)"},
		func(_ context.Context, _ *mcp.CallToolRequest, in forecastIn) (*mcp.CallToolResult, forecastOut, error) {
			if in.City == "" {
				return nil, forecastOut{}, errors.New("city is required")
			}
			days := in.Days
			if days <= 0 {
				days = 3
			}
			if days > 5 {
				return nil, forecastOut{}, fmt.Errorf("at most 5 days, not %d", days)
			}
			h := fnv.New32a()
			h.Write([]byte(in.City))
			seed := int(h.Sum32())
			conditions := []string{"sunny", "cloudy", "rain", "windy", "snow"}
			out := forecastOut{City: in.City}
			summary := in.City + ":"
			for d := range days {
				f := dayForecast{Day: d + 1, Conditions: conditions[(seed/(d+1))%len(conditions)], HighC: 10 + (seed>>(d+2))%15}
				f.LowC = f.HighC - 6
				out.Days = append(out.Days, f)
				summary += fmt.Sprintf(" day %d %s %d/%d°C;", f.Day, f.Conditions, f.HighC, f.LowC)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}, out, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "subscribe", Description: "Subscribe to weather alerts; asks the user for an email address"},
		func(_ context.Context, req *mcp.CallToolRequest, in subscribeIn) (*mcp.CallToolResult, any, error) {
			r, ok := req.Params.InputResponses["contact"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"contact": &mcp.ElicitParams{
					Mode:    "form",
					Message: "Where should alerts for " + in.City + " go?",
					RequestedSchema: map[string]any{"type": "object", "required": []any{"email"}, "properties": map[string]any{
						"email":     map[string]any{"type": "string", "format": "email", "title": "Email address"},
						"frequency": map[string]any{"type": "string", "enum": []any{"daily", "weekly"}, "default": "daily"},
					}},
				}}}, nil, nil
			}
			text := "Not subscribed (" + r.Action + ")."
			if r.Action == "accept" {
				text = fmt.Sprintf("Subscribed %v to %v alerts for %s.", r.Content["email"], r.Content["frequency"], in.City)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	return srv
}
