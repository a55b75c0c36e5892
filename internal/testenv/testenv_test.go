package testenv_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

func TestNode(t *testing.T) {
	t.Parallel()
	node := testenv.Node(t)
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(out)); !strings.HasPrefix(v, "v22.") {
		t.Fatalf("%s --version = %q, want v22.x", node, v)
	}
	t.Logf("node %s: %s", node, strings.TrimSpace(string(out)))
}

func TestNPMDir(t *testing.T) {
	t.Parallel()
	dir := testenv.NPMDir(t)
	t.Logf("npm dir: %s", dir)
	if e := testenv.EverythingEntry(t); !strings.HasSuffix(e, "/server-everything/dist/index.js") {
		t.Errorf("EverythingEntry = %q", e)
	}
	conf := testenv.ConformanceEntry(t)
	out, err := exec.Command(testenv.Node(t), conf, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance --version: %v\n%s", err, out)
	}
	if v := strings.TrimSpace(string(out)); v != "0.2.0-alpha.12" {
		t.Errorf("conformance --version = %q, want 0.2.0-alpha.12", v)
	}
}

// connect opens a go-sdk client session to a fresh server-everything over the
// given transport. With full, the client also advertises roots and sampling
// (deprecated in protocol 2026-07-28, still served by server-everything), so
// that get-roots-list and trigger-sampling-request are registered too; it
// always advertises form and URL elicitation.
//
// Note: a client advertising roots that closes a stdio session within ~350 ms
// of initialize leaves server-everything waiting on its roots/list request, so
// the process ignores stdin EOF and go-sdk's CommandTransport only ends it
// with SIGTERM after TerminateDuration (5 s by default).
func connect(t *testing.T, ctx context.Context, transport string, full bool) *mcp.ClientSession {
	t.Helper()
	var tr mcp.Transport
	switch transport {
	case testenv.TransportStdio:
		path, args, env := testenv.EverythingStdio(t)
		cmd := exec.Command(path, args...)
		cmd.Env = env
		tr = &mcp.CommandTransport{Command: cmd}
	case testenv.TransportSSE:
		tr = &mcp.SSEClientTransport{Endpoint: testenv.StartEverythingHTTP(t, transport)}
	case testenv.TransportStreamable:
		tr = &mcp.StreamableClientTransport{Endpoint: testenv.StartEverythingHTTP(t, transport)}
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	opts := &mcp.ClientOptions{
		// Non-nil Capabilities without RootsV2: no roots capability.
		Capabilities: &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapabilities{
				Form: &mcp.FormElicitationCapabilities{},
				URL:  &mcp.URLElicitationCapabilities{},
			},
		},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode == "url" {
				return &mcp.ElicitResult{Action: "accept"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "check": true}}, nil
		},
	}
	if full {
		//lint:ignore SA1019 server-everything still serves roots.
		opts.Capabilities.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
		//lint:ignore SA1019 server-everything still serves sampling.
		opts.CreateMessageHandler = fakeSampling
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "testenv-test", Version: "0.0.1"}, opts)
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() {
		start := time.Now()
		_ = cs.Close()
		t.Logf("%s: session closed in %v", transport, time.Since(start).Round(time.Millisecond))
	})
	return cs
}

func TestEverythingTransports(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{testenv.TransportStdio, testenv.TransportSSE, testenv.TransportStreamable} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs := connect(t, ctx, transport, false)

			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				t.Logf("tool %-32s args: %s", tool.Name, describeArgs(tool.InputSchema))
			}
			t.Logf("%s: %d tools: %s (protocol %s)", transport, len(names), strings.Join(names, ", "),
				cs.InitializeResult().ProtocolVersion)
			if !slices.Contains(names, "echo") {
				t.Fatalf("no echo tool in %v", names)
			}

			got, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello " + transport}})
			if err != nil {
				t.Fatalf("call echo: %v", err)
			}
			if got.IsError || len(got.Content) != 1 {
				t.Fatalf("echo result: %s", dump(got))
			}
			text, ok := got.Content[0].(*mcp.TextContent)
			if want := "Echo: hello " + transport; !ok || text.Text != want {
				t.Fatalf("echo returned %s, want text %q", dump(got), want)
			}
		})
	}
}

// TestEverythingTools calls the tools mcpadapter's tests rely on over stdio
// and checks the shape of their results.
func TestEverythingTools(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs := connect(t, ctx, testenv.TransportStdio, true)

	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		if args == nil {
			// go-sdk sends a typed nil map as "arguments":null, which the TS
			// SDK rejects with a protocol error (-32602): always send {}.
			args = map[string]any{}
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Logf("%s(%v) -> protocol error: %v", name, args, err)
		} else {
			t.Logf("%s(%v) -> %s", name, args, abbreviate(dump(res)))
		}
		return res, err
	}
	mustCall := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := call(name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: isError: %s", name, dump(res))
		}
		return res
	}

	if res := mustCall("get-sum", map[string]any{"a": 2, "b": 3}); textOf(res) != "The sum of 2 and 3 is 5." {
		t.Errorf("get-sum: %s", dump(res))
	}

	res := mustCall("get-tiny-image", nil)
	var images int
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok && img.MIMEType == "image/png" && len(img.Data) > 0 {
			images++
		}
	}
	if images != 1 || len(res.Content) != 3 {
		t.Errorf("get-tiny-image: want text, image/png, text; got %s", abbreviate(dump(res)))
	}

	res = mustCall("get-structured-content", map[string]any{"location": "Chicago"})
	sc, _ := res.StructuredContent.(map[string]any)
	if sc["conditions"] != "Light rain / drizzle" || sc["temperature"] != float64(36) {
		t.Errorf("get-structured-content: %s", dump(res))
	}

	res = mustCall("get-resource-links", map[string]any{"count": 2})
	var links []string
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	if len(links) != 2 {
		t.Errorf("get-resource-links: %s", dump(res))
	}

	res = mustCall("get-resource-reference", map[string]any{"resourceType": "Text", "resourceId": 1})
	if len(res.Content) != 3 {
		t.Errorf("get-resource-reference: %s", dump(res))
	} else if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource == nil || er.Resource.Text == "" {
		t.Errorf("get-resource-reference: content[1] is not an embedded text resource: %s", dump(res))
	}

	res = mustCall("get-annotated-message", map[string]any{"messageType": "error", "includeImage": true})
	if len(res.Content) != 2 || res.Content[0].(*mcp.TextContent).Annotations == nil {
		t.Errorf("get-annotated-message: %s", abbreviate(dump(res)))
	}

	res = mustCall("trigger-elicitation-request", nil)
	if !strings.Contains(textOf(res), "Name: Ada") {
		t.Errorf("trigger-elicitation-request: %s", dump(res))
	}

	res = mustCall("trigger-url-elicitation", map[string]any{"url": "https://example.invalid/auth"})
	if !strings.Contains(textOf(res), "User completed the URL elicitation flow") {
		t.Errorf("trigger-url-elicitation: %s", dump(res))
	}
	// errorPath=true: the tool answers with JSON-RPC error -32042 (URL
	// elicitation required), not with an isError result.
	if _, err := call("trigger-url-elicitation", map[string]any{"url": "https://example.invalid/auth", "errorPath": true}); err == nil {
		t.Errorf("trigger-url-elicitation errorPath: no error")
	} else if werr := (*jsonrpc.Error)(nil); !errors.As(err, &werr) || werr.Code != -32042 {
		t.Errorf("trigger-url-elicitation errorPath: %v, want JSON-RPC error -32042", err)
	}

	// No tool of server-everything sets isError itself; the TS SDK turns a
	// thrown error and invalid arguments into isError results.
	res, err := call("get-resource-reference", map[string]any{"resourceType": "Nope", "resourceId": 1})
	if err != nil || !res.IsError {
		t.Errorf("get-resource-reference with a bad resourceType: want isError, got %v %s", err, dump(res))
	}
	res, err = call("get-sum", map[string]any{"a": "x"})
	if err != nil || !res.IsError {
		t.Errorf("get-sum with bad arguments: want isError, got %v %s", err, dump(res))
	}
	// A typed nil map becomes "arguments":null on the wire.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-tiny-image", Arguments: map[string]any(nil)}); err == nil {
		t.Errorf(`get-tiny-image with "arguments":null: no error`)
	} else {
		t.Logf(`get-tiny-image with "arguments":null -> protocol error %v`, err)
	}
	_, _ = call("no-such-tool", nil)
	_, _ = call("simulate-research-query", map[string]any{"topic": "go"})
	_, _ = call("get-roots-list", nil)
	_, _ = call("trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 5})
}

// TestEverythingDiscoverBeforeInitialize records what server-everything (TS
// SDK) does with a method it does not know, sent before initialize: it answers
// JSON-RPC -32601 "Method not found" and stays usable.
func TestEverythingDiscoverBeforeInitialize(t *testing.T) {
	t.Parallel()
	path, args, env := testenv.EverythingStdio(t)
	cmd := exec.Command(path, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	roundTrip := func(msg string) map[string]any {
		t.Helper()
		if _, err := fmt.Fprintln(stdin, msg); err != nil {
			t.Fatal(err)
		}
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("server closed stdout after %s", msg)
			}
			t.Logf("-> %s\n<- %s", msg, abbreviate(line))
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatalf("no answer to %s", msg)
			return nil
		}
	}

	m := roundTrip(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32601) {
		t.Fatalf("server/discover: %v, want error -32601", m)
	}
	m = roundTrip(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	r, _ := m["result"].(map[string]any)
	if r == nil || r["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize after server/discover: %v", m)
	}
}

//lint:ignore SA1019 server-everything still serves sampling.
func fakeSampling(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	//lint:ignore SA1019 server-everything still serves sampling.
	return &mcp.CreateMessageResult{Model: "fake", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func dump(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func abbreviate(s string) string {
	if len(s) > 600 {
		return s[:600] + "…"
	}
	return s
}

// describeArgs renders a tool input schema's properties as
// "name:type[*=required][=default]".
func describeArgs(schema any) string {
	var s struct {
		Properties map[string]struct {
			Type    string `json:"type"`
			Enum    []any  `json:"enum"`
			Default any    `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	b, _ := json.Marshal(schema)
	_ = json.Unmarshal(b, &s)
	var parts []string
	for name, p := range s.Properties {
		part := name + ":" + p.Type
		if len(p.Enum) > 0 {
			part += fmt.Sprint(p.Enum)
		}
		if slices.Contains(s.Required, name) {
			part += "*"
		}
		if p.Default != nil {
			part += "=" + fmt.Sprint(p.Default)
		}
		parts = append(parts, part)
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "(none)"
	}
	return strings.Join(parts, " ")
}
