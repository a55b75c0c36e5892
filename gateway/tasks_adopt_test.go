package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingExt is b with its "ext" server behind a front that counts the
// tasks/get requests it passes on (one replica's view of the server).
func countingExt(t *testing.T, b *taskBackends) (*taskBackends, *atomic.Int64) {
	t.Helper()
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.ext.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	target, _ := url.Parse(ext.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var gets atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tasks/get"`)) {
			gets.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	bb := *b
	bb.servers = append([]Server(nil), b.servers...)
	for i := range bb.servers {
		if bb.servers[i].Name == "ext" {
			bb.servers[i].Target = front.URL
		}
	}
	return &bb, &gets
}

// recordOf reads task id's record from store.
func recordOf(t *testing.T, store TaskStore, id string) *taskRecord {
	t.Helper()
	b, err := store.LoadTask(context.Background(), taskRecKey(id))
	if err != nil || b == nil {
		t.Fatalf("task %s's record: %s %v", id, b, err)
	}
	var rec taskRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec
}

// TestSharedTasksAdoptedFromSlowReplica: replica A, which runs a server's
// own task, is not dead but its store fails long enough for its liveness
// record to expire; replica B adopts the task. Once A's store answers
// again, A lets go of the task: it no longer polls the server about it
// nor writes its record (B's questions and answers in it stay B's); a
// client's tasks/cancel on B reaches the server once, and A shows the
// task as its record does.
func TestSharedTasksAdoptedFromSlowReplica(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	dying := &dyingStore{TaskStore: shared}
	ba, getsA := countingExt(t, b)
	ga, urlA := taskGateway(t, ba, &Options{Tasks: &TaskOptions{Store: dying}, Sessions: &SessionOptions{Store: sessions}})
	gb, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	id := c.startTask("ext_work", `{"steps":300,"stepMs":100}`)
	waitHandle(t, ga, id)
	dying.dead.Store(true)
	if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
		t.Fatal(err)
	}
	c.url = urlB
	c.waitStatus(id, "working")
	if r := recordOf(t, shared, id).Replica; r != gb.tasks.sh.replica {
		t.Fatalf("the record names replica %q after B was asked, not B", r)
	}
	dying.dead.Store(false) // A's store answers again: A is alive
	time.Sleep(2500 * time.Millisecond)
	if r := recordOf(t, shared, id).Replica; r != gb.tasks.sh.replica {
		t.Fatalf("the record names replica %q once A is back, not B", r)
	}
	n := getsA.Load()
	time.Sleep(time.Second)
	if n := getsA.Load() - n; n != 0 {
		t.Fatalf("A, alive again, sent %d tasks/get in 1 s about the task B adopted: it is followed twice", n)
	}
	before := b.ext.Cancels()
	if res := c.call("tasks/cancel", `{"taskId":"`+id+`"}`); res["status"] != "cancelled" {
		t.Fatalf("tasks/cancel on B: %v", res)
	}
	time.Sleep(3 * time.Second) // A's beats
	if n := b.ext.Cancels() - before; n != 1 {
		t.Fatalf("the server got %d tasks/cancel for one client's cancel (want 1)", n)
	}
	c.url = urlA
	if got := c.call("tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "cancelled" {
		t.Fatalf("A shows the cancelled task as %v", got)
	}
}

// TestSharedTasksAnswersAfterAdoption: replica A, which put a server's
// task's question (q1) to a 2026-07-28 client, is killed, and replica B
// adopts the task and puts the question again under a key of its own.
// On replica C, which neither ran nor adopted the task, an answer to A's
// question is an error saying the replica that put it stopped (it is
// not dropped silently, as it is on no replica); an answer under a key
// with B's prefix that B never used is dropped; bob's answers to alice's
// questions are "unknown task" on every replica. Alice's answer to B's
// question, given on C, reaches the server once, and the task completes.
func TestSharedTasksAnswersAfterAdoption(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	dying := &dyingStore{TaskStore: shared}
	ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: dying}, Sessions: &SessionOptions{Store: sessions}})
	_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	_, urlC := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{"elicitation":{}}`)
	id := c.startTask("ext_ask", `{}`)
	keyOf := func(got map[string]any) string {
		for k := range got["inputRequests"].(map[string]any) {
			return k
		}
		return ""
	}
	old := keyOf(c.waitStatus(id, "input_required"))
	waitHandle(t, ga, id)
	dying.dead.Store(true)
	if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
		t.Fatal(err)
	}
	c.url = urlB
	key := keyOf(c.waitStatus(id, "input_required"))
	if key == old || !strings.HasSuffix(key, ".q1") {
		t.Fatalf("B's question's key %q (A's was %q)", key, old)
	}
	answer := func(c *rawRPC, url, k string) string {
		c.url = url
		return c.callErr("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+k+`":{"action":"accept","content":{"name":"Ada"}}}}`)
	}
	bob := newRawRPC(t, urlC, v0728, "bob", `{"elicitation":{}}`)
	for _, u := range []string{urlA, urlB, urlC} {
		if u == urlA {
			continue // A is dead
		}
		for _, k := range []string{old, key} {
			if e := answer(bob, u, k); !strings.Contains(e, "unknown task") {
				t.Fatalf("bob's answer to alice's question %s at %s: %q", k, u, e)
			}
		}
	}
	if e := answer(c, urlC, old); !strings.Contains(e, "no question") || !strings.Contains(e, "stopped") {
		t.Fatalf("C took an answer to A's question after B adopted the task: %q", e)
	}
	forged := strings.TrimSuffix(key, "q1") + "q9"
	if e := answer(c, urlC, forged); e != "" {
		t.Fatalf("an answer under B's prefix to no question on C: %q", e)
	}
	if e := answer(c, urlC, key); e != "" {
		t.Fatalf("answering B's question on C: %q", e)
	}
	c.url = urlC
	done := c.waitStatus(id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "hello Ada (accept)") {
		t.Fatalf("the task's result: %v", done)
	}
	if n, u, k := b.ext.Started("ask"), b.ext.Updates(), b.ext.Cancels(); n != 1 || u != 1 || k != 0 {
		t.Fatalf("the server started the task %d times, got %d tasks/update and %d tasks/cancel (want 1, 1, 0)", n, u, k)
	}
}

// TestSharedTasksAdoptServerAwayQuiet: replica A is killed while a
// server's own task runs, and the server does not answer replica B's
// requests about tasks. A client polls the task on B 40 times in 2 s:
// B does not try to adopt and follow it on every request (each try is
// store writes, a goroutine and a request to the server), nor log a
// warning for each; once the server answers, B follows it to its result.
func TestSharedTasksAdoptServerAwayQuiet(t *testing.T) {
	b := startTaskBackends(t)
	ext := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return b.ext.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(ext.Close)
	var away atomic.Bool
	var tries atomic.Int64
	target, _ := url.Parse(ext.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if away.Load() && bytes.Contains(body, []byte(`"tasks/`)) {
			tries.Add(1)
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
	var logB lockedBuffer
	_, urlB := taskGateway(t, &bb, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions},
		Logger: slog.New(slog.NewTextHandler(&logB, nil))})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	id := c.startTask("ext_work", `{"steps":40,"stepMs":100}`)
	waitHandle(t, ga, id)
	away.Store(true)
	dying.dead.Store(true)
	if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // A's follow gives up on the server
	tries.Store(0)
	c.url = urlB
	for range 40 {
		if got := c.call("tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "working" {
			t.Fatalf("B answers a task it cannot reach the server about: %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	n, w := tries.Load(), strings.Count(logB.String(), "could not be followed")
	t.Logf("40 polls in 2 s: %d requests of B's to the server, %d warnings", n, w)
	if n > 10 || w > 2 {
		t.Fatalf("40 polls of a task whose server is away: %d requests to the server, %d warnings (want at most 10 and 2)", n, w)
	}
	away.Store(false)
	done := c.waitStatus(id, "completed")
	if !strings.Contains(fmt.Sprint(done["result"]), "done: 40 steps") {
		t.Fatalf("the task's result on B: %v", done)
	}
}

// TestSharedTasksAdoptedEndWithGateways: replica A is killed while two
// server tasks of alice's run: a 2026-07-28 one waiting for her answer,
// and a 2025-11-25 one. Replica B adopts both; A's store then answers
// again, and A lets go of them. Closing B, then A, leaves no goroutine of
// the gateway behind, and neither task was cancelled at its server (B
// hands them over: they still run there).
func TestSharedTasksAdoptedEndWithGateways(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	dying := &dyingStore{TaskStore: shared}
	ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: dying}, Sessions: &SessionOptions{Store: sessions}})
	gb, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	m := newRawRPC(t, urlA, v0728, "alice", `{"elicitation":{}}`)
	c := newRawRPC(t, urlA, v1125, "alice", `{}`)
	ask := m.startTask("ext_ask", `{}`)
	work := c.startTask("core_work", `{"steps":1000,"stepMs":20}`)
	m.waitStatus(ask, "input_required")
	waitHandle(t, ga, ask)
	waitHandle(t, ga, work)
	dying.dead.Store(true)
	if err := shared.DeleteTask(context.Background(), replicaKey(ga.tasks.sh.replica)); err != nil {
		t.Fatal(err)
	}
	m.url, c.url = urlB, urlB
	m.waitStatus(ask, "input_required")
	c.waitStatus(work, "working")
	dying.dead.Store(false)
	time.Sleep(2500 * time.Millisecond) // A's beats: it lets go
	for _, id := range []string{ask, work} {
		if r := recordOf(t, shared, id).Replica; r != gb.tasks.sh.replica {
			t.Fatalf("task %s's record names %q once A is back, not B", id, r)
		}
	}
	if err := gb.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ga.Close(); err != nil {
		t.Fatal(err)
	}
	if left := gatewayGoroutines(); left != "" {
		t.Fatalf("goroutines of the gateway left after Close:\n%s", left)
	}
	if n, k := b.ext.Cancels(), b.core.Cancels(); n != 0 || k != 0 {
		t.Fatalf("tasks/cancel at the servers: ext %d, core %d (want none)", n, k)
	}
	if b.ext.Running() != 1 || b.core.Running() != 1 {
		t.Fatalf("server tasks running after both replicas closed: ext %d, core %d (want 1 each)", b.ext.Running(), b.core.Running())
	}
}
