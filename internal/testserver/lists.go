package testserver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Servers whose tool lists misbehave: listings that never end or loop, and
// lists with names that clash.

// EndlessList configures [NewEndlessList].
type EndlessList struct {
	// PageSize is the number of tools on every page (default 1000).
	PageSize int
	// Cycle, if positive, makes the cursors repeat: page Cycle+1 hands out
	// the cursor page 1 did, and so on round (not the same cursor twice
	// in a row, which is easy to spot). Zero means a new cursor on every
	// page, for ever.
	Cycle int
	// DescriptionBytes is the length of each tool's description.
	DescriptionBytes int
}

// NewEndlessList returns a server whose tools/list always has a next
// page. Its tools are named p<page>_<i>; calling any of them returns its
// name.
func NewEndlessList(o EndlessList) *mcp.Server {
	if o.PageSize <= 0 {
		o.PageSize = 1000
	}
	desc := strings.Repeat("d", o.DescriptionBytes)
	srv := mcp.NewServer(&mcp.Implementation{Name: "endless", Version: "1.0.0"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				page := 1
				if p, ok := req.GetParams().(*mcp.ListToolsParams); ok && p != nil && p.Cursor != "" {
					n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "page-"))
					if err != nil {
						return nil, fmt.Errorf("bad cursor %q", p.Cursor)
					}
					page = n
				}
				res := &mcp.ListToolsResult{NextCursor: "page-" + strconv.Itoa(page+1)}
				if o.Cycle > 0 && page%o.Cycle == 0 {
					res.NextCursor = "page-" + strconv.Itoa(page-o.Cycle+2) // page 1's cursor names page 2
				}
				for i := range o.PageSize {
					res.Tools = append(res.Tools, &mcp.Tool{Name: fmt.Sprintf("p%d_%d", page, i), Description: desc,
						InputSchema: map[string]any{"type": "object"}})
				}
				return res, nil
			case "tools/call":
				return calledResult(req), nil
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// NewListed returns a server whose tools/list answers exactly tools, in
// one page, even when names repeat or are not valid for a model (go-sdk's
// own list would keep one tool per name). Calling any tool returns
// "called " and its name. A tool without an input schema gets
// {"type":"object"}.
func NewListed(name string, tools ...*mcp.Tool) *mcp.Server {
	for _, t := range tools {
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{"type": "object"}
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				return &mcp.ListToolsResult{Tools: tools}, nil
			case "tools/call":
				return calledResult(req), nil
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// CalledText is what a tool of NewListed or NewEndlessList returns.
func CalledText(tool string) string { return "called " + tool }

func calledResult(req mcp.Request) *mcp.CallToolResult {
	name := ""
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
		name = p.Name
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: CalledText(name)}}}
}
