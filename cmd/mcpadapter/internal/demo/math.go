package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pairIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type numberOut struct {
	Result float64 `json:"result"`
}

type countIn struct {
	To      int `json:"to" jsonschema:"count from 1 to this, 1 to 100"`
	DelayMs int `json:"delay_ms,omitempty" jsonschema:"pause between numbers in milliseconds (default 100)"`
}

// Math is the demo's handshake-era (2025-11-25) server: arithmetic and a
// slow count that reports progress.
func Math() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "demo-math", Version: mcpadapter.Version()},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}})
	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers"},
		func(_ context.Context, _ *mcp.CallToolRequest, in pairIn) (*mcp.CallToolResult, numberOut, error) {
			return nil, numberOut{Result: in.A + in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "divide", Description: "Divide a by b"},
		func(_ context.Context, _ *mcp.CallToolRequest, in pairIn) (*mcp.CallToolResult, numberOut, error) {
			if in.B == 0 {
				return nil, numberOut{}, errors.New("division by zero")
			}
			return nil, numberOut{Result: in.A / in.B}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "count", Description: "Count slowly, reporting progress"},
		func(ctx context.Context, req *mcp.CallToolRequest, in countIn) (*mcp.CallToolResult, any, error) {
			if in.To < 1 || in.To > 100 {
				return nil, nil, fmt.Errorf("to must be 1 to 100, not %d", in.To)
			}
			delay := time.Duration(in.DelayMs) * time.Millisecond
			if in.DelayMs <= 0 {
				delay = 100 * time.Millisecond
			}
			for i := 1; i <= in.To; i++ {
				select {
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				case <-time.After(delay):
				}
				if tok := req.Params.GetProgressToken(); tok != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(in.To), Message: fmt.Sprintf("counted %d", i)})
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("counted to %d", in.To)}}}, nil, nil
		})
	return srv
}
