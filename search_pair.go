package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"

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
	query, limit, problem := searchpair.ParseSearch(args, st.s.opts.Limit)
	if problem != "" {
		return errorResult(problem), nil
	}
	tools, _, ix, err := st.s.current(ctx)
	if err != nil {
		return nil, err
	}
	text, err := searchpair.Search(tools, ix, query, limit, func(t *Tool) searchpair.Match {
		return searchpair.Match{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}, func(t *Tool) string { return t.Server })
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
	name, arguments, problem := searchpair.ParseCall(args, SearchToolsName, CallToolName)
	if problem != "" {
		return errorResult(problem), nil
	}
	tools, removed, ix, err := ct.s.current(ctx)
	if err != nil {
		return nil, err
	}
	t, problem := searchpair.Resolve(tools, removed, ix, name, arguments)
	if problem != "" {
		return errorResult(problem), nil
	}
	return t.CallWith(ctx, arguments, opts)
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
