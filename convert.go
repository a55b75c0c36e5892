package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callReply is the answer to a tools/call: go-sdk's decoding of it, and
// where to find the result as the server wrote it.
type callReply struct {
	*mcp.CallToolResult
	raw engine.Raw // may be nil, or have nothing
	// unknown holds the content blocks of types go-sdk does not decode,
	// by their position in the result's content; CallToolResult.Content
	// holds the others, in order.
	unknown map[int]*UnknownContent
}

// replyOf makes the reply to a call from go-sdk's answer res and the
// result as sent. A result that go-sdk refused only for a content block of
// a type it does not know is decoded again from raw, with such blocks kept
// as *UnknownContent; if that cannot be done, undecodable says why.
// Any other error is go-sdk's err, returned as it is.
func replyOf(res *mcp.CallToolResult, raw engine.Raw, err error) (reply *callReply, undecodable, _ error) {
	if err == nil {
		return &callReply{CallToolResult: res, raw: raw}, nil, nil
	}
	if !sdkerr.IsUnknownContent(err) {
		return nil, nil, err
	}
	var result json.RawMessage
	ok := false
	if raw != nil {
		result, ok = raw.Result()
	}
	if !ok {
		return nil, fmt.Errorf("%w (the result as sent was not seen, so the block could not be kept)", err), nil
	}
	r, blocks, derr := plaincall.DecodeLenient(result)
	if derr != nil {
		return nil, derr, nil
	}
	unknown := make(map[int]*UnknownContent, len(blocks))
	for i, b := range blocks {
		unknown[i] = newUnknownContent(b.Type, b.Raw)
	}
	return &callReply{CallToolResult: r, raw: raw, unknown: unknown}, nil, nil
}

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
	if r.NeedsInput() {
		return nil, &ContentError{Server: server, Tool: tool, Index: -1,
			Err: errors.New("the server asked for input (input_required) but this client has no elicitation; use WithElicitation")}
	}
	n := len(r.Content) + len(r.unknown)
	out := &Result{IsError: r.IsError, Meta: r.Meta, Content: make([]Content, 0, n)}
	next := 0 // the next block of r.Content
	for i := range n {
		if u := r.unknown[i]; u != nil {
			out.Content = append(out.Content, u)
			continue
		}
		if next >= len(r.Content) {
			return nil, &ContentError{Server: server, Tool: tool, Index: i, Err: errors.New("missing content block")}
		}
		cc, err := convertContent(r.Content[next], func() json.RawMessage { return r.rawBlock(next) })
		if err != nil {
			return nil, &ContentError{Server: server, Tool: tool, Index: i, Err: err}
		}
		out.Content = append(out.Content, cc)
		next++
	}
	if r.StructuredContent != nil {
		raw := r.rawStructured()
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

// rawStructured returns the structured content as the server wrote it, or
// nil when the result as sent is unknown.
func (r *callReply) rawStructured() json.RawMessage { return engine.RawStructured(r.raw) }

// rawBlock returns content block i as the server wrote it, or nil. Only
// for a reply go-sdk decoded whole (no unknown blocks).
func (r *callReply) rawBlock(i int) json.RawMessage {
	if len(r.unknown) > 0 {
		return nil
	}
	return engine.RawBlock(r.raw, i)
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
