package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openTaskGateway starts a gateway in front of b with no authorization:
// every client is the same empty principal.
func openTaskGateway(t *testing.T, b *taskBackends, opts *Options) string {
	t.Helper()
	g, _ := taskGateway(t, b, opts)
	ts := httptest.NewServer(g)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// TestTasksListWithoutAuthorization: with no authorization the ids'
// random digits are what keeps one client from another's tasks, so
// tasks/list must not hand them out: another session, or a 2026-07-28
// client, lists none of a session's tasks; the session lists its own.
func TestTasksListWithoutAuthorization(t *testing.T) {
	b := startTaskBackends(t)
	url := openTaskGateway(t, b, nil)
	alice := newRawRPC(t, url, v1125, "", `{}`)
	id := alice.startTask("plain_slow", `{"ms":30000}`)
	mallory := newRawRPC(t, url, v1125, "", `{}`)
	modern := newRawRPC(t, url, v0728, "", `{}`)
	for name, c := range map[string]*rawRPC{"another session": mallory, "a 2026-07-28 client": modern} {
		if l := c.call("tasks/list", `{}`); strings.Contains(fmt.Sprint(l), id) {
			t.Errorf("%s lists alice's task: %v", name, l)
		}
	}
	if l := alice.call("tasks/list", `{}`); !strings.Contains(fmt.Sprint(l), id) {
		t.Errorf("alice's list lacks her task: %v", l)
	}
	// The id itself still reaches the task: it is the capability.
	if res := mallory.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
		t.Errorf("cancel by id: %v", res)
	}
}

// TestTasksChurnIsBounded: a client that makes tasks and cancels them, or
// fetches their results, as fast as it can, does not grow what the
// gateway keeps for it past twice its cap.
func TestTasksChurnIsBounded(t *testing.T) {
	const max = 3
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{Tasks: &TaskOptions{MaxPerPrincipal: max}})
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			c := newRawRPC(t, url, v, "mallory-"+v, `{}`)
			for i := range 6 * max {
				id := c.startTask("plain_slow", `{"ms":30000}`)
				if i%2 == 0 {
					c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
					continue
				}
				c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
				id = c.startTask("plain_echo", `{"text":"x"}`)
				if v == v0728 {
					c.waitStatus(id, "completed")
				} else {
					c.call("tasks/result", `{"taskId":"`+id+`"}`)
				}
			}
			if n := len(c.call("tasks/list", `{}`)["tasks"].([]any)); n > 2*max {
				t.Fatalf("the gateway keeps %d tasks for one principal whose cap is %d", n, max)
			}
		})
	}
}

// TestTasksHostileTaskMember: a 2025-11-25 client's "task" member of every
// JSON type: an object makes a task (its ttl, if a sane number, shortens
// what the gateway keeps, never lengthens it); anything else is no request
// for a task, and the call is answered as a plain call; nothing crashes.
func TestTasksHostileTaskMember(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{Tasks: &TaskOptions{TTL: time.Minute}})
	c := newRawRPC(t, url, v1125, "mallory", `{}`)
	for _, member := range []string{`null`, `5`, `"x"`, `[]`, `[{}]`, `true`} {
		res := c.call("tools/call", `{"name":"plain_echo","arguments":{"text":"plain"},"task":`+member+`}`)
		if res["task"] != nil || !strings.Contains(fmt.Sprint(res["content"]), "plain") {
			t.Errorf("task member %s: %v", member, res)
		}
	}
	for member, want := range map[string]float64{
		`{}`: 60000, `{"ttl":1e300}`: 60000, `{"ttl":-5}`: 60000, `{"ttl":"300"}`: 60000, `{"ttl":{}}`: 60000,
		`{"ttl":600000}`: 60000, `{"ttl":300}`: 300, `{"ttl":300,"extra":[1,2]}`: 300,
	} {
		res := c.call("tools/call", `{"name":"plain_echo","arguments":{"text":"x"},"task":`+member+`}`)
		task, _ := res["task"].(map[string]any)
		if task == nil || task["ttl"] != want {
			t.Errorf("task member %s: %v, want ttl %v", member, res, want)
		}
	}
	// A result kept for the client's short ttl is forgotten after it.
	id := c.startTask("plain_echo", `{"text":"x"}`)
	res := c.call("tools/call", `{"name":"plain_echo","arguments":{"text":"x"},"task":{"ttl":200}}`)
	short := res["task"].(map[string]any)["taskId"].(string)
	c.waitStatus(short, "completed")
	for i := 0; !strings.Contains(c.callErr("tasks/get", `{"taskId":"`+short+`"}`), "unknown task"); i++ {
		if i == 500 {
			t.Fatal("the result was kept past the client's ttl")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if e := c.callErr("tasks/get", `{"taskId":"`+id+`"}`); e != "" {
		t.Fatalf("the task with the gateway's ttl: %s", e)
	}
}

// TestTasksListedToolsOfferTasks: a 2025-11-25 client sees every tool as
// one it may call as a task, except the search pair, which runs none.
func TestTasksListedToolsOfferTasks(t *testing.T) {
	b := startTaskBackends(t)
	for _, search := range []bool{false, true} {
		opts := &Options{}
		if search {
			opts.ToolSearch = &mcpadapter.ToolSearch{Threshold: -1}
		}
		_, url := taskGateway(t, b, opts)
		tools, _ := newRawRPC(t, url, v1125, "alice", `{}`).call("tools/list", `{}`)["tools"].([]any)
		if len(tools) == 0 {
			t.Fatalf("search %v: no tools", search)
		}
		for _, tl := range tools {
			tool := tl.(map[string]any)
			ex, _ := tool["execution"].(map[string]any)
			if offered := ex["taskSupport"] == "optional"; offered == search {
				t.Errorf("search %v: %v", search, tool)
			}
		}
	}
}

// TestTasksCancelEndsTheCall: a cancelled task's background call ends
// (no goroutine is left running it), for a plain call and for server
// tasks of both eras, also one waiting for the client's answer, without
// the gateway closing.
func TestTasksCancelEndsTheCall(t *testing.T) {
	b := startTaskBackends(t)
	g, url := taskGateway(t, b, nil)
	for _, v := range []string{v1125, v0728} {
		c := newRawRPC(t, url, v, "alice", `{}`)
		for _, tc := range []struct{ tool, args, status string }{
			{"plain_slow", `{"ms":30000}`, "working"},
			{"ext_work", `{"steps":1000,"stepMs":20}`, "working"},
			{"core_work", `{"steps":1000,"stepMs":20}`, "working"},
			{"ext_ask", `{}`, "input_required"}, // cancelled while it waits for an answer
		} {
			id := c.startTask(tc.tool, tc.args)
			c.waitStatus(id, tc.status)
			g.tasks.mu.Lock()
			task := g.tasks.tasks[id]
			g.tasks.mu.Unlock()
			c.call("tasks/cancel", `{"taskId":"`+id+`"}`)
			select {
			case <-task.done:
			case <-testCtx(t, 10*time.Second).Done():
				t.Fatalf("%s %s: the cancelled task's call goes on", v, tc.tool)
			}
		}
	}
}

// TestTasksUpdateKeys: an answer under a key no question has is not taken
// for another question's answer.
func TestTasksUpdateKeys(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, nil)
	c := newRawRPC(t, url, v0728, "alice", `{}`)
	id := c.startTask("ext_ask", `{}`)
	reqs, _ := c.waitStatus(id, "input_required")["inputRequests"].(map[string]any)
	if len(reqs) != 1 {
		t.Fatalf("input requests: %v", reqs)
	}
	answer := func(key, name string) {
		ab, _ := json.Marshal(map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"name": name}}}})
		c.call("tasks/update", string(ab))
	}
	answer("no-such-question", "Eve")
	for key := range reqs {
		answer(key, "Ada")
	}
	if done := c.waitStatus(id, "completed"); !strings.Contains(fmt.Sprint(done["result"]), "hello Ada (accept)") {
		t.Fatalf("result: %v", done)
	}
}

// TestTasksPlainAnswersFreeTheirPlace: a 2026-07-28 client that declares
// Tasks calls a server with Tasks that answers at once, without a task:
// the gateway's task for the call is gone with the answer, and holds no
// place under the client's cap.
func TestTasksPlainAnswersFreeTheirPlace(t *testing.T) {
	ts := taskserver.New(taskserver.Options{OnCall: func(context.Context, string) bool { return false }})
	t.Cleanup(ts.Close)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ts.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	_, url := taskGateway(t, &taskBackends{servers: []Server{{Name: "ext", Target: srv.URL}}}, &Options{Tasks: &TaskOptions{MaxPerPrincipal: 2}})
	c := newRawRPC(t, url, v0728, "alice", `{}`)
	for i := range 4 {
		res := c.call("tools/call", `{"name":"ext_work","arguments":{}}`)
		if res["resultType"] == "task" || !strings.Contains(fmt.Sprint(res["content"]), "plain call of work") {
			t.Fatalf("call %d: %v", i, res)
		}
	}
	if l := c.call("tasks/list", `{}`)["tasks"].([]any); len(l) != 0 {
		t.Fatalf("tasks kept for calls answered without one: %v", l)
	}
	c.startTask("ext_work", `{}`)
}

// TestTasksLeaveSlotsForOthers: one principal's tasks, as many as its cap
// allows, do not take every call slot of a server: another principal's
// call to that server is answered while they run.
func TestTasksLeaveSlotsForOthers(t *testing.T) {
	b := startTaskBackends(t)
	_, url := taskGateway(t, b, &Options{MaxCallsPerServer: 4, Tasks: &TaskOptions{MaxPerPrincipal: 8}})
	mallory := newRawRPC(t, url, v0728, "mallory", `{}`)
	for range 8 {
		mallory.startTask("plain_slow", `{"ms":30000}`)
	}
	if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") >= 2 }); err != nil {
		t.Fatal("mallory's calls never started")
	}
	alice := coreClient(t, url, v1125, "alice", nil)
	res, err := alice.CallTool(testCtx(t, 10*time.Second), "plain_echo", json.RawMessage(`{"text":"mine"}`), nil)
	if err != nil || res.Text() != "mine" {
		t.Fatalf("alice's call while mallory's tasks run: %q, %v", textOf(res), err)
	}
}

// TestTasksInternalKeyIsNoAsk: the _meta key the gateway lifts a
// 2025-11-25 client's "task" member into is its own; a client that writes
// it itself with what is no task request (null, a number, a string) gets
// its call answered as a plain call, as one whose "task" member is not an
// object does.
func TestTasksInternalKeyIsNoAsk(t *testing.T) {
	b := startTaskBackends(t)
	url := openTaskGateway(t, b, nil)
	for _, v := range []string{v1125, v0728} {
		c := newRawRPC(t, url, v, "", `{}`)
		for _, forged := range []string{`null`, `7`, `"yes"`, `[]`, `true`} {
			res := c.call("tools/call", `{"name":"plain_echo","arguments":{"text":"hi"},"_meta":{"io.mcpadapter.gateway/task":`+forged+`}}`)
			if res["task"] != nil || !strings.Contains(fmt.Sprint(res["content"]), "hi") {
				t.Errorf("%s, key set to %s: %v, want the echo's plain result", v, forged, res)
			}
		}
	}
}
