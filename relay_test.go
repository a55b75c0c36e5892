//lint:file-ignore SA1019 roots are deprecated in 2026-07-28 but live in the handshake era, which the adapter supports

package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRootsHandler: a server's roots/list is answered by
// ClientOptions.RootsHandler, and the roots capability is advertised.
func TestRootsHandler(t *testing.T) {
	ctx := testCtx(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "roots"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(uris, ",")}}}, nil
	})
	asked := 0
	c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{RootsHandler: func(context.Context, *mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
		asked++
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///from/the/handler"}}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "roots", nil, nil)
	if err != nil || res.Text() != "file:///from/the/handler" || asked != 1 {
		t.Fatalf("roots: %v, %v (handler asked %d times)", res, err, asked)
	}
}

// TestRelay: with Relay, a 2026-07-28 server's input_required comes back
// through Session as sent, and a handshake-era server's elicitation/create
// reaches ElicitationHandler even with a schema go-sdk's client would
// refuse; without it, go-sdk answers input_required with the handler.
func TestRelay(t *testing.T) {
	ctx := testCtx(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	answer := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"guests": 2}}, nil
	}
	for _, relay := range []bool{true, false} {
		c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Relay: relay, ElicitationHandler: answer})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := c.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "book", Arguments: map[string]any{"date": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.NeedsInput(); got != relay {
			t.Errorf("Relay %v: NeedsInput %v", relay, got)
		}
		c.Close()
	}

	// A multi-select whose items are titled with anyOf: go-sdk's client
	// refuses the schema ("items must specify enum").
	schema := map[string]any{"type": "object", "properties": map[string]any{"pick": map[string]any{
		"type": "array", "items": map[string]any{"type": "string", "anyOf": []map[string]any{{"const": "a", "title": "A"}}}}}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "asks"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "pick", RequestedSchema: schema})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(err)}}}, nil
	})
	for _, relay := range []bool{true, false} {
		seen := false
		c, err := mcpadapter.NewClient(srv, &mcpadapter.ClientOptions{Relay: relay, ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			seen = true
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.CallTool(ctx, "ask", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if seen != relay {
			t.Errorf("Relay %v: the handler saw the question: %v (%s)", relay, seen, res.Text())
		}
		c.Close()
	}
}

// TestServerArguments: a tool with argument transforms gives the server
// its own names and defaults back.
func TestServerArguments(t *testing.T) {
	ctx := testCtx(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := mcpadapter.New(c, &mcpadapter.Options{Transforms: map[string]*mcpadapter.ServerTransform{c.Name(): {Tools: map[string]*mcpadapter.ToolTransform{
		"add": {Arguments: map[string]*mcpadapter.ArgTransform{"a": {Name: "first"}, "b": {Default: json.RawMessage(`10`)}}},
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.OriginalName != "add" {
			if got := string(tl.ServerArguments(json.RawMessage(`{"x":1}`))); got != `{"x":1}` {
				t.Errorf("%s: %s", tl.Name, got)
			}
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(tl.ServerArguments(json.RawMessage(`{"first":1}`)), &got); err != nil || got["a"] != 1.0 || got["b"] != 10.0 || got["first"] != nil {
			t.Errorf("add: %v, %v", got, err)
		}
	}
}

// TestSearchPairDefinitions: the definitions a gateway shows are those
// Adapter.Tools gives a model.
func TestSearchPairDefinitions(t *testing.T) {
	ctx := testCtx(t)
	a, err := mcpadapter.New(testserver.New(testserver.Options{}), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defs := mcpadapter.SearchPairDefinitions()
	if len(tools) != 2 || len(defs) != 2 {
		t.Fatalf("%d tools, %d definitions", len(tools), len(defs))
	}
	for i, d := range defs {
		if tools[i].Name != d.Name || tools[i].Description != d.Description || string(tools[i].InputSchema) != string(d.InputSchema.(json.RawMessage)) {
			t.Errorf("definition %d: %+v, tool %+v", i, d, tools[i])
		}
	}
}
