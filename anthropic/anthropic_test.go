package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/bindingtest"

	ant "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/anthropic"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func toolset(t *testing.T, era testserver.Era, opts *mcpadapter.Options) *anthropic.Toolset {
	t.Helper()
	return toolsetOf(t, testserver.New(testserver.Options{Era: era}), opts)
}

func toolsetOf(t *testing.T, target any, opts *mcpadapter.Options) *anthropic.Toolset {
	t.Helper()
	ts, err := anthropic.New(bindingtest.Tools(t, target, opts), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestTools: every tool of both eras, as the SDK sends it, has a valid
// name and an input_schema the Anthropic rules accept; the schema keeps
// the profile's output byte for byte ($defs, vendor keywords, property
// order, a big integer).
func TestTools(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil)
			data, err := json.Marshal(ts.Tools())
			if err != nil {
				t.Fatal(err)
			}
			var raws []json.RawMessage
			if err := json.Unmarshal(data, &raws); err != nil {
				t.Fatal(err)
			}
			if len(raws) < 10 {
				t.Fatalf("%d tools: %s", len(raws), data)
			}
			for _, raw := range raws {
				var tool struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"input_schema"`
				}
				if err := json.Unmarshal(raw, &tool); err != nil {
					t.Fatal(err)
				}
				if !toolName.MatchString(tool.Name) {
					t.Errorf("tool name %q", tool.Name)
				}
				if p := schemacheck.Anthropic(tool.InputSchema); len(p) > 0 {
					t.Errorf("tool %s: input_schema %s: %v", tool.Name, tool.InputSchema, p)
				}
				var back ant.ToolParam
				if err := json.Unmarshal(raw, &back); err != nil || back.Name != tool.Name {
					t.Errorf("tool %s: the SDK reads it back as %+v: %v", tool.Name, back, err)
				}
				if tool.Name == "schema" {
					want := ts.Profile("schema").Schema
					var a, b any
					_ = json.Unmarshal(want, &a)
					_ = json.Unmarshal(tool.InputSchema, &b)
					ja, _ := json.Marshal(a)
					jb, _ := json.Marshal(b)
					if string(ja) != string(jb) || !strings.Contains(string(tool.InputSchema), "12345678901234567890") ||
						!strings.Contains(string(tool.InputSchema), `{"target":`) || !strings.Contains(string(tool.InputSchema), `"x-vendor"`) {
						t.Errorf("schema tool input_schema %s, want %s", tool.InputSchema, want)
					}
				}
			}
		})
	}
}

func TestNewProfile(t *testing.T) {
	if _, err := anthropic.New(nil, &anthropic.Options{Profile: schemaprofile.Gemini}); err == nil || !strings.Contains(err.Error(), `"gemini"`) {
		t.Errorf("New with the gemini profile: %v", err)
	}
	bad := &mcpadapter.Tool{Server: "s1", Name: "t1", InputSchema: json.RawMessage(`{"type":"string"}`)}
	_, err := anthropic.New([]*mcpadapter.Tool{bad}, &anthropic.Options{Profile: schemaprofile.Verbatim})
	if err == nil || !strings.Contains(err.Error(), `server "s1" tool "t1"`) {
		t.Errorf("verbatim non-object schema: %v", err)
	}
}

func block(t *testing.T, o anthropic.Outcome) map[string]any {
	t.Helper()
	data, err := json.Marshal(o.ResultBlock())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRun runs one turn of several calls at once against both eras:
// text, a tool error, an image, an unknown tool and an error with
// structured content.
func TestRun(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []anthropic.Call{
				{ID: "toolu_1", Name: "echo", Input: json.RawMessage(`{"text":"hi"}`)},
				{ID: "toolu_2", Name: "fail", Input: json.RawMessage(`{"message":"boom"}`)},
				{ID: "toolu_3", Name: "image", Input: json.RawMessage(`{}`)},
				{ID: "toolu_4", Name: "nope", Input: json.RawMessage(`{}`)},
				{ID: "toolu_5", Name: "fail_structured"},
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if b := block(t, outs[0]); b["type"] != "tool_result" || b["tool_use_id"] != "toolu_1" || b["is_error"] != nil ||
				b["content"].([]any)[0].(map[string]any)["text"] != "hi" {
				t.Errorf("echo block %v", b)
			}
			if b := block(t, outs[1]); b["is_error"] != true || !strings.Contains(outs[1].Text(), "boom") {
				t.Errorf("fail block %v", b)
			}
			img := block(t, outs[2])["content"].([]any)[0].(map[string]any)
			src, _ := img["source"].(map[string]any)
			if img["type"] != "image" || src["type"] != "base64" || src["media_type"] != "image/png" || src["data"] == "" {
				t.Errorf("image block %v", img)
			}
			if b := block(t, outs[3]); b["is_error"] != true || !strings.Contains(outs[3].Text(), `unknown tool "nope"`) {
				t.Errorf("nope block %v", b)
			}
			if outs[4].Result == nil || !outs[4].Result.IsError || outs[4].Result.Artifact == nil {
				t.Errorf("fail_structured: %+v, want an error result with its artifact", outs[4].Result)
			}
			msg, _ := json.Marshal(anthropic.UserMessage(outs))
			if n := strings.Count(string(msg), `"type":"tool_result"`); n != 5 || !strings.HasPrefix(string(msg), `{"content":`) || !strings.Contains(string(msg), `"role":"user"`) {
				t.Errorf("user message with %d tool results: %s", n, msg)
			}
		})
	}
}

// TestCalls reads the tool_use blocks of a Messages API reply.
func TestCalls(t *testing.T) {
	var msg ant.Message
	reply := `{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_reason":"tool_use",
		"content":[{"type":"text","text":"Let me look."},
		{"type":"tool_use","id":"toolu_a","name":"echo","input":{"text":"x"}},
		{"type":"tool_use","id":"toolu_b","name":"add","input":{"a":1,"b":2}}],
		"usage":{"input_tokens":1,"output_tokens":1}}`
	if err := json.Unmarshal([]byte(reply), &msg); err != nil {
		t.Fatal(err)
	}
	calls := anthropic.Calls(&msg)
	if len(calls) != 2 || calls[0].ID != "toolu_a" || calls[1].Name != "add" || string(calls[1].Input) != `{"a":1,"b":2}` {
		t.Errorf("calls %+v", calls)
	}
}

// TestRunTransportFailure: a server process that dies mid-call is a Go
// error (a CallError naming the call and the server), not a result.
func TestRunTransportFailure(t *testing.T) {
	ts := toolsetOf(t, mcpadapter.Command{Path: testserver.Build(t)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []anthropic.Call{{ID: "toolu_1", Name: "crash"}, {ID: "toolu_2", Name: "echo", Input: json.RawMessage(`{"text":"x"}`)}})
	var ce *anthropic.CallError
	if !errors.As(err, &ce) || ce.Call.ID != "toolu_1" {
		t.Fatalf("err = %v, want a CallError for toolu_1", err)
	}
	if outs[0].Err == nil || !strings.Contains(err.Error(), "mcptestserver") {
		t.Errorf("outcome %+v, err %v: want the failure naming the server", outs[0], err)
	}
	if b := block(t, outs[0]); b["is_error"] != true {
		t.Errorf("transport failure block %v, want is_error", b)
	}
}

func TestElicitationResume(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []anthropic.Call{{ID: "toolu_1", Name: "book", Input: json.RawMessage(`{"date":"Fri"}`)}})
			if err != nil {
				t.Fatal(err)
			}
			p := outs[0].Pending
			if p == nil || len(p.Requests) != 1 {
				t.Fatalf("outcome %+v, want pending", outs[0])
			}
			out, err := ts.Resume(ctx, outs[0], &elicitation.Resume{Responses: map[string]elicitation.Response{
				p.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"guests": 4}}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Text(); !strings.Contains(got, "Booked 4 guests") || out.IsError() {
				t.Errorf("after resume: %q", got)
			}
			if _, err := ts.Resume(ctx, out, nil); err == nil {
				t.Error("Resume of a finished outcome: no error")
			}
		})
	}
}

// TestRenamedProperty: a property name Anthropic refuses is sent renamed,
// and the server gets its own name back when the model uses the new one.
func TestRenamedProperty(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "greet", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"user name":{"type":"string"}},"required":["user name"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := toolsetOf(t, srv, nil)
	data, _ := json.Marshal(ts.Tools())
	if !strings.Contains(string(data), `"properties":{"user_name":`) || !strings.Contains(string(data), `"required":["user_name"]`) {
		t.Fatalf("tools %s", data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []anthropic.Call{{ID: "toolu_1", Name: "greet", Input: json.RawMessage(`{"user_name":"Ada"}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Text(); got != `{"user name":"Ada"}` {
		t.Errorf("the server got %s", got)
	}
}

// TestRenamedPropertyError: when the model's arguments break the server's
// schema, the message names each renamed argument as the model saw it
// (user_name, stops[1].stop_name), not as the server names it, and the
// server is not called.
func TestRenamedPropertyError(t *testing.T) {
	calls := 0
	srv := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "plan", InputSchema: json.RawMessage(`{"type":"object","properties":{
		"user name":{"type":"string","maxLength":5},
		"stops":{"type":"array","items":{"type":"object","properties":{"stop name":{"type":"string"}},"required":["stop name"]}}},
		"required":["user name"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls++
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "planned"}}}, nil
		})
	for _, p := range []schemaprofile.Profile{schemaprofile.Anthropic, schemaprofile.AnthropicStrict} {
		t.Run(string(p), func(t *testing.T) {
			ts, err := anthropic.New(bindingtest.Tools(t, srv, nil), &anthropic.Options{Profile: p})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []anthropic.Call{{ID: "toolu_1", Name: "plan",
				Input: json.RawMessage(`{"user_name":"Ada Lovelace","stops":[{"stop_name":"Rome"},{}]}`)}})
			if err != nil {
				t.Fatal(err)
			}
			got := outs[0].Text()
			if !outs[0].Result.IsError {
				t.Fatalf("not an error: %s", got)
			}
			for _, want := range []string{"$.user_name: expected at most 5 characters", "$.stops[1].stop_name: required"} {
				if !strings.Contains(got, want) {
					t.Errorf("message lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "user name") || strings.Contains(got, "stop name") {
				t.Errorf("message names the server's argument names:\n%s", got)
			}
		})
	}
	if calls != 0 {
		t.Errorf("the server was called %d times", calls)
	}
}

// TestStrictProfile: under AnthropicStrict, tools go out with strict true
// and an input_schema Anthropic's strict rules accept, within the
// request's limits (the rest go non-strict); a bound strict mode lacks
// is in the description, and the adapter still refuses an argument that
// breaks it before the server sees it; renamed arguments reach the
// server under its names.
func TestStrictProfile(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "strict", Version: "1"}, nil)
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "pick", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"user name":{"type":"string","minLength":2},"n":{"type":"integer","minimum":1,"maximum":5}},"required":["user name"]}`)}, echo)
	// 30 optional properties: more than strict tool use allows.
	var wide strings.Builder
	wide.WriteString(`{"type":"object","properties":{`)
	for i := range 30 {
		if i > 0 {
			wide.WriteString(",")
		}
		wide.WriteString(`"p` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":{"type":"string"}`)
	}
	wide.WriteString(`}}`)
	srv.AddTool(&mcp.Tool{Name: "wide", InputSchema: json.RawMessage(wide.String())}, echo)
	ts, err := anthropic.New(bindingtest.Tools(t, srv, nil), &anthropic.Options{Profile: schemaprofile.AnthropicStrict})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(ts.Tools())
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Name        string          `json:"name"`
		Strict      *bool           `json:"strict"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		switch tl.Name {
		case "pick":
			if tl.Strict == nil || !*tl.Strict || !ts.Strict("pick") {
				t.Errorf("pick: strict %v: %s", tl.Strict, data)
			}
			if p := schemacheck.AnthropicStrict(tl.InputSchema); len(p) > 0 {
				t.Errorf("pick: strict rules refuse %s: %v", tl.InputSchema, p)
			}
			if !strings.Contains(string(tl.InputSchema), "At least 1.") || strings.Contains(string(tl.InputSchema), `"minimum"`) {
				t.Errorf("pick: the bound is not in the description: %s", tl.InputSchema)
			}
		case "wide":
			if tl.Strict != nil || ts.Strict("wide") || ts.Profile("wide").NotStrict == "" {
				t.Errorf("wide: strict %v, NotStrict %q", tl.Strict, ts.Profile("wide").NotStrict)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []anthropic.Call{
		{ID: "toolu_1", Name: "pick", Input: json.RawMessage(`{"user_name":"Ada","n":3}`)},
		{ID: "toolu_2", Name: "pick", Input: json.RawMessage(`{"user_name":"A","n":9}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := outs[0].Text(); got != `{"user name":"Ada","n":3}` {
		t.Errorf("the server got %s", got)
	}
	b := block(t, outs[1])
	text := fmt.Sprint(b["content"])
	if b["is_error"] != true || !strings.Contains(text, `$.user_name: expected at least 2 characters`) || !strings.Contains(text, "$.n: expected a number <= 5") {
		t.Errorf("invalid arguments: %v", b)
	}
}
