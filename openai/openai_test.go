package openai_test

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
	"github.com/mcpadapter/mcpadapter/openai"
)

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func toolset(t *testing.T, era testserver.Era, opts *mcpadapter.Options) *openai.Toolset {
	t.Helper()
	return toolsetOf(t, testserver.New(testserver.Options{Era: era}), opts)
}

func toolsetOf(t *testing.T, target any, opts *mcpadapter.Options) *openai.Toolset {
	t.Helper()
	ts, err := openai.New(bindingtest.Tools(t, target, opts), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestChatTools(t *testing.T) {
	ts := toolset(t, testserver.Modern, nil)
	data, err := json.Marshal(ts.ChatTools())
	if err != nil {
		t.Fatal(err)
	}
	var tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Strict     bool           `json:"strict"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	}
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	var echo bool
	for _, tool := range tools {
		if tool.Function.Name == "echo" {
			echo = true
			if tool.Type != "function" || !tool.Function.Strict || tool.Function.Parameters["additionalProperties"] != false {
				t.Errorf("echo tool: %+v", tool)
			}
		}
	}
	if !echo {
		t.Fatalf("no echo tool in %s", data)
	}
	if p := ts.Profile("echo"); p == nil || !p.Strict {
		t.Errorf("echo profile %+v", p)
	}
}

// TestRun runs one turn of several calls at once against both eras:
// text, a tool error, an image, an unknown tool and a protocol failure.
func TestRun(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []openai.Call{
				{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`},
				{ID: "c2", Name: "fail", Arguments: `{"message":"boom"}`},
				{ID: "c3", Name: "image", Arguments: `{}`},
				{ID: "c4", Name: "nope", Arguments: `{}`},
				{ID: "c5", Name: "fail_structured", Arguments: ``},
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
			if got := outs[3].Text(); !strings.Contains(got, `unknown tool "nope"`) {
				t.Errorf("nope: %q", got)
			}
			if outs[4].Result == nil || !outs[4].Result.IsError || outs[4].Result.Artifact == nil {
				t.Errorf("fail_structured: %+v, want an error result with its artifact", outs[4].Result)
			}
			msg, _ := json.Marshal(outs[0].ChatMessage())
			if string(msg) != `{"content":"hi","tool_call_id":"c1","role":"tool"}` {
				t.Errorf("chat message %s", msg)
			}
			item, _ := json.Marshal(outs[2].ResponseItem())
			if !strings.Contains(string(item), `"call_id":"c3"`) || !strings.Contains(string(item), `"image_url":"data:image/png;base64,`) {
				t.Errorf("response item %s", item)
			}
		})
	}
}

// TestRunTransportFailure: a server process that dies mid-call is a Go
// error (a CallError naming the call and the server), not a result.
func TestRunTransportFailure(t *testing.T) {
	ts := toolsetOf(t, mcpadapter.Command{Path: testserver.Build(t)}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	outs, err := ts.Run(ctx, []openai.Call{{ID: "c1", Name: "crash"}})
	var ce *openai.CallError
	if !errors.As(err, &ce) || ce.Call.ID != "c1" {
		t.Fatalf("err = %v, want a CallError for c1", err)
	}
	if outs[0].Err == nil || !strings.Contains(err.Error(), "mcptestserver") {
		t.Errorf("outcome %+v, err %v: want the failure naming the server", outs[0], err)
	}
}

func TestElicitationResume(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, era, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			outs, err := ts.Run(ctx, []openai.Call{{ID: "c1", Name: "book", Arguments: `{"date":"Fri"}`}})
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
			if got := out.Text(); !strings.Contains(got, "Booked 4 guests") {
				t.Errorf("after resume: %q", got)
			}
		})
	}
}
