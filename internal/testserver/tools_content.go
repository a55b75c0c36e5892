package testserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawTool registers a tool without arguments whose handler always succeeds
// with the given content.
func rawTool(srv *mcp.Server, name, description string, content func() []mcp.Content) {
	srv.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: content()}, nil
		})
}

// hologram is a content block of a type no MCP version defines: go-sdk's
// Content interface cannot be implemented outside go-sdk, so it borrows
// TextContent's unexported method and writes its own JSON.
type hologram struct{ *mcp.TextContent }

// MarshalJSON writes HologramBlock.
func (hologram) MarshalJSON() ([]byte, error) { return []byte(HologramBlock), nil }

// addContentTools registers image, audio, link, embedded, schema, precise
// and hologram.
func addContentTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "precise", Description: "Return structured content with large numbers, members out of order.", InputSchema: emptyObject},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{text("precise")},
				StructuredContent: json.RawMessage(PreciseStructured),
			}, nil
		})

	rawTool(srv, "hologram", "Return a text block and a block of an unknown type.", func() []mcp.Content {
		return []mcp.Content{text(HologramText), hologram{&mcp.TextContent{}}}
	})

	rawTool(srv, "image", "Return a tiny PNG image.", func() []mcp.Content {
		return []mcp.Content{&mcp.ImageContent{
			Data:        TinyPNG,
			MIMEType:    "image/png",
			Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5},
			Meta:        mcp.Meta{"source": "test"},
		}}
	})

	rawTool(srv, "audio", "Return a tiny WAV clip.", func() []mcp.Content {
		return []mcp.Content{&mcp.AudioContent{Data: TinyWAV, MIMEType: "audio/wav"}}
	})

	rawTool(srv, "link", "Return a resource link.", func() []mcp.Content {
		size := int64(42)
		return []mcp.Content{
			&mcp.ResourceLink{URI: DocURI, Name: "doc1", Title: "Doc One", MIMEType: "text/plain", Size: &size},
			text("see doc1"),
		}
	})

	rawTool(srv, "embedded", "Return embedded text and blob resources.", func() []mcp.Content {
		return []mcp.Content{
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: DocURI, MIMEType: "text/plain", Text: DocText}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: BinURI, MIMEType: "application/octet-stream", Blob: Blob}},
		}
	})

	srv.AddTool(&mcp.Tool{
		Name:        "schema",
		Title:       "Schema test",
		Description: "Echo the raw arguments; has an unusual input schema.",
		InputSchema: json.RawMessage(SchemaInput),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Schema test"},
		Meta:        mcp.Meta{"owner": "tests"},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := string(req.Params.Arguments)
		if args == "" {
			args = "null"
		}
		return &mcp.CallToolResult{Content: []mcp.Content{text(args)}}, nil
	})
}

// addManyTools registers extra_01 … extra_25, each returning its own name.
func addManyTools(srv *mcp.Server) {
	for i := 1; i <= ManyToolsCount; i++ {
		name := fmt.Sprintf("extra_%02d", i)
		rawTool(srv, name, "Trivial tool "+name+".", func() []mcp.Content {
			return []mcp.Content{text(name)}
		})
	}
}
