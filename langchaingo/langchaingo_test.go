package langchaingo_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/bindingtest"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/langchaingo"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"github.com/tmc/langchaingo/llms"
)

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func toolset(t *testing.T, era testserver.Era, opts *mcpadapter.Options, lopts *langchaingo.Options) *langchaingo.Toolset {
	t.Helper()
	return toolsetOf(t, testserver.New(testserver.Options{Era: era}), opts, lopts)
}

func toolsetOf(t *testing.T, target any, opts *mcpadapter.Options, lopts *langchaingo.Options) *langchaingo.Toolset {
	t.Helper()
	ts, err := langchaingo.New(bindingtest.Tools(t, target, opts), lopts)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func call(id, name, args string) llms.ToolCall {
	return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: args}}
}

func TestDefinitions(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil, nil)
			var echo *llms.FunctionDefinition
			for _, d := range ts.Definitions() {
				if d.Type != "function" || d.Function == nil {
					t.Fatalf("definition %+v", d)
				}
				if d.Function.Name == "echo" {
					echo = d.Function
				}
			}
			if echo == nil {
				t.Fatal("no echo definition")
			}
			params, _ := json.Marshal(echo.Parameters)
			if echo.Strict || echo.Description != "Echo the text back." ||
				!strings.Contains(string(params), `"type":"object"`) || !strings.Contains(string(params), `"text"`) {
				t.Errorf("echo: %+v, parameters %s", echo, params)
			}
			if p := ts.Profile("echo"); p == nil || p.Profile != schemaprofile.OpenAI {
				t.Errorf("echo profile %+v, want the openai profile by default", p)
			}
			var names []string
			for _, tool := range ts.Tools() {
				names = append(names, tool.Name())
			}
			if !strings.Contains(strings.Join(names, ","), "echo") {
				t.Errorf("tools.Tool names %v", names)
			}
		})
	}
}

// TestDefinitionsStrict: the openai-strict profile marks strict schemas.
func TestDefinitionsStrict(t *testing.T) {
	ts := toolset(t, testserver.Modern, nil, &langchaingo.Options{Profile: schemaprofile.OpenAIStrict})
	for _, d := range ts.Definitions() {
		if d.Function.Name == "echo" {
			params, _ := json.Marshal(d.Function.Parameters)
			if !d.Function.Strict || !strings.Contains(string(params), `"additionalProperties":false`) {
				t.Errorf("echo strict %v, parameters %s", d.Function.Strict, params)
			}
			return
		}
	}
	t.Fatal("no echo definition")
}

// TestRun runs one turn of several calls at once against both eras:
// text, a tool error, an image, an unknown tool, bad JSON and an error
// with structured content.
func TestRun(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []llms.ToolCall{
				call("c1", "echo", `{"text":"hi"}`),
				call("c2", "fail", `{"message":"boom"}`),
				call("c3", "image", `{}`),
				call("c4", "nope", `{}`),
				call("c5", "fail_structured", ``),
				call("c6", "echo", `{"text":`),
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := outs[0].Text(); got != "hi" {
				t.Errorf("echo: %q", got)
			}
			if got := outs[1].Text(); !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, "boom") {
				t.Errorf("fail: %q", got)
			}
			if got := outs[2].Text(); !strings.Contains(got, "image/png") {
				t.Errorf("image: %q, want the image described", got)
			}
			if got := outs[3].Text(); !strings.Contains(got, `unknown tool "nope"`) {
				t.Errorf("nope: %q", got)
			}
			if outs[4].Result == nil || !outs[4].Result.IsError || outs[4].Result.Artifact == nil {
				t.Errorf("fail_structured: %+v, want an error result with its artifact", outs[4].Result)
			}
			if got := outs[5].Text(); !strings.Contains(got, "not JSON") {
				t.Errorf("bad JSON: %q", got)
			}
			msg := outs[0].Message()
			r, ok := msg.Parts[0].(llms.ToolCallResponse)
			if msg.Role != llms.ChatMessageTypeTool || len(msg.Parts) != 1 || !ok ||
				r != (llms.ToolCallResponse{ToolCallID: "c1", Name: "echo", Content: "hi"}) {
				t.Errorf("message %+v", msg)
			}
		})
	}
}

// TestToolCall: the tools.Tool shape gives text, tool errors as text, and
// the structured content through CallResult.
func TestToolCall(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			echo := ts.Tool("echo")
			if got, err := echo.Call(ctx, `{"text":"hello"}`); err != nil || got != "hello" {
				t.Errorf("echo: %q, %v", got, err)
			}
			if !strings.Contains(echo.Description(), `"text"`) {
				t.Errorf("description %q, want the input schema", echo.Description())
			}
			got, err := ts.Tool("fail").Call(ctx, `{"message":"nope"}`)
			if err != nil || got != "Error: nope" {
				t.Errorf("fail: %q, %v", got, err)
			}
			res, err := ts.Tool("fail_structured").CallResult(ctx, "")
			if err != nil || res.Artifact == nil {
				t.Errorf("fail_structured: %+v, %v", res, err)
			}
		})
	}
}

// TestRunTransportFailure: a server process that dies mid-call is a Go
// error (a CallError naming the call and the server), not a result.
func TestRunTransportFailure(t *testing.T) {
	ts := toolsetOf(t, mcpadapter.Command{Path: testserver.Build(t)}, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []llms.ToolCall{call("c2", "crash", "")})
	var ce *langchaingo.CallError
	if !errors.As(err, &ce) || ce.Call.ID != "c2" {
		t.Fatalf("err = %v, want a CallError for c2", err)
	}
	if outs[0].Err == nil || !strings.Contains(err.Error(), "mcptestserver") {
		t.Errorf("outcome %+v, err %v: want the failure naming the server", outs[0], err)
	}
	if _, err := ts.Tool("crash").Call(ctx, ""); err == nil || !strings.Contains(err.Error(), `tool "crash"`) {
		t.Errorf("tools.Tool call: %v, want a transport error naming the tool", err)
	}
}

func TestElicitationResume(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []llms.ToolCall{call("c1", "book", `{"date":"Fri"}`)})
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
			if got := out.Response().Content; !strings.Contains(got, "Booked 4 guests") {
				t.Errorf("after resume: %q", got)
			}
		})
	}
}

// TestToolElicitation: through the tools.Tool shape, the question is an
// error carrying the pending call, and Tool.Resume finishes it.
func TestToolElicitation(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			book := ts.Tool("book")
			_, err := book.Call(ctx, `{"date":"Sat"}`)
			p := langchaingo.PendingOf(err)
			if p == nil || len(p.Requests) != 1 {
				t.Fatalf("err = %v, want a pending call", err)
			}
			got, err := book.Resume(ctx, p, &elicitation.Resume{Responses: map[string]elicitation.Response{
				p.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"guests": 2}}}})
			if err != nil || !strings.Contains(got, "Booked 2 guests") {
				t.Errorf("after resume: %q, %v", got, err)
			}
		})
	}
}
