package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// convertResult turns a go-sdk tool result into a Result.
func convertResult(server, tool string, r *mcp.CallToolResult) (*Result, error) {
	if r == nil {
		return nil, &ContentError{Server: server, Tool: tool, Index: -1, Err: errors.New("empty result")}
	}
	if r.NeedsInput() {
		return nil, &ContentError{Server: server, Tool: tool, Index: -1,
			Err: errors.New("the server asked for input (input_required) but this client has no elicitation; use WithElicitation")}
	}
	out := &Result{IsError: r.IsError, Meta: r.Meta, Content: make([]Content, 0, len(r.Content))}
	for i, c := range r.Content {
		cc, err := convertContent(c)
		if err != nil {
			return nil, &ContentError{Server: server, Tool: tool, Index: i, Err: err}
		}
		out.Content = append(out.Content, cc)
	}
	if r.StructuredContent != nil {
		raw, err := json.Marshal(r.StructuredContent)
		if err != nil {
			return nil, &ContentError{Server: server, Tool: tool, Index: -1, Err: fmt.Errorf("structuredContent: %w", err)}
		}
		out.Artifact = &Artifact{StructuredContent: raw, Meta: r.Meta}
	}
	return out, nil
}

// convertContent turns one go-sdk content block into a Content.
func convertContent(c mcp.Content) (Content, error) {
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
		return nil, fmt.Errorf("unsupported content type %T", c)
	}
}
