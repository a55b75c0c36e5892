package eino_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// recording is the scripted model of a live run: turn k runs turns[k]
// with the names of the tools the model is given on that call (bound
// with WithTools, or per call with model.WithTools) and the messages so
// far.
type recording struct {
	mu    *sync.Mutex
	tools []*schema.ToolInfo
	turns []func(seen []string, in []*schema.Message) *schema.Message
	seen  *[][]string
}

func (m *recording) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	c := *m
	c.tools = tools
	return &c, nil
}

func (m *recording) Generate(_ context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	o := model.GetCommonOptions(&model.Options{Tools: m.tools}, opts...)
	var names []string
	for _, ti := range o.Tools {
		names = append(names, ti.Name)
	}
	m.mu.Lock()
	turn := len(*m.seen)
	*m.seen = append(*m.seen, names)
	m.mu.Unlock()
	if turn < len(m.turns) {
		return m.turns[turn](names, in), nil
	}
	return schema.AssistantMessage("done", nil), nil
}

func (m *recording) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

// lastToolText is the content of the last tool message in.
func lastToolText(in []*schema.Message) string {
	for i := len(in) - 1; i >= 0; i-- {
		if in[i].Role == schema.Tool {
			return in[i].Content
		}
	}
	return ""
}

// TestAgentLiveTools: while an agent runs, the server adds a tool and
// removes another (both eras). The model is given the new list from its
// next turn, the added tool runs, and the removed one, still called,
// answers that it was removed.
func TestAgentLiveTools(t *testing.T) {
	for _, era := range eras {
		t.Run(era.String(), func(t *testing.T) {
			ctx := ctx30(t)
			a, err := mcpadapter.New(testserver.New(testserver.Options{Era: era, Mutable: true}), &mcpadapter.Options{WatchTools: true})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tools, err := a.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			coreTool := func(name string) *mcpadapter.Tool {
				i := slices.IndexFunc(tools, func(t *mcpadapter.Tool) bool { return t.Name == name })
				return tools[i]
			}
			var seen [][]string
			var failures []string
			fail := func(s string) { failures = append(failures, s) }
			m := &recording{mu: &sync.Mutex{}, seen: &seen, turns: []func([]string, []*schema.Message) *schema.Message{
				func(names []string, _ []*schema.Message) *schema.Message {
					// The server changes its list while the agent runs.
					v := a.ToolsVersion()
					for _, c := range [][2]string{{"tool_add", `{"name":"fresh"}`}, {"tool_remove", `{"name":"echo"}`}} {
						if _, err := coreTool(c[0]).Call(ctx, json.RawMessage(c[1])); err != nil {
							fail(err.Error())
						}
					}
					for deadline := time.Now().Add(10 * time.Second); a.ToolsVersion() == v && time.Now().Before(deadline); {
						time.Sleep(5 * time.Millisecond)
					}
					return schema.AssistantMessage("", []schema.ToolCall{call("1", "echo", `{"text":"x"}`)})
				},
				func(names []string, in []*schema.Message) *schema.Message {
					if got := lastToolText(in); !strings.HasPrefix(got, `Tool "echo" was removed by server "in-process"; its tools now are: `) {
						fail("echo, removed, answered " + got)
					}
					return schema.AssistantMessage("", []schema.ToolCall{call("2", "fresh", `{}`)})
				},
				func(names []string, in []*schema.Message) *schema.Message {
					if got := lastToolText(in); got != "fresh: {}" {
						fail("fresh answered " + got)
					}
					return schema.AssistantMessage("all done", nil)
				},
			}}
			agent, err := eino.NewAgent(ctx, m, tools, eino.AgentConfig{Live: a})
			if err != nil {
				t.Fatal(err)
			}
			r := drain(t, agent.Query(ctx, "live-"+era.String(), "go"))
			if r.err != nil || r.final != "all done" {
				t.Fatalf("run: %q, %v", r.final, r.err)
			}
			if len(failures) > 0 {
				t.Fatalf("%s", strings.Join(failures, "\n"))
			}
			if len(seen) != 3 || !slices.Contains(seen[0], "echo") || slices.Contains(seen[0], "fresh") {
				t.Fatalf("first turn's tools: %v", seen)
			}
			for _, names := range seen[1:] {
				if slices.Contains(names, "echo") || !slices.Contains(names, "fresh") {
					t.Fatalf("later turns must have fresh and not echo: %v", names)
				}
			}
		})
	}
}

// TestAgentToolSearchPair: eino runs the search pair unchanged: the model
// searches, then calls what it found, and the pair's definitions are the
// same for every agent built from a fresh listing.
func TestAgentToolSearchPair(t *testing.T) {
	ctx := ctx30(t)
	a, err := mcpadapter.New(testserver.New(testserver.Options{}), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var defs [][]byte
	for i := range 2 {
		pair, err := a.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ets, skipped := eino.Tools(pair)
		if len(ets) != 2 || len(skipped) > 0 {
			t.Fatalf("eino.Tools of the pair: %d tools, skipped %v", len(ets), skipped)
		}
		var b []byte
		for _, et := range ets {
			info, err := et.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			j, err := json.Marshal(info)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, j...)
		}
		defs = append(defs, b)
		if i > 0 && string(defs[i]) != string(defs[0]) {
			t.Fatalf("the pair's eino definitions changed:\n%s\n%s", defs[0], defs[i])
		}
		agent := newAgent(t, pair, nil,
			[]schema.ToolCall{call("1", "search_tools", `{"query":"add two numbers"}`)},
			[]schema.ToolCall{call("2", "call_tool", `{"name":"add","arguments":{"a":2,"b":3}}`)})
		r := drain(t, agent.Query(ctx, "pair", "add 2 and 3"))
		if r.err != nil || !strings.Contains(r.final, `search_tools: {"tools":[{"name":"add"`) || !strings.Contains(r.final, "call_tool: 5") {
			t.Fatalf("run: %q, %v", r.final, r.err)
		}
	}
}
