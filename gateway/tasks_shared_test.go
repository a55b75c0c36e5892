package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// sharedTaskGateways starts n gateways in front of b sharing their tasks
// (and their handshake-era sessions) in one store each.
func sharedTaskGateways(t *testing.T, b *taskBackends, n int, tasks TaskStore, sessions SessionStore, o *TaskOptions) ([]*Gateway, []string) {
	t.Helper()
	var gs []*Gateway
	var urls []string
	for range n {
		opts := &TaskOptions{Store: tasks}
		if o != nil {
			c := *o
			c.Store = tasks
			opts = &c
		}
		g, url := taskGateway(t, b, &Options{Tasks: opts, Sessions: &SessionOptions{Store: sessions}})
		gs, urls = append(gs, g), append(urls, url)
	}
	return gs, urls
}

// TestSharedTasksAnyReplica: a task made on replica A (a server's own
// task of either protocol, or a call the gateway runs for a server
// without tasks), by a client of either era, is read, listed, and its
// result fetched on replica B; another principal gets "unknown task" for
// it on both replicas and lists none.
func TestSharedTasksAnyReplica(t *testing.T) {
	b := startTaskBackends(t)
	_, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, nil)
	for _, v := range []string{v1125, v0728} {
		for _, tc := range []struct{ tool, args, want string }{
			{"core_work", `{"steps":2,"stepMs":10}`, "done: 2 steps"},
			{"ext_work", `{"steps":2,"stepMs":10}`, "done: 2 steps"},
			{"plain_echo", `{"text":"hi"}`, "hi"},
		} {
			t.Run(v+"/"+tc.tool, func(t *testing.T) {
				alice := newRawRPC(t, urls[0], v, "alice", `{}`)
				id := alice.startTask(tc.tool, tc.args)
				alice.url = urls[1]
				for _, u := range urls {
					bob := newRawRPC(t, u, v, "bob", `{}`)
					for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
						if e := bob.callErr(m, `{"taskId":"`+id+`"}`); !strings.Contains(e, "unknown task") {
							t.Fatalf("bob's %s of alice's task at %s: %q", m, u, e)
						}
					}
					if l := bob.call("tasks/list", `{}`); len(l["tasks"].([]any)) != 0 {
						t.Fatalf("bob lists alice's tasks: %v", l)
					}
				}
				if l := alice.call("tasks/list", `{}`); !strings.Contains(fmt.Sprint(l), id) {
					t.Fatalf("alice's list on B lacks her task: %v", l)
				}
				var result map[string]any
				if v == v0728 {
					got := alice.waitStatus(id, "completed")
					result, _ = got["result"].(map[string]any)
				} else {
					result = alice.call("tasks/result", `{"taskId":"`+id+`"}`)
				}
				if !strings.Contains(fmt.Sprint(result["content"]), tc.want) {
					t.Fatalf("result on B: %v", result)
				}
			})
		}
	}
}

// TestSharedTasksCancelElsewhere: a task running on replica A and
// cancelled on replica B ends at the server (the plain server's call is
// cancelled by A on its next beat; a server's own task at once), and
// shows cancelled on both.
func TestSharedTasksCancelElsewhere(t *testing.T) {
	b := startTaskBackends(t)
	_, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, nil)
	for i, v := range []string{v1125, v0728} {
		t.Run(v+"/plain", func(t *testing.T) {
			c := newRawRPC(t, urls[0], v, "alice", `{}`)
			id := c.startTask("plain_slow", `{"ms":30000}`)
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") > i }); err != nil {
				t.Fatal("the server's call never started")
			}
			c.url = urls[1]
			if res := c.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
				t.Fatalf("tasks/cancel on B: %v", res)
			}
			c.url = urls[0]
			c.waitStatus(id, "cancelled")
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Cancellations() > i }); err != nil {
				t.Fatalf("the server's call was not cancelled after the cancel on B")
			}
		})
		t.Run(v+"/ext", func(t *testing.T) {
			c := newRawRPC(t, urls[0], v, "alice", `{}`)
			before := b.ext.Cancels()
			id := c.startTask("ext_work", `{"steps":1000,"stepMs":20}`)
			c.url = urls[1]
			c.waitStatus(id, "working")
			if res := c.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
				t.Fatalf("tasks/cancel on B: %v", res)
			}
			deadline := time.Now().Add(10 * time.Second)
			for b.ext.Cancels() == before && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if b.ext.Cancels() == before {
				t.Fatal("the server's task was not cancelled")
			}
			c.url = urls[0]
			c.waitStatus(id, "cancelled")
		})
	}
}

// TestSharedTasksCap: MaxPerPrincipal counts the tasks of every replica.
func TestSharedTasksCap(t *testing.T) {
	b := startTaskBackends(t)
	_, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, &TaskOptions{MaxPerPrincipal: 2})
	a := newRawRPC(t, urls[0], v0728, "alice", `{}`)
	a.startTask("plain_slow", `{"ms":30000}`)
	a.url = urls[1]
	a.startTask("plain_slow", `{"ms":30000}`)
	for _, u := range urls {
		a.url = u
		if e := a.callErr("tools/call", `{"name":"plain_slow","arguments":{"ms":30000},"task":{}}`); !strings.Contains(e, fmt.Sprint(CodeTooManyTasks)) {
			t.Fatalf("a third task on %s: %q", u, e)
		}
	}
	bob := newRawRPC(t, urls[0], v0728, "bob", `{}`)
	bob.startTask("plain_slow", `{"ms":30000}`)
}

func TestMemoryTaskStore(t *testing.T) {
	storetest.CheckTaskStore(t, &MemoryTaskStore{})
}
