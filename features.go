package mcpadapter

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods below reach the server features the adapter does not turn
// into tools. Each connects if needed and reconnects after a lost
// connection, like tool calls.

// ListPrompts returns every prompt the server offers (all pages).
func (c *Client) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	var out []*mcp.Prompt
	err := c.do(ctx, "prompts/list", "", func(ctx context.Context, s *session) error {
		out = out[:0]
		for p, err := range s.cs.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	return out, c.serverErr(err, "prompts/list")
}

// GetPrompt gets a prompt with its arguments filled in.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	var out *mcp.GetPromptResult
	err := c.do(ctx, "prompts/get", "", func(ctx context.Context, s *session) error {
		var err error
		out, err = s.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	return out, c.serverErr(err, "prompts/get")
}

// ListResources returns every resource the server offers (all pages).
func (c *Client) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	var out []*mcp.Resource
	err := c.do(ctx, "resources/list", "", func(ctx context.Context, s *session) error {
		out = out[:0]
		for r, err := range s.cs.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, c.serverErr(err, "resources/list")
}

// ListResourceTemplates returns every resource template (all pages).
func (c *Client) ListResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	var out []*mcp.ResourceTemplate
	err := c.do(ctx, "resources/templates/list", "", func(ctx context.Context, s *session) error {
		out = out[:0]
		for r, err := range s.cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, c.serverErr(err, "resources/templates/list")
}

// ReadResource reads the resource at uri.
func (c *Client) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	var out *mcp.ReadResourceResult
	err := c.do(ctx, "resources/read", "", func(ctx context.Context, s *session) error {
		var err error
		out, err = s.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		return err
	})
	return out, c.serverErr(err, "resources/read")
}

// Complete asks the server to complete an argument of a prompt or
// resource template.
func (c *Client) Complete(ctx context.Context, params *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	var out *mcp.CompleteResult
	err := c.do(ctx, "completion/complete", "", func(ctx context.Context, s *session) error {
		var err error
		out, err = s.cs.Complete(ctx, params)
		return err
	})
	return out, c.serverErr(err, "completion/complete")
}

// serverErr names the server and operation in a JSON-RPC error from the
// server; other errors already do.
func (c *Client) serverErr(err error, op string) error {
	if err != nil && isServerError(err) {
		return &ServerError{Server: c.name, Op: op, Err: err}
	}
	return err
}
