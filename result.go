package mcpadapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/truncate"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Result is what a tool call produced.
//
// A tool that ran and reported a failure (MCP isError, or a JSON-RPC error
// such as an unknown tool or invalid arguments) gives a Result with IsError
// set: the server's own words are in Content so that a model can read them
// and try again. Failures the model cannot act on (transport, protocol,
// unconvertible content) are Go errors instead, never a Result.
type Result struct {
	// Content holds the result's content blocks in the server's order.
	Content []Content
	// IsError reports whether the tool reported a failure.
	IsError bool
	// Artifact carries the structured content, or is nil when the server
	// sent none.
	Artifact *Artifact
	// Meta is the result's _meta, or nil.
	Meta map[string]any
	// Failure is the transport failure this result stands for, when one
	// was turned into a result (Options.TransportErrorsAsResults,
	// TransportErrorResult): IsError is then set and Content tells the
	// model that the server is unavailable. It is nil for every result
	// that came from a server.
	Failure *TransportError

	limit int // the byte limit of Text and ModelContent; 0: none
}

// Artifact is the part of a result meant for the program rather than the
// model: the tool's structured content (see the tool's OutputSchema).
type Artifact struct {
	// StructuredContent is the structuredContent value as JSON.
	StructuredContent json.RawMessage
	// Meta is the result's _meta, or nil.
	Meta map[string]any
}

// Decode unmarshals the structured content into v.
func (a *Artifact) Decode(v any) error {
	return json.Unmarshal(a.StructuredContent, v)
}

// Text returns the result as text for a model: text blocks as they are,
// other blocks as a short bracketed description, one block per line (a
// block of a type this version does not support is a placeholder naming
// its type). Past TextLimit (results of Tool.Call: Options.MaxResultBytes,
// DefaultMaxResultBytes) the text is cut, on a UTF-8 boundary, and ends
// with a note: "… truncated: N of M bytes shown; ...". FullText is the
// whole text.
func (r *Result) Text() string {
	if r.limit <= 0 {
		return r.render()
	}
	t, _, _ := truncate.Text(r.render(), r.limit)
	return t
}

// render returns the whole result as text (see Text).
func (r *Result) render() string {
	if len(r.Content) == 1 {
		if t, ok := r.Content[0].(*TextContent); ok {
			return t.Text // the common case, without a copy
		}
	}
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch c := c.(type) {
		case *TextContent:
			b.WriteString(c.Text)
		case *ImageContent:
			fmt.Fprintf(&b, "[image %s, %d bytes]", c.MIMEType, len(c.Data))
		case *AudioContent:
			fmt.Fprintf(&b, "[audio %s, %d bytes]", c.MIMEType, len(c.Data))
		case *ResourceLinkContent:
			fmt.Fprintf(&b, "[resource link %s", c.URI)
			if c.Name != "" {
				fmt.Fprintf(&b, " %q", c.Name)
			}
			if c.Description != "" {
				fmt.Fprintf(&b, ": %s", c.Description)
			}
			b.WriteByte(']')
		case *EmbeddedResourceContent:
			if c.Blob == nil {
				fmt.Fprintf(&b, "[resource %s]\n%s", c.URI, c.Text)
			} else {
				fmt.Fprintf(&b, "[resource %s, %s, %d bytes]", c.URI, c.MIMEType, len(c.Blob))
			}
		case *UnknownContent:
			fmt.Fprintf(&b, "[%s content, not shown: this client does not support the type]", unknownTypeText(c.Type))
		}
	}
	if len(r.Content) == 0 && r.Artifact != nil {
		b.Write(r.Artifact.StructuredContent)
	}
	return b.String()
}

// unknownTypeText is a block type fit for a model's text: quoted, and cut
// to 40 bytes (the server chose it).
func unknownTypeText(kind string) string {
	if len(kind) > 40 {
		kind = strings.ToValidUTF8(kind[:40], "") + "..."
	}
	return strconv.Quote(kind)
}

// errorResult is a result the model reads as the tool's failure.
func errorResult(text string) *Result {
	return &Result{IsError: true, Content: []Content{&TextContent{Text: text}}}
}

// refusal turns the server's JSON-RPC error answer to a tool call (unknown
// tool, invalid arguments, ...) into an error result the model can read;
// any other error is returned as it is, such as a TransportError for a
// connect the server refused (the tool never ran).
func refusal(tool string, err error) (*Result, error) {
	var we *jsonrpc.Error
	var te *TransportError
	if sdkerr.IsServerError(err) && errors.As(err, &we) && !errors.As(err, &te) {
		return errorResult(fmt.Sprintf("Error calling tool %q: %s (MCP error %d)", tool, we.Message, we.Code)), nil
	}
	return nil, err
}
