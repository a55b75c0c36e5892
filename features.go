package mcpadapter

import (
	"context"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods below reach the server features the adapter does not turn
// into tools. Each connects if needed and reconnects after a lost
// connection, like tool calls. GetPrompt, ReadResource and Complete, like
// a tool call, return once the notifications the server sent before its
// answer (its log messages) have reached their handlers.

// ListPrompts returns every prompt the server offers (all pages).
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	out, err := listAll(ctx, c, "prompts/list", func(ctx context.Context, s *engine.Session, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := s.SDK().ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
	return out, c.serverErr(err, "prompts/list")
}

// GetPrompt gets a prompt with its arguments filled in.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var out *mcp.GetPromptResult
	err := c.send(ctx, c.request("prompts/get", ""), func(ctx context.Context, s *engine.Session) error {
		var err error
		out, err = s.SDK().GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	return out, c.serverErr(err, "prompts/get")
}

// ListResources returns every resource the server offers (all pages).
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	out, err := listAll(ctx, c, "resources/list", func(ctx context.Context, s *engine.Session, cursor string) ([]*mcp.Resource, string, error) {
		res, err := s.SDK().ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
	return out, c.serverErr(err, "resources/list")
}

// ListResourceTemplates returns every resource template (all pages).
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	out, err := listAll(ctx, c, "resources/templates/list", func(ctx context.Context, s *engine.Session, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := s.SDK().ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
	return out, c.serverErr(err, "resources/templates/list")
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var out *mcp.ReadResourceResult
	err := c.send(ctx, c.request("resources/read", ""), func(ctx context.Context, s *engine.Session) error {
		var err error
		out, err = s.SDK().ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	return out, c.serverErr(err, "resources/read")
}

// Complete asks the server to complete an argument of a prompt or
// resource template.
func (c *Client) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var out *mcp.CompleteResult
	err := c.send(ctx, c.request("completion/complete", ""), func(ctx context.Context, s *engine.Session) error {
		var err error
		out, err = s.SDK().Complete(ctx, params)
		return err
	})
	return out, c.serverErr(err, "completion/complete")
}

// serverErr names the server and operation in a JSON-RPC error from the
// server; other errors already do.
func (c *Client) serverErr(err error, op string) error {
	if err != nil && sdkerr.IsServerError(err) {
		return &ServerError{Server: c.name, Op: op, Err: err}
	}
	return err
}
