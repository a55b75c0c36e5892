package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskBackends are the servers behind the gateway in the task tests: a
// 2026-07-28 server with the Tasks extension ("ext"), a 2025-11-25 server
// with that protocol's tasks ("core"), and a handshake-era server without
// tasks ("plain").
type taskBackends struct {
	ext, core *taskserver.Server
	plain     *testserver.State
	servers   []Server
}

func startTaskBackends(t *testing.T) *taskBackends {
	t.Helper()
	b := &taskBackends{ext: taskserver.New(taskserver.Options{PollInterval: 20}), core: taskserver.New(taskserver.Options{Core: true, PollInterval: 20})}
	t.Cleanup(b.ext.Close)
	t.Cleanup(b.core.Close)
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.ext.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	core := httptest.NewServer(b.core.Handler())
	t.Cleanup(core.Close)
	srv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	plain := testserver.StartStreamable(t, srv)
	b.plain = st
	b.servers = []Server{{Name: "ext", Target: ext.URL}, {Name: "core", Target: core.URL}, {Name: "plain", Target: plain.URL}}
	return b
}

// taskGateway starts a gateway in front of b, behind bearer tokens: the
// token is the principal.
func taskGateway(t *testing.T, b *taskBackends, opts *Options) (*Gateway, string) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	opts.Prefix = mcpadapter.PrefixAlways
	return startForPrincipals(t, b.servers, opts)
}

// coreClient is the adapter's own client of the gateway, at protocol v,
// as principal who.
func coreClient(t *testing.T, url, v, who string, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) *mcpadapter.Client {
	t.Helper()
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Name: "gw", ProtocolVersion: v, Logger: quietLogger(t),
		HTTPClient: &http.Client{Transport: bearer{who}}, ElicitationHandler: elicit,
		Tasks: &mcpadapter.TaskOptions{Mode: mcpadapter.TaskPrefer, MinPoll: 10 * time.Millisecond, MaxPoll: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestTasksCoreClient: the adapter's own client, of either protocol
// version, calls tools of every server as tasks: the handle it gets names
// the server, and the result comes back (the server's own task passed
// through, or one the gateway ran for a server without tasks).
func TestTasksCoreClient(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	cases := []struct{ v, tool, args, want, server string }{
		{v1125, "core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
		{v1125, "ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
		{v1125, "plain_echo", `{"text":"hi"}`, "hi", "plain"},
		{v0728, "ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
		{v0728, "core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
	}
	for _, tc := range cases {
		t.Run(tc.v+"/"+tc.tool, func(t *testing.T) {
			c := coreClient(t, url, tc.v, "alice", nil)
			if _, err := c.Tools(testCtx(t, 20*time.Second)); err != nil { // learns each tool's taskSupport
				t.Fatal(err)
			}
			var h *mcpadapter.TaskHandle
			res, err := c.CallTool(testCtx(t, 30*time.Second), tc.tool, json.RawMessage(tc.args), &mcpadapter.CallOptions{OnTask: func(th mcpadapter.TaskHandle) { h = &th }})
			if err != nil || res.Text() != tc.want {
				t.Fatalf("result %q, %v", textOf(res), err)
			}
			if h == nil {
				t.Fatal("the call made no task")
			}
			if server, ok := parseTaskID(h.TaskID); !ok || server != tc.server {
				t.Fatalf("task id %q does not name server %q", h.TaskID, tc.server)
			}
		})
	}
}

func textOf(r *mcpadapter.Result) string {
	if r == nil {
		return "<nil>"
	}
	return r.Text()
}

// TestTasksRawClients: a client sending JSON-RPC itself, of each era,
// gets tasks for a server with tasks of each era and for one without;
// tasks/get reports the task, the result comes (tasks/result, or in
// tasks/get for the extension), tasks/list shows the caller's tasks only,
// and another principal sending the same id gets "unknown task".
func TestTasksRawClients(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	for _, v := range []string{v1125, v0728} {
		for _, tc := range []struct{ tool, args, want, server string }{
			{"core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "core"},
			{"ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps", "ext"},
			{"plain_echo", `{"text":"hi"}`, "hi", "plain"},
		} {
			t.Run(v+"/"+tc.tool, func(t *testing.T) {
				alice := newRawRPC(t, url, v, "alice", `{}`)
				bob := newRawRPC(t, url, v, "bob", `{}`)
				id := alice.startTask(tc.tool, tc.args)
				if s, ok := parseTaskID(id); !ok || s != tc.server {
					t.Fatalf("task id %q does not name %q", id, tc.server)
				}
				for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
					if e := bob.callErr(m, `{"taskId":"`+id+`"}`); !strings.Contains(e, "unknown task") {
						t.Fatalf("bob's %s of alice's task: %q", m, e)
					}
				}
				// The id under another server's name names no task.
				_, key, _ := strings.Cut(id, ".")
				for _, other := range []string{"core", "ext", "plain"} {
					if e := alice.callErr("tasks/get", `{"taskId":"`+other+`.`+key+`"}`); other != tc.server && !strings.Contains(e, "unknown task") {
						t.Fatalf("alice's task under server %s: %q", other, e)
					}
				}
				if l := bob.call("tasks/list", `{}`); len(l["tasks"].([]any)) != 0 {
					t.Fatalf("bob lists alice's tasks: %v", l)
				}
				if l := alice.call("tasks/list", `{}`); !strings.Contains(fmt.Sprint(l), id) {
					t.Fatalf("alice's list lacks her task: %v", l)
				}
				var result map[string]any
				if v == v0728 {
					got := alice.waitStatus(id, "completed")
					result, _ = got["result"].(map[string]any)
				} else {
					alice.waitStatus(id, "completed")
					result = alice.call("tasks/result", `{"taskId":"`+id+`"}`)
				}
				if !strings.Contains(fmt.Sprint(result["content"]), tc.want) {
					t.Fatalf("result: %v", result)
				}
			})
		}
	}
}

// TestTasksCancelReachesServer: cancelling a task ends it on the server:
// the plain server's call gets notifications/cancelled, a server's own
// task gets tasks/cancel; the task shows cancelled.
func TestTasksCancelReachesServer(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	for i, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			c := newRawRPC(t, url, v, "alice", `{}`)
			id := c.startTask("plain_slow", `{"ms":30000}`)
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") > i }); err != nil {
				t.Fatal("the server's call never started")
			}
			if res := c.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
				t.Fatalf("tasks/cancel: %v", res)
			}
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Cancellations() > i }); err != nil {
				t.Fatalf("the server's call was not cancelled")
			}
			for _, srv := range []struct {
				tool string
				ts   *taskserver.Server
			}{{"ext_work", b.ext}, {"core_work", b.core}} {
				before := srv.ts.Cancels()
				id := c.startTask(srv.tool, `{"steps":1000,"stepMs":20}`)
				c.waitStatus(id, "working")
				c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
				deadline := time.Now().Add(10 * time.Second)
				for srv.ts.Cancels() == before && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if srv.ts.Cancels() == before {
					t.Fatalf("%s: no tasks/cancel reached the server", srv.tool)
				}
				if e := c.callErr("tasks/cancel", `{"taskId":"`+id+`"}`); !strings.Contains(e, "cancelled already") {
					t.Fatalf("second cancel: %q", e)
				}
			}
		})
	}
}

// TestTasksInputRounds: a server task that asks the user (the extension
// server's "ask" tool) completes: a 2026-07-28 client reads the question
// in tasks/get and answers with tasks/update; a 2025-11-25 client is asked
// with elicitation/create while it waits in tasks/result; the adapter's
// own client of either version answers through its ElicitationHandler.
func TestTasksInputRounds(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	t.Run("raw "+v0728, func(t *testing.T) {
		c := newRawRPC(t, url, v0728, "alice", `{}`)
		id := c.startTask("ext_ask", `{}`)
		got := c.waitStatus(id, "input_required")
		reqs, _ := got["inputRequests"].(map[string]any)
		if len(reqs) != 1 {
			t.Fatalf("input requests: %v", got)
		}
		answers := map[string]any{}
		for k := range reqs {
			answers[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
		}
		ab, _ := json.Marshal(map[string]any{"taskId": id, "inputResponses": answers})
		if e := newRawRPC(t, url, v0728, "bob", `{}`).callErr("tasks/update", string(ab)); !strings.Contains(e, "unknown task") {
			t.Fatalf("bob answering alice's task: %q", e)
		}
		c.call("tasks/update", string(ab))
		done := c.waitStatus(id, "completed")
		if !strings.Contains(fmt.Sprint(done["result"]), "hello Ada (accept)") {
			t.Fatalf("result: %v", done)
		}
	})
	t.Run("raw "+v1125, func(t *testing.T) {
		c := newRawRPC(t, url, v1125, "alice", `{"elicitation":{}}`)
		id := c.startTask("ext_ask", `{}`)
		c.waitStatus(id, "input_required")
		res, m := c.do(testCtx(t, 30*time.Second), "tasks/result", `{"taskId":"`+id+`"}`, func(method string, _ json.RawMessage) string {
			if method != "elicitation/create" {
				return `{}`
			}
			return `{"action":"accept","content":{"name":"Grace"}}`
		})
		if m.Error != nil || !strings.Contains(string(res), "hello Grace (accept)") {
			t.Fatalf("tasks/result: %s %+v", res, m.Error)
		}
	})
	for _, v := range []string{v1125, v0728} {
		t.Run("adapter "+v, func(t *testing.T) {
			c := coreClient(t, url, v, "alice", func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Linus"}}, nil
			})
			if _, err := c.Tools(testCtx(t, 20*time.Second)); err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(testCtx(t, 30*time.Second), "ext_ask", json.RawMessage(`{}`), nil)
			if err != nil || res.Text() != "hello Linus (accept)" {
				t.Fatalf("result %q, %v", textOf(res), err)
			}
		})
	}
}

// TestTasksCapPerPrincipal: a principal that keeps asking for tasks gets a
// clear error past the cap; another principal is not held back by it, and
// a cancelled and fetched task frees its place.
func TestTasksCapPerPrincipal(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{Tasks: &TaskOptions{MaxPerPrincipal: 3, TTL: time.Minute, PollInterval: 10 * time.Millisecond}})
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			hostile := newRawRPC(t, url, v, "mallory-"+v, `{}`)
			for range 3 {
				hostile.startTask("plain_slow", `{"ms":30000}`)
			}
			e := hostile.callErr("tools/call", `{"name":"plain_echo","arguments":{"text":"x"},"task":{}}`)
			if !strings.Contains(e, fmt.Sprint(CodeTooManyTasks)) || !strings.Contains(e, "the most the gateway keeps") {
				t.Fatalf("past the cap: %q", e)
			}
			other := newRawRPC(t, url, v, "alice-"+v, `{}`)
			id := other.startTask("plain_echo", `{"text":"x"}`)
			other.waitStatus(id, "completed")
			// A cancelled task, and one whose result was fetched, free
			// their places.
			list := hostile.call("tasks/list", `{}`)["tasks"].([]any)
			first := list[0].(map[string]any)["taskId"].(string)
			hostile.call("tasks/cancel", `{"taskId":"`+first+`"}`)
			id = hostile.startTask("plain_echo", `{"text":"x"}`)
			if v == v0728 {
				hostile.waitStatus(id, "completed")
			} else {
				hostile.call("tasks/result", `{"taskId":"`+id+`"}`)
			}
			hostile.startTask("plain_echo", `{"text":"x"}`)
			if e := hostile.callErr("tools/call", `{"name":"plain_echo","arguments":{"text":"x"},"task":{}}`); !strings.Contains(e, "the most the gateway keeps") {
				t.Fatalf("past the cap again: %q", e)
			}
		})
	}
}

// TestTasksEndWithGateway: Close ends every task's background call (the
// servers' calls are cancelled) and leaves no goroutine behind.
func TestTasksEndWithGateway(t *testing.T) {
	b := startTaskBackends(t)
	g, url := taskGateway(t, b, nil)
	c := newRawRPC(t, url, v1125, "alice", `{}`)
	m := newRawRPC(t, url, v0728, "alice", `{}`)
	c.startTask("plain_slow", `{"ms":30000}`)
	m.startTask("plain_slow", `{"ms":30000}`)
	ext := m.startTask("ext_work", `{"steps":1000,"stepMs":20}`)
	core := c.startTask("core_work", `{"steps":1000,"stepMs":20}`)
	m.waitStatus(ext, "working")
	c.waitStatus(core, "working")
	if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") >= 2 }); err != nil {
		t.Fatal("the calls never started")
	}
	// A server's task the gateway knows the id of is cancelled at Close
	// (one whose id is still on its way when the gateway closes is not).
	for _, id := range []string{ext, core} {
		waitUntil(t, "the server's own task of "+id, func() bool {
			g.tasks.mu.Lock()
			tk := g.tasks.tasks[id]
			g.tasks.mu.Unlock()
			if tk == nil {
				return false
			}
			select {
			case <-tk.made:
				return true
			default:
				return false
			}
		})
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Cancellations() >= 2 }); err != nil {
		t.Fatalf("the server's calls went on after Close: %d cancelled", b.plain.Cancellations())
	}
	if b.ext.Running() != 0 || b.core.Running() != 0 {
		t.Fatalf("server tasks still running after Close: ext %d, core %d", b.ext.Running(), b.core.Running())
	}
	if left := gatewayGoroutines(); left != "" {
		t.Fatalf("goroutines of the gateway left after Close:\n%s", left)
	}
}

// gatewayGoroutines returns the stacks of the goroutines running the
// gateway's code, other than tests', waiting a little for them to end.
func gatewayGoroutines() string {
	var left []string
	for range 250 {
		buf := make([]byte, 4<<20)
		buf = buf[:runtime.Stack(buf, true)]
		left = left[:0]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "mcpadapter/gateway.") && !strings.Contains(g, "testing.tRunner") {
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return ""
		}
		time.Sleep(20 * time.Millisecond)
	}
	return strings.Join(left, "\n\n")
}

// TestTasksOverStdio: a 2025-11-25 client on the gateway's stdin and
// stdout asks for a task (the "task" member) and fetches its result.
func TestTasksOverStdio(t *testing.T) {
	g, err := New([]Server{{Name: "s", Target: testserver.New(testserver.Options{Era: testserver.Legacy})}}, &Options{Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := testCtx(t, 30*time.Second)
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cr, gw := io.Pipe()
	gr, cw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- g.ServeStdio(ctx, gr, gw) }()
	defer func() { _ = cw.Close(); <-done }()
	lines := bufio.NewScanner(cr)
	send := func(msg string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(cw, msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, `"id"`) {
			return nil
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %s", msg)
		}
		var m struct {
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil || m.Error != nil {
			t.Fatalf("answer to %s: %s", msg, lines.Bytes())
		}
		return m.Result
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	created := send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"over stdio"},"task":{}}}`)
	task, _ := created["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if s, ok := parseTaskID(id); !ok || s != "s" {
		t.Fatalf("tools/call with a task: %v", created)
	}
	res := send(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"` + id + `"}}`)
	if !strings.Contains(fmt.Sprint(res["content"]), "over stdio") {
		t.Fatalf("tasks/result: %v", res)
	}
}

// TestTasksForClientsWithout: a client that knows no tasks (go-sdk's, of
// each version) calls tools of servers that run them as tasks: the call
// waits for the task's result, a tool that requires a task runs as one,
// and the server task's question reaches a handshake-era client as
// elicitation/create.
func TestTasksForClientsWithout(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			hc := &http.Client{Transport: bearer{"carol"}}
			c := mcp.NewClient(&mcp.Implementation{Name: "plain-client"}, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ken"}}, nil
			}})
			cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			ctx := testCtx(t, 30*time.Second)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ext_work", Arguments: map[string]any{"steps": 2, "stepMs": 10}})
			if err != nil || texts(res) != "done: 2 steps" {
				t.Fatalf("ext_work: %q, %v", texts(res), err)
			}
			started := b.core.Started("fail")
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "core_fail"})
			if b.core.Started("fail") != started+1 {
				t.Fatalf("core_fail (taskSupport required) did not run as a task: %v, %v", res, err)
			}
			if v == v1125 {
				res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ext_ask"})
				if err != nil || texts(res) != "hello Ken (accept)" {
					t.Fatalf("ext_ask: %q, %v", texts(res), err)
				}
			}
		})
	}
}

// TestTasksExpire: a result nobody fetches is forgotten after the TTL.
func TestTasksExpire(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{Tasks: &TaskOptions{TTL: 300 * time.Millisecond}})
	c := newRawRPC(t, url, v1125, "alice", `{}`)
	id := c.startTask("plain_echo", `{"text":"x"}`)
	c.waitStatus(id, "completed")
	for range 200 {
		if e := c.callErr("tasks/get", `{"taskId":"`+id+`"}`); strings.Contains(e, "unknown task") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the result was kept past the TTL")
}

// TestTaskViewCreatedCarriesQuestions: a task that asks its client a
// question before its tools/call is answered answers that call with its
// questions, as tasks/get would (a 2026-07-28 client reads a task waiting
// for input without them as unreadable).
func TestTaskViewCreatedCarriesQuestions(t *testing.T) {
	s := &taskStore{}
	task := &gwTask{id: "ext.0123", created: time.Now(), ttl: time.Minute, status: stInput, updated: time.Now(),
		asks: []*taskQuestion{{key: "name", params: &mcp.ElicitParams{Mode: "form", Message: "What is your name?"}}}}
	v := s.view(task, true, true)
	if v["resultType"] != "task" || v["status"] != stInput {
		t.Fatalf("created view: %v", v)
	}
	reqs, _ := v["inputRequests"].(map[string]any)
	if _, ok := reqs["name"]; !ok || len(reqs) != 1 {
		t.Fatalf("created view's inputRequests: %v", v)
	}
	task.status, task.asks = stWorking, nil
	if v := s.view(task, true, true); v["inputRequests"] != nil {
		t.Fatalf("a working task's created view has questions: %v", v)
	}
}
