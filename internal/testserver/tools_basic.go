package testserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the input of the echo tool.
type EchoIn struct {
	Text string `json:"text"`
}

// AddIn is the input of the add tool.
type AddIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// AddOut is the structured output of the add tool.
type AddOut struct {
	Sum float64 `json:"sum"`
}

// FailIn is the input of the fail tool.
type FailIn struct {
	Message string `json:"message"`
}

// SlowIn is the input of the slow tool.
type SlowIn struct {
	Ms int `json:"ms"`
}

// ProgressIn is the input of the progress tool.
type ProgressIn struct {
	Steps int `json:"steps"`
}

// emptyObject is the input schema of tools without arguments.
var emptyObject = json.RawMessage(`{"type":"object"}`)

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

// addBasicTools registers echo, add, fail, fail_structured, slow, progress,
// crash and headers. It is long because it is a list: one registration per
// tool, each a few lines, read best side by side.
func addBasicTools(srv *mcp.Server, st *State, opts Options) {
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo the text back."},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{text(in.Text)}}, nil, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in AddIn) (*mcp.CallToolResult, AddOut, error) {
			sum := in.A + in.B
			res := &mcp.CallToolResult{Content: []mcp.Content{text(strconv.FormatFloat(sum, 'g', -1, 64))}}
			return res, AddOut{Sum: sum}, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Fail with the message."},
		func(_ context.Context, _ *mcp.CallToolRequest, in FailIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text(in.Message)}}, nil, nil
		})

	srv.AddTool(&mcp.Tool{Name: "fail_structured", Description: "Fail with structured details.", InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				IsError:           true,
				Content:           []mcp.Content{text(QuotaMessage)},
				StructuredContent: map[string]any{"code": "QUOTA", "retryAfter": 30},
			}, nil
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "Sleep for ms milliseconds."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SlowIn) (*mcp.CallToolResult, any, error) {
			timer := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-timer.C:
				return &mcp.CallToolResult{Content: []mcp.Content{text(fmt.Sprintf("slept %dms", in.Ms))}}, nil, nil
			case <-ctx.Done():
				st.recordCancel()
				return nil, nil, ctx.Err()
			}
		})

	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "Report progress for the given number of steps."},
		func(ctx context.Context, req *mcp.CallToolRequest, in ProgressIn) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps; i++ {
				if token != nil {
					err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: token,
						Progress:      float64(i),
						Total:         float64(in.Steps),
						Message:       fmt.Sprintf("step %d", i),
					})
					if err != nil {
						return nil, nil, fmt.Errorf("notify progress: %w", err)
					}
				}
				select {
				case <-time.After(10 * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text("done")}}, nil, nil
		})

	srv.AddTool(&mcp.Tool{Name: "crash", Description: "Crash the server.", InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if opts.OnCrash != nil {
				opts.OnCrash()
			}
			return nil, errors.New("crash requested")
		})

	srv.AddTool(&mcp.Tool{Name: "headers", Description: "Return the HTTP request headers as JSON.", InputSchema: emptyObject},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h := requestHeader(req)
			if h == nil {
				h = map[string][]string{}
			}
			data, err := json.Marshal(h)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(string(data))}}, nil
		})
}

// addMinimalTools registers echo and slow with hand-written schemas (no
// reflection at start-up).
func addMinimalTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text back.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in EchoIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{text(in.Text)}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "slow", Description: "Sleep for ms milliseconds.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer"}},"required":["ms"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in SlowIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				return &mcp.CallToolResult{Content: []mcp.Content{text(fmt.Sprintf("slept %dms", in.Ms))}}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
}
