package eino_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scripted is the one fake allowed: a chat model that asks for the tool
// calls of rounds[k] on its k-th turn and then answers with what the tools
// said.
type scripted struct {
	rounds [][]schema.ToolCall
	tools  []*schema.ToolInfo
}

func (m *scripted) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

func (m *scripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	turn := 0
	for _, msg := range in {
		if msg.Role == schema.Assistant {
			turn++
		}
	}
	if turn < len(m.rounds) {
		return schema.AssistantMessage("", m.rounds[turn]), nil
	}
	var said []string
	for _, msg := range in {
		if msg.Role == schema.Tool {
			said = append(said, msg.ToolName+": "+msg.Content)
		}
	}
	return schema.AssistantMessage("final: "+strings.Join(said, " | "), nil), nil
}

func (m *scripted) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func call(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// run is what a run produced.
type run struct {
	final      string
	outputs    map[string]*eino.Output // by tool name
	interrupts []eino.Pending
	err        error
}

func drain(t *testing.T, it *adk.AsyncIterator[*adk.AgentEvent]) run {
	t.Helper()
	r := run{outputs: map[string]*eino.Output{}}
	for {
		ev, ok := it.Next()
		if !ok {
			return r
		}
		if ev.Err != nil {
			r.err = ev.Err
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err == nil && msg.Role == schema.Assistant && msg.Content != "" {
				r.final = msg.Content
			}
		}
		if ev.Action != nil {
			if out, ok := ev.Action.CustomizedAction.(*eino.Output); ok {
				r.outputs[out.Tool] = out
			}
		}
		if p := eino.Interrupts(ev); p != nil {
			r.interrupts = p
		}
	}
}

var eras = []testserver.Era{testserver.Modern, testserver.Legacy}

func adapterTools(t *testing.T, target any, opts *mcpadapter.Options) []*mcpadapter.Tool {
	t.Helper()
	a, err := mcpadapter.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func newAgent(t *testing.T, tools []*mcpadapter.Tool, store adk.CheckPointStore, rounds ...[]schema.ToolCall) *eino.Agent {
	t.Helper()
	a, err := eino.NewAgent(context.Background(), &scripted{rounds: rounds}, tools, eino.AgentConfig{Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Skipped) > 0 {
		t.Fatalf("tools skipped: %v", a.Skipped)
	}
	return a
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAgentToolsBothEras(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			tools := adapterTools(t, testserver.New(testserver.Options{Era: era}), nil)
			a := newAgent(t, tools, nil, []schema.ToolCall{
				call("c1", "echo", `{"text":"hello"}`),
				call("c2", "add", `{"a":2,"b":3}`),
			}, []schema.ToolCall{
				call("c3", "fail", `{"message":"disk full"}`),
			})
			r := drain(t, a.Query(ctx, "cp-"+era.String(), "go"))
			if r.err != nil {
				t.Fatal(r.err)
			}
			for _, want := range []string{"echo: hello", "add: 5", "fail: disk full"} {
				if !strings.Contains(r.final, want) {
					t.Errorf("final answer %q lacks %q", r.final, want)
				}
			}
			// The application can tell the error result apart and read the
			// structured content the model saw only as text.
			if out := r.outputs["fail"]; out == nil || !out.IsError {
				t.Errorf("fail output: %+v", out)
			}
			if out := r.outputs["add"]; out == nil || out.IsError || string(out.StructuredContent) != `{"sum":5}` {
				t.Errorf("add output: %+v", out)
			}
		})
	}
}

// TestAgentParallelToolCalls: the three tool calls of one turn are in
// flight at once: each waits on the server until all three have arrived.
func TestAgentParallelToolCalls(t *testing.T) {
	ctx := ctx30(t)
	srv := testserver.New(testserver.Options{})
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	mcp.AddTool(srv, &mcp.Tool{Name: "meet", Description: "Wait until three calls are in at once."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			if arrived++; arrived == 3 {
				close(all)
			}
			n := arrived
			mu.Unlock()
			wait, cancel := context.WithTimeout(ctx, 10*time.Second) // a bound: calls one at a time never meet
			defer cancel()
			select {
			case <-all:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "met"}}}, nil, nil
			case <-wait.Done():
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("alone: call %d of 3 found no other in flight", n)}}}, nil, nil
			}
		})
	tools := adapterTools(t, srv, nil)
	a := newAgent(t, tools, nil, []schema.ToolCall{
		call("c1", "meet", `{}`),
		call("c2", "meet", `{}`),
		call("c3", "meet", `{}`),
	})
	r := drain(t, a.Query(ctx, "cp", "go"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if strings.Count(r.final, "met") != 3 || strings.Contains(r.final, "alone") {
		t.Errorf("the three tool calls of one turn were not in flight at once: %q", r.final)
	}
}

func TestAgentUnknownTool(t *testing.T) {
	ctx := ctx30(t)
	tools := adapterTools(t, testserver.New(testserver.Options{}), nil)
	a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "weather_lookup", `{}`)})
	r := drain(t, a.Query(ctx, "cp", "go"))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(r.final, `no tool named "weather_lookup"`) || !strings.Contains(r.final, "echo") {
		t.Errorf("final %q", r.final)
	}
}

func TestAgentTransportErrorAborts(t *testing.T) {
	ctx := ctx30(t)
	tools := adapterTools(t, mcpadapter.Command{Path: testserver.Build(t)}, nil)
	a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "crash", `{}`)})
	r := drain(t, a.Query(ctx, "cp", "go"))
	var te *mcpadapter.TransportError
	if !errors.As(r.err, &te) || te.Tool != "crash" {
		t.Fatalf("run error %v, want the TransportError", r.err)
	}
}

func bookAnswer(id string, action elicitation.Action, content map[string]any, key string) map[string]*elicitation.Resume {
	return map[string]*elicitation.Resume{id: {Responses: map[string]elicitation.Response{key: {Action: action, Content: content}}}}
}

func TestAgentElicitation(t *testing.T) {
	for _, era := range eras {
		for _, tc := range []struct {
			action  elicitation.Action
			content map[string]any
			want    string
		}{
			{elicitation.Accept, map[string]any{"guests": 4}, "book: Booked 4 guests (inside) on Fri"},
			{elicitation.Decline, nil, "book: Booking declined"},
			{elicitation.Cancel, nil, "book: Booking canceld"}, // the server's own answer to the cancel
		} {
			t.Run(era.String()+"/"+string(tc.action), func(t *testing.T) {
				ctx := ctx30(t)
				tools := adapterTools(t, testserver.New(testserver.Options{Era: era}), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
				a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "book", `{"date":"Fri"}`)})
				r := drain(t, a.Query(ctx, "cp", "book a table"))
				if r.err != nil || len(r.interrupts) != 1 {
					t.Fatalf("run: %v, %d interrupts", r.err, len(r.interrupts))
				}
				in := r.interrupts[0].Interrupt
				if in.Type != "mcp_elicitation" || in.ToolName != "book" || len(in.Requests) != 1 || in.Requests[0].Mode != "form" {
					t.Fatalf("interrupt %+v", in)
				}
				it, err := a.Resume(ctx, "cp", bookAnswer(r.interrupts[0].ID, tc.action, tc.content, in.Requests[0].Key))
				if err != nil {
					t.Fatal(err)
				}
				r = drain(t, it)
				if r.err != nil || !strings.Contains(r.final, tc.want) {
					t.Errorf("after %s: %v, final %q, want %q", tc.action, r.err, r.final, tc.want)
				}
			})
		}
	}
}

func TestAgentElicitationInvalidAnswer(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			srv, state := testserver.NewWithState(testserver.Options{Era: era})
			tools := adapterTools(t, srv, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "book", `{"date":"Sat"}`)})
			r := drain(t, a.Query(ctx, "cp", "go"))
			key := r.interrupts[0].Interrupt.Requests[0].Key
			calls := state.Calls("book")
			it, err := a.Resume(ctx, "cp", bookAnswer(r.interrupts[0].ID, elicitation.Accept, map[string]any{"guests": "many"}, key))
			if err != nil {
				t.Fatal(err)
			}
			r = drain(t, it)
			if r.err != nil || len(r.interrupts) != 1 || !strings.Contains(r.interrupts[0].Interrupt.Problem, `field "guests"`) {
				t.Fatalf("bad answer: %v, %+v", r.err, r.interrupts)
			}
			if state.Calls("book") != calls {
				t.Error("a bad answer reached the server")
			}
			it, err = a.Resume(ctx, "cp", bookAnswer(r.interrupts[0].ID, elicitation.Accept, map[string]any{"guests": 2}, key))
			if err != nil {
				t.Fatal(err)
			}
			if r = drain(t, it); r.err != nil || !strings.Contains(r.final, "Booked 2 guests") {
				t.Errorf("good answer: %v %q", r.err, r.final)
			}
		})
	}
}

// answerAll answers every pending interrupt: a guest count, a name, or yes.
func answerAll(ps []eino.Pending) map[string]*elicitation.Resume {
	out := map[string]*elicitation.Resume{}
	for _, p := range ps {
		resp := map[string]elicitation.Response{}
		for _, r := range p.Interrupt.Requests {
			var c map[string]any
			switch {
			case strings.Contains(r.Message, "guests"):
				c = map[string]any{"guests": 3}
			case strings.Contains(r.Message, "name"):
				c = map[string]any{"name": "Ada"}
			default:
				c = map[string]any{"ok": true}
			}
			resp[r.Key] = elicitation.Response{Action: elicitation.Accept, Content: c}
		}
		out[p.ID] = &elicitation.Resume{Responses: resp}
	}
	return out
}

func TestAgentElicitationParallelAndMultiRound(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			tools := adapterTools(t, testserver.New(testserver.Options{Era: era}), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			a := newAgent(t, tools, nil, []schema.ToolCall{
				call("c1", "book", `{"date":"Fri"}`),
				call("c2", "survey", `{}`),
			})
			r := drain(t, a.Query(ctx, "cp", "go"))
			for range 6 {
				if r.err != nil {
					t.Fatal(r.err)
				}
				if len(r.interrupts) == 0 {
					break
				}
				it, err := a.Resume(ctx, "cp", answerAll(r.interrupts))
				if err != nil {
					t.Fatal(err)
				}
				r = drain(t, it)
			}
			if !strings.Contains(r.final, "book: Booked 3 guests") || !strings.Contains(r.final, "survey: Ada confirmed=true") {
				t.Errorf("final %q", r.final)
			}
		})
	}
}

func TestAgentElicitationResumeInNewRunner(t *testing.T) {
	ctx := ctx30(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	store := eino.NewMemoryStore()
	first := newAgent(t, adapterTools(t, url, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}), store,
		[]schema.ToolCall{call("c1", "book", `{"date":"Sun"}`)})
	r := drain(t, first.Query(ctx, "cp", "go"))
	if len(r.interrupts) != 1 {
		t.Fatalf("%v %+v", r.err, r.interrupts)
	}
	// A new adapter and runner, as after a restart, on the same store.
	second := newAgent(t, adapterTools(t, url, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}), store,
		[]schema.ToolCall{call("c1", "book", `{"date":"Sun"}`)})
	it, err := second.Resume(ctx, "cp", answerAll(r.interrupts))
	if err != nil {
		t.Fatal(err)
	}
	if r = drain(t, it); r.err != nil || !strings.Contains(r.final, "Booked 3 guests (inside) on Sun") {
		t.Errorf("resumed in a new runner: %v %q", r.err, r.final)
	}
}

func TestAgentElicitationParkTimeout(t *testing.T) {
	ctx := ctx30(t)
	tools := adapterTools(t, testserver.New(testserver.Options{Era: testserver.Legacy}),
		&mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt, ParkTimeout: 200 * time.Millisecond})
	a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "book", `{"date":"Mon"}`)})
	r := drain(t, a.Query(ctx, "cp", "go"))
	time.Sleep(400 * time.Millisecond)
	it, err := a.Resume(ctx, "cp", answerAll(r.interrupts))
	if err != nil {
		t.Fatal(err)
	}
	// The question was closed: the resume is refused, and says why.
	if r = drain(t, it); r.err == nil || !strings.Contains(r.err.Error(), "closed without an answer") || !strings.Contains(r.err.Error(), "ParkTimeout") {
		t.Errorf("after the park timeout: %v %q", r.err, r.final)
	}
}

func TestAgentEverythingElicitation(t *testing.T) {
	ctx := ctx30(t)
	target := everything(t)
	tools := adapterTools(t, target, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "trigger-elicitation-request") {
		t.Fatalf("server-everything offers no elicitation tool: %v", names)
	}
	a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "trigger-elicitation-request", `{}`)})
	r := drain(t, a.Query(ctx, "cp", "go"))
	if r.err != nil || len(r.interrupts) != 1 {
		t.Fatalf("%v %+v", r.err, r.interrupts)
	}
	req := r.interrupts[0].Interrupt.Requests[0]
	if req.Mode != "form" || len(req.RequestedSchema) == 0 {
		t.Fatalf("request %+v", req)
	}
	content := fillForm(t, req.RequestedSchema)
	it, err := a.Resume(ctx, "cp", map[string]*elicitation.Resume{r.interrupts[0].ID: {Responses: map[string]elicitation.Response{req.Key: {Action: elicitation.Accept, Content: content}}}})
	if err != nil {
		t.Fatal(err)
	}
	r = drain(t, it)
	if r.err != nil || !strings.Contains(strings.ToLower(r.final), "accept") {
		t.Errorf("final %v %q", r.err, r.final)
	}

	// URL mode, and its -32042 error path.
	for _, args := range []string{
		`{"url":"https://example.com/consent","message":"Please consent","elicitationId":"e1"}`,
		`{"url":"https://example.com/consent","message":"Please consent","elicitationId":"e2","errorPath":true}`,
	} {
		a := newAgent(t, tools, nil, []schema.ToolCall{call("c1", "trigger-url-elicitation", args)})
		r := drain(t, a.Query(ctx, "cp-url", "go"))
		if r.err != nil || len(r.interrupts) != 1 {
			t.Fatalf("%s: %v %+v", args, r.err, r.interrupts)
		}
		req := r.interrupts[0].Interrupt.Requests[0]
		if req.Mode != "url" || !strings.HasPrefix(req.URL, "https://") {
			t.Fatalf("%s: request %+v", args, req)
		}
		// Accept every URL request until the tool is done (the -32042 path
		// asks once by error, then again during the retried call).
		rounds := 0
		for ; len(r.interrupts) > 0 && rounds < 4; rounds++ {
			answers := map[string]*elicitation.Resume{}
			for _, p := range r.interrupts {
				resp := map[string]elicitation.Response{}
				for _, q := range p.Interrupt.Requests {
					resp[q.Key] = elicitation.Response{Action: elicitation.Accept}
				}
				answers[p.ID] = &elicitation.Resume{Responses: resp}
			}
			it, err := a.Resume(ctx, "cp-url", answers)
			if err != nil {
				t.Fatal(err)
			}
			r = drain(t, it)
		}
		if r.err != nil || r.final == "" || strings.Contains(r.final, "MCP error") {
			t.Errorf("%s: after accepting (%d rounds): %v %q", args, rounds, r.err, r.final)
		}
		if strings.Contains(args, "errorPath") && rounds != 2 {
			t.Errorf("%s: %d rounds of questions, want 2 (the -32042 error, then the question in the retried call)", args, rounds)
		}
	}
}

// fillForm answers every required field of a form schema with a valid value.
func fillForm(t *testing.T, raw json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type    string                `json:"type"`
			Enum    []any                 `json:"enum"`
			OneOf   []struct{ Const any } `json:"oneOf"`
			Format  string                `json:"format"`
			Minimum *float64              `json:"minimum"`
			Items   *struct {
				Enum  []any                 `json:"enum"`
				AnyOf []struct{ Const any } `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		switch {
		case len(p.Enum) > 0:
			out[name] = p.Enum[0]
		case len(p.OneOf) > 0:
			out[name] = p.OneOf[0].Const
		case p.Type == "boolean":
			out[name] = true
		case p.Type == "number" || p.Type == "integer":
			v := 1.0
			if p.Minimum != nil && *p.Minimum > v {
				v = *p.Minimum
			}
			out[name] = v
		case p.Type == "array" && p.Items != nil && len(p.Items.Enum) > 0:
			out[name] = []any{p.Items.Enum[0]}
		case p.Type == "array" && p.Items != nil && len(p.Items.AnyOf) > 0:
			out[name] = []any{p.Items.AnyOf[0].Const}
		case p.Format == "email":
			out[name] = "ada@example.com"
		case p.Format == "date":
			out[name] = "2026-12-24"
		case p.Format == "uri":
			out[name] = "https://example.com"
		default:
			out[name] = "Ada"
		}
	}
	return out
}
