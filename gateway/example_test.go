package gateway_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is a go-sdk server with one tool, named name.
func server(name, tool string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: tool, Description: "The " + tool + " of " + name},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " " + tool}}}, nil, nil
		})
	return srv
}

// Two servers served as one MCP endpoint over streamable HTTP, and a
// client of that endpoint listing their tools. With a config file:
// gateway.New(gateway.FromConfig(cfg), nil).
func Example() {
	ctx := context.Background()
	gw, err := gateway.New([]gateway.Server{
		{Name: "weather", Target: server("weather", "forecast")},
		{Name: "math", Target: server("math", "add")},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer gw.Close()
	if err := gw.Start(ctx); err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(gw) // in a program: http.ListenAndServe("127.0.0.1:8080", gw)
	defer hs.Close()

	a, err := mcpadapter.New(hs.URL+"/mcp", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name)
	}
	res, err := tools[0].Call(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// math_add
	// weather_forecast
	// math add
}

// A limit written as serve's --limit flag takes it: each principal may
// make 600 calls a minute (bursts of 50) and have 8 in flight.
func ExampleParseLimitRule() {
	r, err := gateway.ParseLimitRule("name=per-user,per=principal,rate=600/1m,burst=50,concurrent=8")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d per %s, burst %d, %d in flight, per %s\n", r.Name, r.Rate, r.Period, r.Burst, r.Concurrent, r.Per)
	// Output: per-user: 600 per 1m0s, burst 50, 8 in flight, per principal
}
