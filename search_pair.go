package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/searchpair"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchPair returns the pair of tools that stand for the catalog.
func searchPair(s *toolSearch) []*Tool {
	return []*Tool{
		{Name: SearchToolsName, OriginalName: SearchToolsName, Server: "mcpadapter", Title: "Search tools",
			Description: searchpair.SearchDescription, InputSchema: json.RawMessage(searchpair.SearchSchema), local: searchTool{s}},
		{Name: CallToolName, OriginalName: CallToolName, Server: "mcpadapter", Title: "Call a tool",
			Description: searchpair.CallDescription, InputSchema: json.RawMessage(searchpair.CallSchema), local: callTool{s}},
	}
}

// searchTool answers search_tools.
type searchTool struct{ s *toolSearch }

func (st searchTool) call(ctx context.Context, args json.RawMessage, _ *CallOptions) (*Result, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := searchpair.DecodeObject(args, &in); err != nil {
		return errorResult(fmt.Sprintf("search_tools: %v; send {\"query\": \"what you want to do\"}", err)), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return errorResult(`search_tools: "query" is empty; say in a few words what you want to do`), nil
	}
	limit := in.Limit
	if limit <= 0 {
		if limit = st.s.opts.Limit; limit <= 0 {
			limit = searchpair.DefaultLimit
		}
	}
	tools, _, ix, err := st.s.current(ctx)
	if err != nil {
		return nil, err
	}
	hits := ix.Search(in.Query, min(limit, searchpair.MaxLimit))
	if len(hits) == 0 {
		servers := make([]string, 0, len(tools))
		for _, t := range tools {
			servers = append(servers, t.Server)
		}
		return &Result{Content: []Content{&TextContent{Text: searchpair.NoMatch(in.Query, len(tools), servers)}}}, nil
	}
	matches := make([]searchpair.Match, len(hits))
	for i, h := range hits {
		t := tools[h.ID]
		matches[i] = searchpair.Match{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	text, err := searchpair.Answer(matches, hits[0].Fits)
	if err != nil {
		return nil, err
	}
	return &Result{Content: []Content{&TextContent{Text: text}}}, nil
}

func (searchTool) resume(context.Context, *PendingCall, *elicitation.Resume) (*Result, error) {
	return nil, fmt.Errorf("mcpadapter: %s never asks a question, so there is nothing to resume", SearchToolsName)
}

// callTool answers call_tool.
type callTool struct{ s *toolSearch }

func (ct callTool) call(ctx context.Context, args json.RawMessage, opts *CallOptions) (*Result, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := searchpair.DecodeObject(args, &in); err != nil {
		return errorResult(fmt.Sprintf("call_tool: %v; send {\"name\": \"a tool from search_tools\", \"arguments\": {...}}", err)), nil
	}
	if in.Name == SearchToolsName || in.Name == CallToolName {
		return errorResult(fmt.Sprintf("call_tool: call %s directly, not through call_tool", in.Name)), nil
	}
	tools, removed, ix, err := ct.s.current(ctx)
	if err != nil {
		return nil, err
	}
	t := tools[in.Name]
	if t == nil {
		if server, ok := removed[in.Name]; ok {
			return errorResult(fmt.Sprintf("Tool %q was removed by server %q; use search_tools to find another.", in.Name, server)), nil
		}
		var near []string
		for _, h := range ix.Search(in.Name, 3) {
			near = append(near, h.ID)
		}
		return errorResult(searchpair.Unknown(in.Name, near)), nil
	}
	if searchpair.NotObject(in.Arguments) {
		return errorResult(fmt.Sprintf("call_tool: \"arguments\" for %q must be a JSON object, following its input schema", in.Name)), nil
	}
	return t.CallWith(ctx, in.Arguments, opts)
}

func (ct callTool) resume(ctx context.Context, pending *PendingCall, resume *elicitation.Resume) (*Result, error) {
	if pending == nil {
		return nil, fmt.Errorf("mcpadapter: %s: Resume with no pending call", CallToolName)
	}
	tools, _, _, err := ct.s.current(ctx)
	if err != nil {
		return nil, err
	}
	// The call belongs to its server's tool, whatever the model now calls
	// it (names change when servers come and go).
	var t *Tool
	for _, c := range tools {
		if c.Server == pending.Server && c.OriginalName == pending.Tool {
			t = c
			break
		}
	}
	if t == nil {
		return nil, fmt.Errorf("mcpadapter: %s: resuming %s/%s: the tool is no longer listed", CallToolName, pending.Server, pending.Tool)
	}
	return t.Resume(ctx, pending, resume)
}

// SearchPairDefinitions returns the definitions of search_tools and
// call_tool as Adapter.Tools shows them, byte for byte, for a program that
// offers the pair itself (a gateway that serves a catalog to its clients).
func SearchPairDefinitions() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: SearchToolsName, Title: "Search tools", Description: searchpair.SearchDescription, InputSchema: json.RawMessage(searchpair.SearchSchema)},
		{Name: CallToolName, Title: "Call a tool", Description: searchpair.CallDescription, InputSchema: json.RawMessage(searchpair.CallSchema)},
	}
}
