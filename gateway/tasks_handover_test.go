package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestSharedTasksHandover: replica A shuts down (Shutdown, a grace period
// of 3 s) while it runs three tasks of a client's: a server's own task of
// 80 steps, a call the gateway runs itself that takes 1.5 s, and one that
// takes 20 s. A's Shutdown lets the short call finish, and replica B
// answers its result; the long one is cancelled at the server when the
// grace period ends, and B answers it failed with CodeCallInterrupted,
// saying to repeat it; the server ran each call once. The server's own
// task is not cancelled at the server: A's record of it is handed over,
// and B follows it to its result. With each client era, and a server of
// each era.
func TestSharedTasksHandover(t *testing.T) {
	for _, v := range []string{v1125, v0728} {
		t.Run(v, func(t *testing.T) {
			b := startTaskBackends(t)
			shared := &MemoryTaskStore{}
			sessions := &MemorySessionStore{}
			ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
			_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
			c := newRawRPC(t, urlA, v, "alice", `{}`)
			server, tool := b.ext, "ext_work"
			if v == v1125 {
				server, tool = b.core, "core_work"
			}
			short := c.startTask("plain_slow", `{"ms":1500}`)
			long := c.startTask("plain_slow", `{"ms":20000}`)
			own := c.startTask(tool, `{"steps":80,"stepMs":50}`)
			if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 2 }); err != nil {
				t.Fatal("the server's calls never started")
			}
			waitHandle(t, ga, own)
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			began := time.Now()
			_ = ga.Shutdown(sctx) // the long call outlives the grace period: an error
			t.Logf("A's Shutdown took %v", time.Since(began).Round(time.Millisecond))
			rec, err := shared.LoadTask(context.Background(), taskRecKey(own))
			if err != nil || !strings.Contains(string(rec), `"replica":""`) {
				t.Fatalf("the server's task's record after A closed is not handed over: %s %v", rec, err)
			}
			c.url = urlB
			if v == v0728 {
				got := c.call("tasks/get", `{"taskId":"`+short+`"}`)
				if got["status"] != "completed" || !strings.Contains(fmt.Sprint(got["result"]), "slept") {
					t.Fatalf("the short call on B: %v", got)
				}
				got = c.call("tasks/get", `{"taskId":"`+long+`"}`)
				if e := fmt.Sprint(got["error"]); got["status"] != "failed" || !strings.Contains(e, fmt.Sprint(CodeCallInterrupted)) || !strings.Contains(e, "repeat the call") {
					t.Fatalf("the long call on B: %v", got)
				}
			} else {
				if got := c.call("tasks/result", `{"taskId":"`+short+`"}`); !strings.Contains(fmt.Sprint(got["content"]), "slept") {
					t.Fatalf("the short call's result on B: %v", got)
				}
				if e := c.callErr("tasks/result", `{"taskId":"`+long+`"}`); !strings.Contains(e, fmt.Sprint(CodeCallInterrupted)) || !strings.Contains(e, "repeat the call") {
					t.Fatalf("the long call's tasks/result on B: %q", e)
				}
			}
			var result map[string]any
			if v == v0728 {
				result, _ = c.waitStatus(own, "completed")["result"].(map[string]any)
			} else {
				result = c.call("tasks/result", `{"taskId":"`+own+`"}`)
			}
			if !strings.Contains(fmt.Sprint(result["content"]), "done: 80 steps") {
				t.Fatalf("the server's task's result on B: %v", result)
			}
			if n := server.Cancels(); n != 0 {
				t.Fatalf("the server's task was cancelled %d times at the server", n)
			}
			// The server sees the long call's cancel when the notification
			// reaches it, which may be after A closed.
			_ = b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Cancellations() > 0 })
			if n, k := b.plain.Calls("slow"), b.plain.Cancellations(); n != 2 || k != 1 {
				t.Fatalf("the server ran the calls %d times (want 2), %d cancelled (want 1)", n, k)
			}
		})
	}
}

// waitHandle waits until task id's record holds the server's task id.
func waitHandle(t *testing.T, g *Gateway, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		rec, err := g.tasks.sh.loadTask(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if rec != nil && rec.Handle != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's task id never reached the store")
		}
	}
}

// TestSharedTasksQuestionOfStoppedReplica: a server's own task waits for
// the client's answer to its question (elicitation) when replica A, which
// put the question to the client, stops: it is killed, or it shuts down.
// Replica B refuses an answer to A's question with an error that says so
// (it is never handed to another question), puts the server's question
// to the client again under a key of its own, and relays the client's
// answer to the server; the task completes with it, the server ran it
// once and saw no cancel. With each client era.
func TestSharedTasksQuestionOfStoppedReplica(t *testing.T) {
	for _, v := range []string{v1125, v0728} {
		for _, how := range []string{"killed", "shut down"} {
			t.Run(v+"/"+how, func(t *testing.T) {
				b := startTaskBackends(t)
				shared := &MemoryTaskStore{}
				sessions := &MemorySessionStore{}
				dying := &dyingStore{TaskStore: shared}
				ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: dying}, Sessions: &SessionOptions{Store: sessions}})
				_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
				c := newRawRPC(t, urlA, v, "alice", `{"elicitation":{}}`)
				id := c.startTask("ext_ask", `{}`)
				got := c.waitStatus(id, "input_required")
				var old string
				if v == v0728 {
					for k := range got["inputRequests"].(map[string]any) {
						old = k
					}
				}
				waitHandle(t, ga, id)
				if how == "killed" {
					dying.dead.Store(true)
					if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
						t.Fatal(err)
					}
				} else {
					sctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					_ = ga.Shutdown(sctx)
				}
				c.url = urlB
				if v == v1125 {
					res, m := c.do(testCtx(t, 30*time.Second), "tasks/result", `{"taskId":"`+id+`"}`, func(method string, _ json.RawMessage) string {
						return `{"action":"accept","content":{"name":"Grace"}}`
					})
					if m.Error != nil || !strings.Contains(string(res), "hello Grace (accept)") {
						t.Fatalf("tasks/result on B: %s %+v", res, m.Error)
					}
				} else {
					answer := func(key string) string {
						return c.callErr("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{"name":"Ada"}}}}`)
					}
					if e := answer(old); !strings.Contains(e, "no question") || !strings.Contains(e, "stopped") {
						t.Fatalf("B took an answer to A's question: %q", e)
					}
					got := c.waitStatus(id, "input_required")
					var key string
					for k := range got["inputRequests"].(map[string]any) {
						key = k
					}
					if key == "" || key == old {
						t.Fatalf("B's question's key %q (A's was %q)", key, old)
					}
					if e := answer(key); e != "" {
						t.Fatalf("answering B's question: %q", e)
					}
					done := c.waitStatus(id, "completed")
					if !strings.Contains(fmt.Sprint(done["result"]), "hello Ada (accept)") {
						t.Fatalf("the task's result on B: %v", done)
					}
				}
				if n, k := b.ext.Started("ask"), b.ext.Cancels(); n != 1 || k != 0 {
					t.Fatalf("the server started the task %d times (want 1) and got %d tasks/cancel", n, k)
				}
			})
		}
	}
}

// TestSharedTasksAdoptServerAway: replica A is killed while a server's own
// task runs, and the server does not answer replica B for a while (its
// requests fail with 503). B does not answer the task as failed, though
// it cannot follow it: the task is still working on the server. Once the
// server answers again, B follows the task to its result, and the server
// ran it once.
func TestSharedTasksAdoptServerAway(t *testing.T) {
	b := startTaskBackends(t)
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.ext.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	var away atomic.Bool
	target, _ := url.Parse(ext.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if away.Load() && bytes.Contains(body, []byte(`"tasks/`)) {
			http.Error(w, "away", http.StatusServiceUnavailable)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	bb := *b
	bb.servers = []Server{{Name: "ext", Target: front.URL}}
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	dying := &dyingStore{TaskStore: shared}
	ga, urlA := taskGateway(t, &bb, &Options{Tasks: &TaskOptions{Store: dying}, Sessions: &SessionOptions{Store: sessions}})
	_, urlB := taskGateway(t, &bb, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	id := c.startTask("ext_work", `{"steps":30,"stepMs":100}`)
	waitHandle(t, ga, id)
	away.Store(true)
	dying.dead.Store(true)
	if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
		t.Fatal(err)
	}
	c.url = urlB
	for range 10 {
		if got := c.call("tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "working" {
			t.Fatalf("B answers a task it cannot reach the server about: %v", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	away.Store(false)
	done := c.waitStatus(id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "done: 30 steps") {
		t.Fatalf("the task's result on B: %v", done)
	}
	if n := b.ext.Started("work"); n != 1 {
		t.Fatalf("the server started the task %d times", n)
	}
}

// beatlessStore is a replica's view of a shared TaskStore whose writes
// over a task's record fail while on is set, except the one that hands
// the task over (a store that failed the replica's beats, and answers
// again as it shuts down).
type beatlessStore struct {
	TaskStore
	on atomic.Bool
}

func (s *beatlessStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	if s.on.Load() && strings.HasPrefix(key, "task.") && !bytes.Contains(rec, []byte(`"replica":""`)) {
		return false, errDead
	}
	return s.TaskStore.ReplaceTask(ctx, key, old, rec, ttl)
}

// TestSharedTasksHandoverWritesHandle: replica A's store fails the write
// of the server's task id into a task's record (right after the server
// made its task, and on the beats after it), and A shuts down. The record
// A hands over names the server's task: replica B follows the task to
// its result; it does not answer it failed with CodeCallInterrupted
// while the server runs it, and the server ran it once, uncancelled.
func TestSharedTasksHandoverWritesHandle(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	beatless := &beatlessStore{TaskStore: shared}
	ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: beatless}, Sessions: &SessionOptions{Store: sessions}})
	_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	beatless.on.Store(true)
	id := c.startTask("ext_work", `{"steps":30,"stepMs":100}`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ga.tasks.mu.Lock()
		own := ga.tasks.tasks[id]
		ga.tasks.mu.Unlock()
		own.mu.Lock()
		made := own.remote != ""
		own.mu.Unlock()
		if made {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never made its task")
		}
	}
	if h := recordOf(t, shared, id).Handle; h != nil {
		t.Fatalf("the record holds the server's task id though the store failed its write: %+v", h)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = ga.Shutdown(sctx)
	c.url = urlB
	if got := c.call("tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "working" {
		t.Fatalf("B answers the handed-over task, which the server runs, as %v", got)
	}
	done := c.waitStatus(id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "done: 30 steps") {
		t.Fatalf("the task's result on B: %v", done)
	}
	if n, k := b.ext.Started("work"), b.ext.Cancels(); n != 1 || k != 0 {
		t.Fatalf("the server started the task %d times and got %d tasks/cancel (want 1, 0)", n, k)
	}
}

// TestSharedTasksCapAcrossHandover: with MaxPerPrincipal 2, alice's two
// server tasks run on replica A, which shuts down and hands them over.
// Before and after replica B adopts them, a third task of alice's is
// refused with CodeTooManyTasks: tasks handed over still count, so a
// rolling restart never lets a principal past its cap.
func TestSharedTasksCapAcrossHandover(t *testing.T) {
	b := startTaskBackends(t)
	gs, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, &TaskOptions{MaxPerPrincipal: 2})
	c := newRawRPC(t, urls[0], v0728, "alice", `{}`)
	ids := []string{c.startTask("ext_work", `{"steps":100,"stepMs":100}`), c.startTask("ext_work", `{"steps":100,"stepMs":100}`)}
	for _, id := range ids {
		waitHandle(t, gs[0], id)
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = gs[0].Shutdown(sctx)
	c.url = urls[1]
	third := `{"name":"ext_work","arguments":{"steps":1,"stepMs":1},"task":{}}`
	if e := c.callErr("tools/call", third); !strings.Contains(e, fmt.Sprint(CodeTooManyTasks)) {
		t.Fatalf("a third task right after A handed two over: %q", e)
	}
	for _, id := range ids {
		c.waitStatus(id, "working") // B adopts it
	}
	if e := c.callErr("tools/call", third); !strings.Contains(e, fmt.Sprint(CodeTooManyTasks)) {
		t.Fatalf("a third task once B adopted two: %q", e)
	}
}
