package mcpadapter

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AppsExtension is the ID of the MCP Apps extension: a tool names an
// interactive view (an HTML ui:// resource) in _meta.ui.resourceUri, and
// may say in _meta.ui.visibility who can see it: "model", "app" or both
// (the default). A tool visible only to the app is the view's own: the
// host's application calls it, the model never sees it.
const AppsExtension = "io.modelcontextprotocol/ui"

// ToolUI is a tool's MCP Apps metadata (_meta.ui).
type ToolUI struct {
	// ResourceURI is the tool's view, a ui:// resource; read it with
	// Client.ReadUIResource.
	ResourceURI string
	// Visibility lists who can see the tool: "model", "app"; empty means
	// both.
	Visibility []string
}

// UI returns the tool's MCP Apps metadata, or nil when it has none.
func (t *Tool) UI() *ToolUI {
	m, _ := t.Meta["ui"].(map[string]any)
	if m == nil {
		return nil
	}
	ui := &ToolUI{}
	ui.ResourceURI, _ = m["resourceUri"].(string)
	if vs, ok := m["visibility"].([]any); ok {
		for _, v := range vs {
			if s, ok := v.(string); ok {
				ui.Visibility = append(ui.Visibility, s)
			}
		}
	}
	return ui
}

// ModelVisible reports whether the model may see the tool: true unless
// its _meta.ui.visibility is set and leaves out "model" (an app-only
// tool). Adapter.Tools hands the model only these; Client.Tools lists
// every tool, for the application.
func (t *Tool) ModelVisible() bool {
	m, _ := t.Meta["ui"].(map[string]any)
	if m == nil {
		return true
	}
	vs, ok := m["visibility"].([]any)
	if !ok || len(vs) == 0 {
		return true // absent, or not a list: the default, both
	}
	return slices.Contains(vs, any("model"))
}

// ReadUIResource reads the view of t (its _meta.ui.resourceUri, a ui://
// resource) for the application to render.
func (c *Client) ReadUIResource(ctx context.Context, t *Tool) (*mcp.ReadResourceResult, error) {
	ui := t.UI()
	if ui == nil || ui.ResourceURI == "" {
		return nil, fmt.Errorf("%s: tool %q has no UI resource (_meta.ui.resourceUri)", c.name, t.OriginalName)
	}
	if !strings.HasPrefix(ui.ResourceURI, "ui://") {
		return nil, fmt.Errorf("%s: tool %q: UI resource %q is not a ui:// URI", c.name, t.OriginalName, ui.ResourceURI)
	}
	return c.ReadResource(ctx, ui.ResourceURI)
}
