package mcpadapter_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that says its listings stay fresh for a minute is asked for its
// tools once; WithCacheMode asks it again.
func ExampleCacheConfig() {
	ctx := context.Background()
	var lists atomic.Int32
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, &mcp.ServerOptions{
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60000, "public" // SEP-2549 caching hints
		},
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				lists.Add(1)
			}
			return next(ctx, method, req)
		}
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "get_forecast", Description: "Tomorrow's forecast for a city"},
		func(context.Context, *mcp.CallToolRequest, weatherIn) (*mcp.CallToolResult, any, error) {
			return nil, map[string]any{"forecast": "sunny"}, nil
		})

	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Cache: &mcpadapter.CacheConfig{}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if _, err := c.Tools(ctx); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("tools/list requests:", lists.Load())

	if _, err := c.Tools(mcpadapter.WithCacheMode(ctx, mcpadapter.CacheRefresh)); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after a refresh:", lists.Load())
	// Output:
	// tools/list requests: 1
	// after a refresh: 2
}
