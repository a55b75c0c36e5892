package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// search stands for a large catalog with mcpadapter's tool-search pair,
// search_tools and call_tool (Options.ToolSearch): their definitions are
// the adapter's, byte for byte, so they are the same on every turn and for
// clients of every version.
type search struct {
	g    *Gateway
	opts *mcpadapter.ToolSearch
	on   atomic.Bool
}

func newSearch(g *Gateway) *search { return &search{g: g, opts: g.opts.ToolSearch} }

// over decides, for the catalog tools, whether the pair stands for it.
func (s *search) over(tools []*mcpadapter.Tool) bool {
	on := false
	if s.opts != nil {
		threshold := s.opts.Threshold
		if threshold == 0 {
			threshold = mcpadapter.DefaultToolSearchThreshold
		}
		on = threshold < 0 || mcpadapter.EstimateTokens(tools) > threshold
	}
	s.on.Store(on)
	return on
}

func (s *search) active() bool { return s.on.Load() }

// handles reports whether name is one of the pair, while it is shown.
func (s *search) handles(name string) bool {
	return s.active() && (name == mcpadapter.SearchToolsName || name == mcpadapter.CallToolName)
}

func (s *search) defs() []*mcp.Tool { return mcpadapter.SearchPairDefinitions() }

// call answers search_tools, or forwards call_tool's call.
func (s *search) call(ctx context.Context, name string, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if name == mcpadapter.SearchToolsName {
		audit := s.g.audit(ctx, name, req.Session, req.Params.Arguments)
		res, err := s.searchTools(ctx, req.Params.Arguments)
		audit.end(ctx, res, err)
		return res, err
	}
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeArgs(req.Params.Arguments, &in); err != nil {
		return s.refuse(ctx, req, name, req.Params.Arguments, fmt.Sprintf("call_tool: %v; send {\"name\": \"a tool from search_tools\", \"arguments\": {...}}", err)), nil
	}
	if in.Name == mcpadapter.SearchToolsName || in.Name == mcpadapter.CallToolName {
		return s.refuse(ctx, req, in.Name, in.Arguments, fmt.Sprintf("call_tool: call %s directly, not through call_tool", in.Name)), nil
	}
	if r, ok := s.g.cat.tool(in.Name); !ok || !r.tool.ModelVisible() || !s.g.allowed(ctx, r.u.name, "tool", r.tool.OriginalName) {
		msg := fmt.Sprintf("call_tool: there is no tool named %q; use search_tools to find one", in.Name)
		var near []string
		for _, h := range mcpadapter.SearchTools(s.visible(ctx), in.Name, 3) {
			near = append(near, h.Tool.Name)
		}
		if len(near) > 0 {
			msg += " (closest names: " + strings.Join(near, ", ") + ")"
		}
		return s.refuse(ctx, req, in.Name, in.Arguments, msg), nil
	}
	if a := bytes.TrimSpace(in.Arguments); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
		return s.refuse(ctx, req, in.Name, in.Arguments, fmt.Sprintf("call_tool: \"arguments\" for %q must be a JSON object, following its input schema", in.Name)), nil
	}
	return s.g.callTool(ctx, in.Name, req, in.Arguments)
}

// refuse returns call_tool's refusal of a call of tool, recorded in the
// audit log as refused, as the same call of a catalog tool would be.
func (s *search) refuse(ctx context.Context, req *mcp.CallToolRequest, tool string, args json.RawMessage, msg string) *mcp.CallToolResult {
	s.g.audit(ctx, tool, req.Session, args).end(ctx, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg})
	return toolError(msg)
}

// visible returns the catalog's tools the request's principal may see,
// without the tools for apps only: a model searches them.
func (s *search) visible(ctx context.Context) []*mcpadapter.Tool {
	all := s.g.cat.allTools()
	out := all[:0]
	for _, t := range all {
		if t.ModelVisible() && s.g.allowed(ctx, t.Server, "tool", t.OriginalName) {
			out = append(out, t)
		}
	}
	return out
}

func (s *search) searchTools(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(args, &in); err != nil {
		return toolError(fmt.Sprintf("search_tools: %v; send {\"query\": \"what you want to do\"}", err)), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return toolError(`search_tools: "query" is empty; say in a few words what you want to do`), nil
	}
	limit := in.Limit
	if limit <= 0 {
		if limit = s.opts.Limit; limit <= 0 {
			limit = 5
		}
	}
	limit = min(limit, 20)
	tools := s.visible(ctx)
	hits := mcpadapter.SearchTools(tools, in.Query, limit)
	if len(hits) == 0 {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("No tool matches %q; try other words. The catalog has %d tools.", in.Query, len(tools))}}}, nil
	}
	type match struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	var out struct {
		Tools []match `json:"tools"`
	}
	for _, h := range hits {
		schema := h.Tool.InputSchema
		if !json.Valid(schema) {
			schema = json.RawMessage("null")
		}
		out.Tools = append(out.Tools, match{Name: h.Tool.Name, Description: strings.Join(strings.Fields(h.Tool.Description), " "), InputSchema: schema})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

func decodeArgs(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments are not a JSON object of the right shape: %w", err)
	}
	return nil
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}
