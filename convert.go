package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callReply is the answer to a tools/call, with the result as sent.
type callReply = engine.Reply

// newUnknownContent keeps the block b of type kind, with the annotations
// and _meta it has when they are well-formed.
func newUnknownContent(kind string, b json.RawMessage) *UnknownContent {
	u := &UnknownContent{Type: kind, Raw: b}
	var common struct {
		Annotations *mcp.Annotations `json:"annotations"`
		Meta        map[string]any   `json:"_meta"`
	}
	if json.Unmarshal(b, &common) == nil {
		u.Annotations, u.Meta = common.Annotations, common.Meta
	}
	return u
}

// convertResult turns the reply to a tool call into a Result.
func convertResult(server, tool string, r *callReply) (*Result, error) {
	if r == nil || r.CallToolResult == nil {
		return nil, &ContentError{Server: server, Tool: tool, Index: -1, Err: errors.New("empty result")}
	}
	if r.NeedsInput() && r.InputRequests == nil {
		// No round (plaincall.Round): nothing to answer.
		return nil, &ContentError{Server: server, Tool: tool, Index: -1,
			Err: errors.New("the server answered input_required with no questions (no inputRequests)")}
	}
	if r.NeedsInput() {
		return nil, &ContentError{Server: server, Tool: tool, Index: -1,
			Err: errors.New("the server asked for input (input_required) but this client has no elicitation; use WithElicitation")}
	}
	n := len(r.Content) + len(r.Unknown)
	out := &Result{IsError: r.IsError, Meta: r.Meta, Content: make([]Content, 0, n)}
	next := 0 // the next block of r.Content
	for i := range n {
		if u, ok := r.Unknown[i]; ok {
			out.Content = append(out.Content, newUnknownContent(u.Type, u.Raw))
			continue
		}
		if next >= len(r.Content) {
			return nil, &ContentError{Server: server, Tool: tool, Index: i, Err: errors.New("missing content block")}
		}
		cc, err := convertContent(r.Content[next], func() json.RawMessage { return r.RawBlock(next) })
		if err != nil {
			return nil, &ContentError{Server: server, Tool: tool, Index: i, Err: err}
		}
		out.Content = append(out.Content, cc)
		next++
	}
	if r.StructuredContent != nil {
		raw := r.RawStructured()
		if raw == nil {
			var err error
			if raw, err = json.Marshal(r.StructuredContent); err != nil {
				return nil, &ContentError{Server: server, Tool: tool, Index: -1, Err: fmt.Errorf("structuredContent: %w", err)}
			}
		}
		out.Artifact = &Artifact{StructuredContent: raw, Meta: r.Meta}
	}
	return out, nil
}

// convertContent turns one go-sdk content block into a Content. raw
// returns the block as the server wrote it, or nil; it is asked only for
// a block this package does not convert.
func convertContent(c mcp.Content, raw func() json.RawMessage) (Content, error) {
	switch c := c.(type) {
	case *mcp.TextContent:
		return &TextContent{Text: c.Text, Annotations: c.Annotations, Meta: c.Meta}, nil
	case *mcp.ImageContent:
		if c.MIMEType == "" {
			return nil, errors.New("image without mimeType")
		}
		return &ImageContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta}, nil
	case *mcp.AudioContent:
		if c.MIMEType == "" {
			return nil, errors.New("audio without mimeType")
		}
		return &AudioContent{Data: c.Data, MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta}, nil
	case *mcp.ResourceLink:
		if c.URI == "" {
			return nil, errors.New("resource_link without uri")
		}
		return &ResourceLinkContent{
			URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Icons: c.Icons,
			Annotations: c.Annotations, Meta: c.Meta,
		}, nil
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return nil, errors.New("resource block without resource contents")
		}
		if r.URI == "" {
			return nil, errors.New("embedded resource without uri")
		}
		return &EmbeddedResourceContent{
			URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob, ResourceMeta: r.Meta,
			Annotations: c.Annotations, Meta: c.Meta,
		}, nil
	case nil:
		return nil, errors.New("null content block")
	default:
		// A type go-sdk knows but a tool result does not carry (tool_use,
		// tool_result): kept like a type nobody knows.
		b := raw()
		if b == nil {
			var err error
			if b, err = json.Marshal(c); err != nil {
				return nil, fmt.Errorf("content of type %T: %w", c, err)
			}
		}
		kind, err := plaincall.BlockType(b)
		if err != nil {
			return nil, err
		}
		return newUnknownContent(kind, b), nil
	}
}
