package genkit_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/bindingtest"

	"github.com/firebase/genkit/go/ai"
	gk "github.com/firebase/genkit/go/genkit"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/genkit"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func toolset(t *testing.T, target any, opts *mcpadapter.Options, gopts *genkit.Options) *genkit.Toolset {
	t.Helper()
	ts, err := genkit.New(bindingtest.Tools(t, target, opts), gopts)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// scripted defines a model that asks for calls on the user's turn and,
// once the tools answered, says what they returned.
func scripted(t *testing.T, calls ...*ai.ToolRequest) (*gk.Genkit, ai.Model) {
	t.Helper()
	g := gk.Init(context.Background())
	m := gk.DefineModel(g, "test/scripted", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true, Media: true}},
		func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			// A model returns its request with the response (History reads it).
			last := req.Messages[len(req.Messages)-1]
			if last.Role != ai.RoleTool {
				var parts []*ai.Part
				for _, c := range calls {
					parts = append(parts, ai.NewToolRequestPart(c))
				}
				return &ai.ModelResponse{Request: req, Message: ai.NewModelMessage(parts...), FinishReason: ai.FinishReasonStop}, nil
			}
			var said []string
			for _, p := range last.Content {
				if p.ToolResponse != nil {
					said = append(said, p.ToolResponse.Name+": "+toString(p.ToolResponse.Output))
				}
			}
			return &ai.ModelResponse{Request: req, Message: ai.NewModelTextMessage(strings.Join(said, "; ")), FinishReason: ai.FinishReasonStop}, nil
		})
	return g, m
}

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDefinitions(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, testserver.New(testserver.Options{Era: era}), nil, nil)
			var found bool
			for _, tool := range ts.Tools() {
				d := tool.Definition()
				if d.Name != "echo" {
					continue
				}
				found = true
				props, _ := d.InputSchema["properties"].(map[string]any)
				if d.Description != "Echo the text back." || d.InputSchema["type"] != "object" || props["text"] == nil {
					t.Errorf("echo definition %+v", d)
				}
				if _, ok := d.InputSchema["additionalProperties"]; ok {
					t.Errorf("echo schema %v keeps additionalProperties, which Gemini rejects", d.InputSchema)
				}
			}
			if !found {
				t.Fatal("no echo tool")
			}
			if p := ts.Profile("echo"); p == nil || p.Profile != schemaprofile.Gemini {
				t.Errorf("profile %+v, want gemini by default", p)
			}
		})
	}
}

// TestMixedTurn: one model turn asks for text, a tool error, an image and
// structured content at once; Genkit runs them and the model reads each.
func TestMixedTurn(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			var mu sync.Mutex
			artifacts := map[string]*mcpadapter.Artifact{}
			ts := toolset(t, testserver.New(testserver.Options{Era: era}), nil, &genkit.Options{
				OnResult: func(_ context.Context, tool *mcpadapter.Tool, res *mcpadapter.Result) {
					mu.Lock()
					defer mu.Unlock()
					artifacts[tool.Name] = res.Artifact
				}})
			g, m := scripted(t,
				&ai.ToolRequest{Name: "echo", Ref: "c1", Input: map[string]any{"text": "hi"}},
				&ai.ToolRequest{Name: "fail", Ref: "c2", Input: map[string]any{"message": "boom"}},
				&ai.ToolRequest{Name: "image", Ref: "c3", Input: map[string]any{}},
				&ai.ToolRequest{Name: "fail_structured", Ref: "c4", Input: map[string]any{}},
			)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("go"), ai.WithTools(ts.Refs()...))
			if err != nil {
				t.Fatal(err)
			}
			text := resp.Text()
			for _, want := range []string{"echo: hi", "fail: Error: boom", "image: [image image/png", "fail_structured: Error: "} {
				if !strings.Contains(text, want) {
					t.Errorf("model read %q, want %q in it", text, want)
				}
			}
			var media bool
			for _, msg := range resp.History() {
				for _, p := range msg.Content {
					if p.ToolResponse != nil && p.ToolResponse.Name == "image" {
						media = len(p.ToolResponse.Content) == 1 && p.ToolResponse.Content[0].IsMedia() &&
							strings.HasPrefix(p.ToolResponse.Content[0].Text, "data:image/png;base64,")
					}
				}
			}
			if !media {
				t.Errorf("no media part in the image tool's response")
			}
			mu.Lock()
			defer mu.Unlock()
			if artifacts["fail_structured"] == nil {
				t.Errorf("OnResult got no artifact for fail_structured: %v", artifacts)
			}
		})
	}
}

// TestTransportFailure: a server that dies mid-call ends Generate with an
// error naming the tool and the server.
func TestTransportFailure(t *testing.T) {
	ts := toolset(t, mcpadapter.Command{Path: testserver.Build(t)}, nil, nil)
	g, m := scripted(t, &ai.ToolRequest{Name: "crash", Ref: "c1", Input: map[string]any{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("go"), ai.WithTools(ts.Refs()...))
	if err == nil || !strings.Contains(err.Error(), `tool "crash"`) || !strings.Contains(err.Error(), "mcptestserver") {
		t.Fatalf("err = %v, want the failure naming the tool and server", err)
	}
}

// TestElicitationRestart: a server's question is a Genkit interrupt; the
// restart with the answer finishes the MCP call, on both eras.
func TestElicitationRestart(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ts := toolset(t, testserver.New(testserver.Options{Era: era}),
				&mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}, nil)
			g, m := scripted(t, &ai.ToolRequest{Name: "book", Ref: "c1", Input: map[string]any{"date": "Fri"}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("book"), ai.WithTools(ts.Refs()...))
			if err != nil {
				t.Fatal(err)
			}
			pend := ts.Interrupts(resp)
			if resp.FinishReason != ai.FinishReasonInterrupted || len(pend) != 1 || len(pend[0].Interrupt.Requests) != 1 {
				t.Fatalf("finish %q, interrupts %+v", resp.FinishReason, pend)
			}
			// The history goes through JSON, as a saved conversation would.
			hist := roundTrip(t, resp.History())
			part, next, err := ts.Resume(ctx, genkit.Pending{Part: lastRequest(hist), Interrupt: pend[0].Interrupt, Call: pend[0].Call},
				&elicitation.Resume{Responses: map[string]elicitation.Response{
					pend[0].Interrupt.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"guests": 4}}}})
			if err != nil || next != nil {
				t.Fatalf("Resume: next %+v, err %v", next, err)
			}
			resp, err = gk.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(hist...),
				ai.WithTools(ts.Refs()...), ai.WithToolRestarts(part))
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Text(); !strings.Contains(got, "book: ") || !strings.Contains(got, "Booked 4 guests") {
				t.Errorf("after restart the model read %q", got)
			}
		})
	}
}

func roundTrip(t *testing.T, msgs []*ai.Message) []*ai.Message {
	t.Helper()
	b, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	var out []*ai.Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func lastRequest(msgs []*ai.Message) *ai.Part {
	for _, p := range msgs[len(msgs)-1].Content {
		if p.IsInterrupt() {
			return p
		}
	}
	return nil
}

// TestTransportFailureAsResult: with the core's TransportErrorsAsResults a
// dead server is a result the model reads, and Generate goes on (the way
// around Genkit ending Generate at a tool's Go error).
func TestTransportFailureAsResult(t *testing.T) {
	var failure error
	ts := toolset(t, mcpadapter.Command{Path: testserver.Build(t)}, &mcpadapter.Options{TransportErrorsAsResults: true},
		&genkit.Options{OnResult: func(_ context.Context, _ *mcpadapter.Tool, res *mcpadapter.Result) {
			if res.Failure != nil {
				failure = res.Failure
			}
		}})
	g, m := scripted(t, &ai.ToolRequest{Name: "crash", Ref: "c1", Input: map[string]any{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("go"), ai.WithTools(ts.Refs()...))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Text(); !strings.HasPrefix(got, "crash: Error: ") || !strings.Contains(got, "unavailable") {
		t.Errorf("model read %q, want the server unavailable", got)
	}
	if failure == nil {
		t.Error("OnResult saw no Result.Failure")
	}
}

// TestElicitationTwoRounds: a server that asks twice: the second question
// comes from Resume, and the finished call goes to the model with one
// restart.
func TestElicitationTwoRounds(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			var results int
			ts := toolset(t, testserver.New(testserver.Options{Era: era}),
				&mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt},
				&genkit.Options{OnResult: func(context.Context, *mcpadapter.Tool, *mcpadapter.Result) { results++ }})
			g, m := scripted(t, &ai.ToolRequest{Name: "survey", Ref: "c1", Input: map[string]any{}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := gk.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("survey"), ai.WithTools(ts.Refs()...))
			if err != nil {
				t.Fatal(err)
			}
			pend := ts.Interrupts(resp)
			if len(pend) != 1 {
				t.Fatalf("interrupts %+v", pend)
			}
			p := &pend[0]
			answers := []map[string]any{{"name": "Ada"}, {"ok": true}}
			var asked []string
			var part *ai.Part
			for round := 0; part == nil; round++ {
				if round == len(answers) || len(p.Interrupt.Requests) != 1 {
					t.Fatalf("round %d: %+v", round, p.Interrupt)
				}
				q := p.Interrupt.Requests[0]
				asked = append(asked, q.Message)
				part, p, err = ts.Resume(ctx, *p, &elicitation.Resume{Responses: map[string]elicitation.Response{
					q.Key: {Action: elicitation.Accept, Content: answers[round]}}})
				if err != nil {
					t.Fatal(err)
				}
			}
			resp, err = gk.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(resp.History()...),
				ai.WithTools(ts.Refs()...), ai.WithToolRestarts(part))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(asked, " / ") != "Your name? / Confirm Ada?" || resp.Text() != "survey: Ada confirmed=true" || results != 1 {
				t.Errorf("asked %q, model read %q, %d results", asked, resp.Text(), results)
			}
		})
	}
}
