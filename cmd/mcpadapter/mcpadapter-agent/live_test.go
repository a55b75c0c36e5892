package main

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/mcpadapter-agent/internal/fakeopenai"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// toolNames returns the names of the tools a request offered.
func toolNames(r fakeopenai.Request) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// TestAgentSearch: with --search the model is given search_tools and
// call_tool, not the server's tools, and reaches a tool through them.
func TestAgentSearch(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}))
	fake := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "search_tools", Arguments: `{"query":"add two numbers"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "call_tool", Arguments: `{"name":"add","arguments":{"a":2,"b":3}}`}}},
		fakeopenai.Turn{Content: "It is 5."},
	)
	r := cli(t, "", "agent", url, "--search", "--model", "m", "--base-url", fake.URL, "--once", "2+3?")
	r.Must(t, 0, []string{"It is 5."}, []string{"→ search_tools(", "← search_tools: ", "→ call_tool(", "← call_tool: "})
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, req := range reqs {
		if got := toolNames(req); !slices.Equal(got, []string{"call_tool", "search_tools"}) {
			t.Errorf("request %d offered %v, want the search pair", i+1, got)
		}
	}
	var found, sum bool
	for _, m := range reqs[2].Messages {
		found = found || m.Role == "tool" && strings.Contains(m.Content, `"add"`)
		sum = sum || m.Role == "tool" && strings.Contains(m.Content, "5")
	}
	if !found || !sum {
		t.Errorf("the model was not given the search hit and the sum: %+v", reqs[2].Messages)
	}

	// Without --search it sees every tool.
	plain := fakeopenai.Start(t, fakeopenai.Turn{Content: "ok"})
	cli(t, "", "agent", url, "--model", "m", "--base-url", plain.URL, "--once", "hi").Must(t, 0, []string{"ok"}, nil)
	if got := toolNames(plain.Requests()[0]); !slices.Contains(got, "add") || slices.Contains(got, "search_tools") {
		t.Errorf("without --search the model was offered %v", got)
	}
}

// TestAgentWatch: with --watch a tool the server adds while the agent
// runs (tools/list_changed) is offered to the model and runs, and a tool
// the server removes is no longer offered. The change reaches the agent
// asynchronously (over HTTP, on the subscription stream), so the scripted
// model does what a model would: it keeps working (a harmless add call)
// until the tool shows up, within a bounded number of requests.
func TestAgentWatch(t *testing.T) {
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{Mutable: true}))
	fake := fakeopenai.Start(t)
	const maxRequests = 18 // under eino's 20 model calls per run
	var mu sync.Mutex
	n := 0
	fake.SetReply(func(req fakeopenai.Request) fakeopenai.Turn {
		mu.Lock()
		defer mu.Unlock()
		n++
		offered := toolNames(req)
		called := map[string]bool{}
		for _, m := range req.Messages {
			for _, tc := range m.ToolCalls {
				called[tc.Name] = true
			}
		}
		call := func(name, args string) fakeopenai.Turn {
			return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: name, Arguments: args}}}
		}
		switch {
		case n == 1:
			return call("tool_add", `{"name":"lookup","description":"Look a word up."}`)
		case n >= maxRequests:
			return fakeopenai.Turn{Content: "gave up waiting"}
		case slices.Contains(offered, "lookup") && !called["lookup"]:
			return call("lookup", `{}`)
		case called["lookup"] && !called["tool_remove"]:
			return call("tool_remove", `{"name":"echo"}`)
		case called["tool_remove"] && !slices.Contains(offered, "echo"):
			return fakeopenai.Turn{Content: "Looked it up."}
		}
		time.Sleep(100 * time.Millisecond) // a model thinking; not a measurement
		return call("add", `{"a":1,"b":1}`)
	})
	r := cli(t, "", "agent", url, "--watch", "--model", "m", "--base-url", fake.URL, "--once", "add a lookup tool and use it")
	r.Must(t, 0, []string{"Looked it up."}, []string{"← tool_add: added lookup", "→ lookup({})", "← tool_remove: removed echo"})
	reqs := fake.Requests()
	if slices.Contains(toolNames(reqs[0]), "lookup") {
		t.Errorf("lookup offered before it was added: %v", toolNames(reqs[0]))
	}
	var ran bool
	for _, m := range reqs[len(reqs)-1].Messages {
		ran = ran || m.Role == "tool" && m.Content == "lookup: {}"
	}
	if !ran {
		t.Errorf("the model was not given lookup's result: %+v", reqs[len(reqs)-1].Messages)
	}

	// Without --watch the model keeps the list it started with, however
	// long it works.
	still := fakeopenai.Start(t,
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "tool_add", Arguments: `{"name":"lookup2"}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}}},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{Name: "add", Arguments: `{"a":1,"b":1}`}}},
		fakeopenai.Turn{Content: "ok"},
	)
	cli(t, "", "agent", url, "--model", "m", "--base-url", still.URL, "--once", "add").Must(t, 0, []string{"ok"}, nil)
	if got := toolNames(still.Requests()[3]); slices.Contains(got, "lookup2") {
		t.Errorf("without --watch request 4 offered %v", got)
	}
}
