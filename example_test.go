package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type weatherIn struct {
	City string `json:"city"`
}

// weatherServer is a go-sdk server with one tool, for the examples.
func weatherServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's forecast for a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, map[string]any, error) {
			if in.City == "" {
				return nil, nil, fmt.Errorf("city is required")
			}
			return nil, map[string]any{"city": in.City, "forecast": "sunny"}, nil
		})
	return srv
}

func Example() {
	ctx := context.Background()
	a, err := mcpadapter.New(weatherServer(), nil) // or a URL, or mcpadapter.Command{...}
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	tools, err := a.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name, "-", t.Description)
	}

	res, err := tools[0].Call(ctx, json.RawMessage(`{"city":"Paris"}`))
	if err != nil {
		log.Fatal(err) // the server could not be reached: the model can't act on it
	}
	fmt.Println(res.IsError, string(res.Artifact.StructuredContent))

	res, err = tools[0].Call(ctx, json.RawMessage(`{"city":""}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Text()) // the model reads this and can try again
	// Output:
	// get_forecast - Tomorrow's forecast for a city
	// false {"city":"Paris","forecast":"sunny"}
	// true city is required
}

func ExampleNewClient() {
	ctx := context.Background()
	c, err := mcpadapter.NewClient(weatherServer(), &mcpadapter.ClientOptions{
		Name:    "weather",
		Timeout: 30 * time.Second,
	})
	if err != nil {
		log.Fatal(err)
	}
	a, err := mcpadapter.New(c, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	info, err := a.Info(ctx)
	if err != nil {
		log.Fatal(err)
	}
	s := info.Servers[0]
	fmt.Println(s.Name, s.Implementation.Name, s.ProtocolVersion, s.Era)
	// Output: weather weather 2026-07-28 discover
}

func ExampleScript() {
	fmt.Println(mcpadapter.Script("server.py", "--verbose"))
	fmt.Println(mcpadapter.Script("server.mjs"))
	fmt.Println(mcpadapter.Script("bin/server"))
	// Output:
	// python3 server.py --verbose
	// node server.mjs
	// bin/server
}

func ExampleTool_Call_progress() {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "jobs", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "build"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
			})
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built"}}}, nil, nil
	})
	a, _ := mcpadapter.New(srv, nil)
	defer a.Close()
	tools, _ := a.Tools(ctx)
	steps := make(chan string, 3)
	res, err := tools[0].CallWith(ctx, nil, &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) {
		steps <- fmt.Sprintf("%s %v/%v %s", p.Tool, p.Progress, p.Total, p.Message)
	}})
	if err != nil {
		log.Fatal(err)
	}
	// The last notification may arrive just after the result.
	for range 3 {
		select {
		case s := <-steps:
			fmt.Println(s)
		case <-time.After(time.Second):
			fmt.Println("(no more progress)")
		}
	}
	fmt.Println(res.Text())
	// Output:
	// build 1/3 step 1
	// build 2/3 step 2
	// build 3/3 step 3
	// built
}

// A gateway relays the tools/call another client sent it: the call keeps
// that client's _meta and arguments as written, and the client's limits
// (timeouts, call slots) and fast path apply.
func ExampleClient_RelayCall() {
	ctx := context.Background()
	c, err := mcpadapter.NewClient(weatherServer(), &mcpadapter.ClientOptions{Relay: true, Timeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// The request as the other client sent it.
	params := &mcp.CallToolParams{Name: "get_forecast", Arguments: json.RawMessage(`{"city":"Paris"}`)}
	res, err := c.RelayCall(ctx, params, nil)
	if err != nil {
		log.Fatal(err) // the server could not be reached, or a limit ended the call
	}
	out, _ := json.Marshal(res.StructuredContent)
	fmt.Println(res.IsError, string(out))
	// Output: false {"city":"Paris","forecast":"sunny"}
}
