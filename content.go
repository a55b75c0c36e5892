package mcpadapter

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content is one block of a tool result: *TextContent, *ImageContent,
// *AudioContent, *ResourceLinkContent or *EmbeddedResourceContent, or
// *UnknownContent for a block of a type this version does not convert.
//
// Every block keeps the annotations and _meta the server attached to it.
type Content interface {
	// Kind names the block's MCP content type: "text", "image", "audio",
	// "resource_link" or "resource", or an UnknownContent's Type.
	Kind() string
	// ContentAnnotations returns the block's annotations, or nil.
	ContentAnnotations() *mcp.Annotations
	// ContentMeta returns the block's _meta, or nil.
	ContentMeta() map[string]any
}

// TextContent is a text block.
type TextContent struct {
	Text        string
	Annotations *mcp.Annotations
	Meta        map[string]any
}

// ImageContent is an image block. Data holds the decoded bytes.
type ImageContent struct {
	Data        []byte
	MIMEType    string
	Annotations *mcp.Annotations
	Meta        map[string]any
}

// AudioContent is an audio block. Data holds the decoded bytes.
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *mcp.Annotations
	Meta        map[string]any
}

// ResourceLinkContent points at a resource the client may read with
// Client.ReadResource; its contents are not included.
type ResourceLinkContent struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Size is the resource's size in bytes, or nil when the server did not say.
	Size        *int64
	Icons       []mcp.Icon
	Annotations *mcp.Annotations
	Meta        map[string]any
}

// EmbeddedResourceContent carries a resource's contents inline. Exactly one
// of Text and Blob is set.
type EmbeddedResourceContent struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
	// ResourceMeta is the _meta of the embedded resource contents; Meta is
	// the _meta of the content block that carries it.
	ResourceMeta map[string]any
	Annotations  *mcp.Annotations
	Meta         map[string]any
}

// UnknownContent is a content block of a type this version of the package
// does not convert, such as one a newer protocol version added. It is kept
// as the server sent it rather than failing the call; Result.Text shows it
// to a model as a short placeholder, and a program can read Raw itself.
type UnknownContent struct {
	// Type is the block's "type", such as "hologram".
	Type string
	// Raw is the whole block, as the server wrote it.
	Raw json.RawMessage
	// Annotations and Meta are the block's annotations and _meta, when it
	// has them in their usual form; Raw has them in any case.
	Annotations *mcp.Annotations
	Meta        map[string]any
}

// Kind implements Content.
func (*TextContent) Kind() string { return "text" }

// Kind implements Content.
func (*ImageContent) Kind() string { return "image" }

// Kind implements Content.
func (*AudioContent) Kind() string { return "audio" }

// Kind implements Content.
func (*ResourceLinkContent) Kind() string { return "resource_link" }

// Kind implements Content.
func (*EmbeddedResourceContent) Kind() string { return "resource" }

// Kind implements Content: the block's Type.
func (c *UnknownContent) Kind() string { return c.Type }

// ContentAnnotations implements Content.
func (c *TextContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentAnnotations implements Content.
func (c *ImageContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentAnnotations implements Content.
func (c *AudioContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentAnnotations implements Content.
func (c *ResourceLinkContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentAnnotations implements Content.
func (c *EmbeddedResourceContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentAnnotations implements Content.
func (c *UnknownContent) ContentAnnotations() *mcp.Annotations { return c.Annotations }

// ContentMeta implements Content.
func (c *TextContent) ContentMeta() map[string]any { return c.Meta }

// ContentMeta implements Content.
func (c *ImageContent) ContentMeta() map[string]any { return c.Meta }

// ContentMeta implements Content.
func (c *AudioContent) ContentMeta() map[string]any { return c.Meta }

// ContentMeta implements Content.
func (c *ResourceLinkContent) ContentMeta() map[string]any { return c.Meta }

// ContentMeta implements Content.
func (c *EmbeddedResourceContent) ContentMeta() map[string]any { return c.Meta }

// ContentMeta implements Content.
func (c *UnknownContent) ContentMeta() map[string]any { return c.Meta }
