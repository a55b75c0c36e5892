package gateway

import (
	"context"
	"fmt"
	"strings"
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
