package mcpadapter

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content is one block of a tool result: *TextContent, *ImageContent,
// *AudioContent, *ResourceLinkContent or *EmbeddedResourceContent.
//
// Every block keeps the annotations and _meta the server attached to it.
type Content interface {
	// Kind names the block's MCP content type: "text", "image", "audio",
	// "resource_link" or "resource".
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
