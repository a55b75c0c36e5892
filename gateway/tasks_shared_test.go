package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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

// dyingStore is a replica's view of a shared TaskStore that can die: once
// killed, every operation of the replica fails, as a killed process's
// would never land.
type dyingStore struct {
	TaskStore
	dead atomic.Bool
}

var errDead = errors.New("this replica is dead")

func (d *dyingStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	if d.dead.Load() {
		return nil, errDead
	}
	return d.TaskStore.LoadTask(ctx, key)
}

func (d *dyingStore) SaveTask(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	if d.dead.Load() {
		return errDead
	}
	return d.TaskStore.SaveTask(ctx, key, rec, ttl)
}

func (d *dyingStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	if d.dead.Load() {
		return false, errDead
	}
	return d.TaskStore.AddTask(ctx, key, rec, ttl)
}

func (d *dyingStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	if d.dead.Load() {
		return false, errDead
	}
	return d.TaskStore.ReplaceTask(ctx, key, old, rec, ttl)
}

// TestSharedTasksReplicaDies: replica A's writes stop and its liveness
// record is gone (as when it is killed) while its tasks run. Replica B
// answers a call the gateway ran as failed with CodeCallInterrupted,
// saying to repeat it, and the server ran the call once; B follows a
// server's own task at the server to its result.
func TestSharedTasksReplicaDies(t *testing.T) {
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			b := startTaskBackends(t)
			shared := &MemoryTaskStore{}
			sessions := &MemorySessionStore{}
			a := &dyingStore{TaskStore: shared}
			ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: a}, Sessions: &SessionOptions{Store: sessions}})
			_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
			c := newRawRPC(t, urlA, v, "alice", `{}`)
			plain := c.startTask("plain_slow", `{"ms":4000}`)
			own := c.startTask("ext_work", `{"steps":40,"stepMs":50}`)
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatal("the server's call never started")
			}
			deadline := time.Now().Add(10 * time.Second)
			for { // A dies once the server's task id is in the store: before, B could not follow it
				rec, err := ga.tasks.sh.loadTask(context.Background(), own)
				if err != nil {
					t.Fatal(err)
				}
				if rec.Handle != nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			a.dead.Store(true)
			if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
				t.Fatal(err)
			}
			c.url = urlB
			got := c.waitStatus(plain, "failed")
			if v == v0728 {
				if e := fmt.Sprint(got["error"]); !strings.Contains(e, fmt.Sprint(CodeCallInterrupted)) || !strings.Contains(e, "repeat the call") {
					t.Fatalf("the lost call's error: %v", got)
				}
			} else if e := c.callErr("tasks/result", `{"taskId":"`+plain+`"}`); !strings.Contains(e, fmt.Sprint(CodeCallInterrupted)) || !strings.Contains(e, "repeat the call") {
				t.Fatalf("the lost call's tasks/result: %q", e)
			}
			var result map[string]any
			if v == v0728 {
				result, _ = c.waitStatus(own, "completed")["result"].(map[string]any)
			} else {
				result = c.call("tasks/result", `{"taskId":"`+own+`"}`)
			}
			if !strings.Contains(fmt.Sprint(result["content"]), "done: 40 steps") {
				t.Fatalf("the server's task's result on B: %v", result)
			}
			time.Sleep(4500 * time.Millisecond) // the lost call ends on A
			if n := b.plain.Calls("slow"); n != 1 {
				t.Fatalf("the server ran the call %d times", n)
			}
			if got := c.call("tasks/get", `{"taskId":"`+plain+`"}`); got["status"] != "failed" {
				t.Fatalf("the lost call after A's call ended: %v", got)
			}
		})
	}
}
