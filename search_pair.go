package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The pair's definitions: constants, so they are byte for byte the same on
// every turn and in every process.
const (
	searchToolsDescription = "Search the catalog of available tools. Give a few words saying what you want to do; " +
		"the best matching tools come back with their names, descriptions and input schemas. " +
		"Then call one with call_tool."
	searchToolsSchema = `{"type":"object","properties":{"query":{"type":"string","description":"What you want to do, in a few words."},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)."}},"required":["query"]}`
	callToolDescription = "Call a tool found with search_tools, by its exact name, with arguments that follow its input schema."
	callToolSchema      = `{"type":"object","properties":{"name":{"type":"string","description":"The tool's name, as search_tools gave it."},` +
		`"arguments":{"type":"object","description":"The tool's arguments, following its input schema."}},"required":["name","arguments"]}`
)

// maxSearchLimit bounds the tools one search_tools call returns.
const maxSearchLimit = 20

// searchPair returns the pair of tools that stand for the catalog.
func searchPair(s *toolSearch) []*Tool {
	return []*Tool{
		{Name: SearchToolsName, OriginalName: SearchToolsName, Server: "mcpadapter", Title: "Search tools",
			Description: searchToolsDescription, InputSchema: json.RawMessage(searchToolsSchema), local: searchTool{s}},
		{Name: CallToolName, OriginalName: CallToolName, Server: "mcpadapter", Title: "Call a tool",
			Description: callToolDescription, InputSchema: json.RawMessage(callToolSchema), local: callTool{s}},
	}
}

// searchTool answers search_tools.
type searchTool struct{ s *toolSearch }

// A searchMatch is one tool in search_tools' answer.
type searchMatch struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (st searchTool) call(ctx context.Context, args json.RawMessage, _ *CallOptions) (*Result, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeObject(args, &in); err != nil {
		return errorResult(fmt.Sprintf("search_tools: %v; send {\"query\": \"what you want to do\"}", err)), nil
	}
	if strings.TrimSpace(in.Query) == "" {
		return errorResult(`search_tools: "query" is empty; say in a few words what you want to do`), nil
	}
	limit := in.Limit
	if limit <= 0 {
		if limit = st.s.opts.Limit; limit <= 0 {
			limit = 5
		}
	}
	limit = min(limit, maxSearchLimit)
	tools, _, ix, err := st.s.current(ctx)
	if err != nil {
		return nil, err
	}
	hits := ix.Search(in.Query, limit)
	if len(hits) == 0 {
		return &Result{Content: []Content{&TextContent{Text: fmt.Sprintf("No tool matches %q; try other words. The catalog has %s.", in.Query, catalogSummary(tools))}}}, nil
	}
	out := struct {
		Note  string        `json:"note,omitempty"`
		Tools []searchMatch `json:"tools"`
	}{}
	if !hits[0].Fits {
		out.Note = "No tool fits this well: these are the closest, matching little of what you asked. " +
			"Call one only if its description shows it does what you want; otherwise search with other words, or tell the user no tool can do it."
	}
	for _, h := range hits {
		t := tools[h.ID]
		schema := t.InputSchema
		if !json.Valid(schema) {
			schema = json.RawMessage("null") // never from a server: go-sdk decoded it
		}
		out.Tools = append(out.Tools, searchMatch{Name: t.Name, Description: oneLine(t.Description), InputSchema: schema})
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("search_tools: %w", err)
	}
	return &Result{Content: []Content{&TextContent{Text: string(b)}}}, nil
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
	if err := decodeObject(args, &in); err != nil {
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
		msg := fmt.Sprintf("call_tool: there is no tool named %q; use search_tools to find one", in.Name)
		if len(near) > 0 {
			msg += " (closest names: " + strings.Join(near, ", ") + ")"
		}
		return errorResult(msg), nil
	}
	if a := bytes.TrimSpace(in.Arguments); len(a) > 0 && a[0] != '{' && !bytes.Equal(a, []byte("null")) {
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

// decodeObject decodes a JSON object of arguments (nil or empty: {}).
func decodeObject(args json.RawMessage, v any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments are not a JSON object of the right shape: %w", err)
	}
	return nil
}

// SearchPairDefinitions returns the definitions of search_tools and
// call_tool as Adapter.Tools shows them, byte for byte, for a program that
// offers the pair itself (a gateway that serves a catalog to its clients).
func SearchPairDefinitions() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: SearchToolsName, Title: "Search tools", Description: searchToolsDescription, InputSchema: json.RawMessage(searchToolsSchema)},
		{Name: CallToolName, Title: "Call a tool", Description: callToolDescription, InputSchema: json.RawMessage(callToolSchema)},
	}
}
