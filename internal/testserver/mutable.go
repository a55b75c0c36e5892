package testserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolAddIn is the input of the tool_add tool.
type ToolAddIn struct {
	Name        string `json:"name" jsonschema:"the new tool's name"`
	Description string `json:"description,omitempty" jsonschema:"what the new tool says it does"`
}

// ToolRemoveIn is the input of the tool_remove tool.
type ToolRemoveIn struct {
	Name string `json:"name" jsonschema:"the tool to remove"`
}

// addMutableTools registers tool_add and tool_remove (Options.Mutable):
// they add a tool to the server's list, or remove one from it, and go-sdk
// tells the clients (notifications/tools/list_changed; on 2026-07-28 to
// the subscriptions/listen streams). An added tool answers "NAME: ARGS".
func addMutableTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "tool_add", Description: "Add a tool to this server's list."},
		func(_ context.Context, _ *mcp.CallToolRequest, in ToolAddIn) (*mcp.CallToolResult, any, error) {
			if in.Name == "" {
				return nil, nil, fmt.Errorf("tool_add: name is empty")
			}
			name := in.Name
			srv.AddTool(&mcp.Tool{Name: name, Description: in.Description, InputSchema: emptyObject},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{text(name + ": " + string(req.Params.Arguments))}}, nil
				})
			return &mcp.CallToolResult{Content: []mcp.Content{text("added " + name)}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "tool_remove", Description: "Remove a tool from this server's list."},
		func(_ context.Context, _ *mcp.CallToolRequest, in ToolRemoveIn) (*mcp.CallToolResult, any, error) {
			srv.RemoveTools(in.Name)
			return &mcp.CallToolResult{Content: []mcp.Content{text("removed " + in.Name)}}, nil, nil
		})
}
