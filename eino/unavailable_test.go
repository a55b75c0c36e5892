package eino_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// hooked is a scripted model that runs before[k] once before its k-th
// turn: something that happens in the world while the agent runs.
type hooked struct {
	*scripted
	before map[int]func()
	once   map[int]*sync.Once
}

func newHooked(before map[int]func(), rounds ...[]schema.ToolCall) *hooked {
	h := &hooked{scripted: &scripted{rounds: rounds}, before: before, once: map[int]*sync.Once{}}
	for k := range before {
		h.once[k] = &sync.Once{}
	}
	return h
}

func (h *hooked) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	s, _ := h.scripted.WithTools(tools)
	return &hooked{scripted: s.(*scripted), before: h.before, once: h.once}, nil
}

func (h *hooked) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	turn := 0
	for _, msg := range in {
		if msg.Role == schema.Assistant {
			turn++
		}
	}
	if f := h.before[turn]; f != nil {
		h.once[turn].Do(f)
	}
	return h.scripted.Generate(ctx, in, opts...)
}

func (h *hooked) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := h.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// TestAgentServerDiesMidRun: the weather server (a real HTTP server
// process) is killed between two turns of a run. By default the run ends
// with the *TransportError; with TransportErrorsAsResults the model is
// told the server is unavailable, the run ends with the model's answer,
// and the application gets the typed error.
func TestAgentServerDiesMidRun(t *testing.T) {
	for _, soft := range []bool{false, true} {
		name := map[bool]string{false: "default", true: "TransportErrorsAsResults"}[soft]
		t.Run(name, func(t *testing.T) {
			ctx := ctx30(t)
			p := testserver.StartProcess(t, "-transport", "http", "-era", "legacy")
			c, err := mcpadapter.NewClient(p.URL, &mcpadapter.ClientOptions{Name: "weather"})
			if err != nil {
				t.Fatal(err)
			}
			tools := adapterTools(t, c, nil)
			var failures []*mcpadapter.TransportError
			var mu sync.Mutex
			chat := newHooked(map[int]func(){1: p.Stop},
				[]schema.ToolCall{call("c1", "echo", `{"text":"sunny"}`)},
				[]schema.ToolCall{call("c2", "echo", `{"text":"rain?"}`)},
			)
			a, err := eino.NewAgent(ctx, chat, tools, eino.AgentConfig{
				TransportErrorsAsResults: soft,
				OnTransportError: func(_ context.Context, te *mcpadapter.TransportError) {
					mu.Lock()
					defer mu.Unlock()
					failures = append(failures, te)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			r := drain(t, a.Query(ctx, "cp", "weather?"))
			if !soft {
				var te *mcpadapter.TransportError
				if !errors.As(r.err, &te) || te.Server != "weather" || r.final != "" {
					t.Fatalf("run error %v, final %q: want the run to end with the TransportError", r.err, r.final)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("run error: %v", r.err)
			}
			t.Logf("the model read: %s", r.final)
			if !strings.Contains(r.final, `echo: sunny | echo: The "weather" server is unavailable: `) ||
				!strings.Contains(r.final, "Tell the user that this tool cannot be used now") {
				t.Errorf("final answer: %q", r.final)
			}
			if out := r.outputs["echo"]; out == nil || !out.Unavailable || !out.IsError {
				t.Errorf("tool event output: %+v", out)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(failures) != 1 || failures[0].Server != "weather" || failures[0].Tool != "echo" {
				t.Errorf("OnTransportError got %v", failures)
			}
		})
	}
}

// TestAgentAdapterTransportErrorsAsResults: the core's option does the same
// for tools handed to any binding, here with the agent's setting off.
func TestAgentAdapterTransportErrorsAsResults(t *testing.T) {
	ctx := ctx30(t)
	tools := adapterTools(t, mcpadapter.Command{Path: testserver.Build(t)}, &mcpadapter.Options{TransportErrorsAsResults: true})
	var got *mcpadapter.TransportError
	a, err := eino.NewAgent(ctx, &scripted{rounds: [][]schema.ToolCall{{call("c1", "crash", `{}`)}}}, tools, eino.AgentConfig{
		OnTransportError: func(_ context.Context, te *mcpadapter.TransportError) { got = te },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := drain(t, a.Query(ctx, "cp", "go"))
	var pe *mcpadapter.ProcessExitError
	if r.err != nil || !strings.Contains(r.final, "server is unavailable") || got == nil || !errors.As(got, &pe) {
		t.Fatalf("run error %v, final %q, OnTransportError got %v", r.err, r.final, got)
	}
}
