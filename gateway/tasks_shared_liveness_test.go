package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// slowStore is a replica's view of a shared TaskStore that answers reads
// of task records late, as a store far away or a busy one does.
type slowStore struct {
	TaskStore
	delay time.Duration
}

func (s *slowStore) LoadTask(ctx context.Context, key string) ([]byte, error) {
	if strings.HasPrefix(key, "task.") {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.TaskStore.LoadTask(ctx, key)
}

// TestSharedTasksSlowReplicaAlive: replica A runs many calls itself and
// its store answers reads of task records late, so that looking at all
// of them takes longer than a liveness record lasts. A stays alive to
// replica B: B never answers one of A's running calls as lost (a client
// told so would repeat a call that is still running), and the server
// runs each call once.
func TestSharedTasksSlowReplicaAlive(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	slow := &slowStore{TaskStore: shared, delay: 250 * time.Millisecond}
	_, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: slow}, Sessions: &SessionOptions{Store: sessions}})
	_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	const n = 30 // 30 reads of 250ms: 7.5s, past replicaTTL
	var ids []string
	for range n {
		ids = append(ids, c.startTask("plain_slow", `{"ms":20000}`))
	}
	if err := b.plain.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Calls("slow") > 0 }); err != nil {
		t.Fatal("the server's calls never started")
	}
	c.url = urlB
	deadline := time.Now().Add(3 * replicaTTL / 2)
	for time.Now().Before(deadline) {
		for _, id := range []string{ids[0], ids[n-1]} {
			if got := c.call("tasks/get", `{"taskId":"`+id+`"}`); got["status"] != "working" {
				t.Fatalf("B answers a call running on A, which is alive and slow: %v", got)
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	if got := fmt.Sprint(b.plain.Calls("slow")); got == "0" {
		t.Fatal("no call ran")
	}
}

// flakyStore is a replica's view of a shared TaskStore whose writes of
// task records and indexes fail while down is set (its liveness record
// is still written: the replica is alive).
type flakyStore struct {
	TaskStore
	down atomic.Bool
}

func (f *flakyStore) failing(key string) bool {
	return f.down.Load() && !strings.HasPrefix(key, "replica.")
}

func (f *flakyStore) AddTask(ctx context.Context, key string, rec []byte, ttl time.Duration) (bool, error) {
	if f.failing(key) {
		return false, errDead
	}
	return f.TaskStore.AddTask(ctx, key, rec, ttl)
}

func (f *flakyStore) ReplaceTask(ctx context.Context, key string, old, rec []byte, ttl time.Duration) (bool, error) {
	if f.failing(key) {
		return false, errDead
	}
	return f.TaskStore.ReplaceTask(ctx, key, old, rec, ttl)
}

// TestSharedTasksEndWrittenLater: the store fails while replica A's call
// ends, so that A cannot write the task's end; once the store is back, A
// writes it, and replica B answers the task completed with its result
// (not "working" for as long as A lives) and its principal's cap is
// free again.
func TestSharedTasksEndWrittenLater(t *testing.T) {
	b := startTaskBackends(t)
	shared := &MemoryTaskStore{}
	sessions := &MemorySessionStore{}
	flaky := &flakyStore{TaskStore: shared}
	o := &TaskOptions{MaxPerPrincipal: 1}
	ga, urlA := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: flaky, MaxPerPrincipal: 1}, Sessions: &SessionOptions{Store: sessions}})
	_, urlB := taskGateway(t, b, &Options{Tasks: &TaskOptions{Store: shared, MaxPerPrincipal: o.MaxPerPrincipal}, Sessions: &SessionOptions{Store: sessions}})
	c := newRawRPC(t, urlA, v0728, "alice", `{}`)
	id := c.startTask("plain_slow", `{"ms":500}`)
	flaky.down.Store(true)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ga.tasks.mu.Lock()
		lt := ga.tasks.tasks[id]
		ga.tasks.mu.Unlock()
		if st, _, _, _, _, _, _ := lt.snapshot(); st == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never ended on A")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // A's writes of the end fail
	flaky.down.Store(false)
	c.url = urlB
	got := c.waitStatus(id, "completed")
	if !strings.Contains(fmt.Sprint(got["result"]), "slept") {
		t.Fatalf("the result on B: %v", got)
	}
	c.startTask("plain_echo", `{"text":"again"}`)
}

// TestSharedTasksResultNearBound: a server answers a call run as a task
// with an error of 900 KiB (go-sdk makes it a result marked isError);
// replica B reads the task's record and answers it completed with the
// whole result, for clients of both eras.
func TestSharedTasksResultNearBound(t *testing.T) {
	b := startTaskBackends(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "huge", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "boom", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: -32000, Message: strings.Repeat("x", 900<<10)}
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	b.servers = append(b.servers, Server{Name: "huge", Target: hs.URL})
	_, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, nil)
	for _, v := range []string{v1125, v0728} {
		c := newRawRPC(t, urls[0], v, "alice", `{}`)
		id := c.startTask("huge_boom", `{}`)
		c.url = urls[1]
		got := c.waitStatus(id, "completed")
		res, _ := got["result"].(map[string]any)
		if v == v1125 {
			res = c.call("tasks/result", `{"taskId":"`+id+`"}`)
		}
		if n := strings.Count(fmt.Sprint(res["content"]), "x"); n < 900<<10 || res["isError"] != true {
			t.Fatalf("%s: the result on B has %d x's: %.200v", v, n, res)
		}
	}
}

// TestSharedTasksCapStorm: 40 tasks asked for at once, half on each of
// two replicas, by one principal with MaxPerPrincipal 5: exactly 5 are
// made, and every other is refused with CodeTooManyTasks.
func TestSharedTasksCapStorm(t *testing.T) {
	b := startTaskBackends(t)
	_, urls := sharedTaskGateways(t, b, 2, &MemoryTaskStore{}, &MemorySessionStore{}, &TaskOptions{MaxPerPrincipal: 5})
	var clients []*rawRPC
	for i := range 40 {
		clients = append(clients, newRawRPC(t, urls[i%2], v0728, "alice", `{}`))
	}
	errs := make(chan string, len(clients))
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			errs <- c.callErr("tools/call", `{"name":"plain_slow","arguments":{"ms":3000},"task":{}}`)
		})
	}
	wg.Wait()
	close(errs)
	made := 0
	for e := range errs {
		switch {
		case e == "":
			made++
		case !strings.Contains(e, fmt.Sprint(CodeTooManyTasks)):
			t.Errorf("a refused task: %q", e)
		}
	}
	if made != 5 {
		t.Fatalf("%d tasks made, want 5", made)
	}
}
