package replicatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeTasksRollingRestart: two `mcpadapter serve` replicas (--grace
// 5s) share their sessions and tasks in Redis (and again in PostgreSQL).
// A client, of each era, asks replica A for three tasks: a server's own
// task of 80 steps (a 2025-11-25 server with tasks), a call of 3 s to a
// server without tasks, which the gateway runs itself, and one of 20 s.
// A gets SIGTERM while all three run, and the client turns to replica B
// (as a balancer does with a replica that stops). The 3 s call finishes
// within A's grace period and B answers its result; the 20 s call is
// cancelled at the server when the grace period ends and B answers it
// failed with -32015, saying to repeat it; the server ran each call
// once. B follows the server's own task to its result, and the server
// saw no tasks/cancel.
func TestServeTasksRollingRestart(t *testing.T) {
	for _, store := range []string{"redis", "postgres"} {
		for _, era := range []string{"2025-11-25", "2026-07-28"} {
			t.Run(store+"/"+era, func(t *testing.T) { rollingRestart(t, store, era == "2026-07-28") })
		}
	}
}

func rollingRestart(t *testing.T, store string, modern bool) {
	plainSrv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	plain := testserver.StartStreamable(t, plainSrv)
	core := taskserver.New(taskserver.Options{Core: true, PollInterval: 20})
	t.Cleanup(core.Close)
	coreTS := httptest.NewServer(core.Handler())
	t.Cleanup(coreTS.Close)
	e := newServeEnv(t, 1, startDB(t, store).URL, "--grace", "5s")
	cfg := fmt.Sprintf(`{"mcpServers": {"plain": {"url": %q}, "core": {"url": %q}}}`, plain.URL, coreTS.URL)
	if err := os.WriteFile(filepath.Join(e.dir, "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := e.start(), e.start()
	ctx := serveCtx(t, 2*time.Minute)
	tr := sharedTransport()
	t.Cleanup(tr.CloseIdleConnections)
	principal := e.principals[0]
	rpc := &taskRPC{ctx: ctx, url: a.url, bearer: e.bearer[principal], tr: tr, modern: modern}
	if !modern {
		c := mcp.NewClient(&mcp.Implementation{Name: principal, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.url, HTTPClient: &http.Client{Transport: bearerTransport{tr, e.bearer[principal]}}, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		rpc.session = cs.ID()
	}
	start := func(tool, args string) string {
		t.Helper()
		res, code, msg := rpc.do("tools/call", `{"name":"`+tool+`","arguments":`+args+`,"task":{"ttl":120000}}`)
		if code != 0 {
			t.Fatalf("tools/call %s as a task: %d %s", tool, code, msg)
		}
		var r struct {
			TaskID string `json:"taskId"`
			Task   struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		}
		if json.Unmarshal(res, &r) != nil || r.TaskID+r.Task.TaskID == "" {
			t.Fatalf("tools/call %s: no task: %s", tool, res)
		}
		return r.TaskID + r.Task.TaskID
	}
	own := start("core_work", `{"steps":80,"stepMs":100}`)
	short := start("plain_slow", `{"ms":3000}`)
	long := start("plain_slow", `{"ms":20000}`)
	if err := st.Wait(serveCtx(t, 20*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 2 }); err != nil {
		t.Fatal("the server's slow calls never started")
	}
	for deadline := time.Now().Add(20 * time.Second); core.Started("work") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server's task never started")
		}
	}
	time.Sleep(1500 * time.Millisecond) // A's record of its task holds the server's task id
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termed := time.Now()
	rpc.url = b.url

	rpc.waitStatus(t, short, "completed", 30*time.Second)
	t.Logf("B answered the 3 s call completed %v after SIGTERM", time.Since(termed).Round(time.Millisecond))
	if res, code, msg := rpc.result(short); code != 0 || !strings.Contains(string(res), "slept 3000ms") {
		t.Fatalf("the 3 s call's result on B: %d %s %s", code, msg, res)
	}
	rpc.waitStatus(t, long, "failed", 30*time.Second)
	t.Logf("B answered the 20 s call failed %v after SIGTERM", time.Since(termed).Round(time.Millisecond))
	if _, code, msg := rpc.result(long); code != codeCallInterrupted || !strings.Contains(msg, "repeat the call") {
		t.Fatalf("the 20 s call's outcome on B: %d %q; want %d saying to repeat the call", code, msg, codeCallInterrupted)
	}
	select {
	case <-a.done:
		t.Logf("A ended %v after SIGTERM", time.Since(termed).Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatal("A did not end within 30 s of SIGTERM")
	}
	rpc.waitStatus(t, own, "completed", 60*time.Second)
	t.Logf("B answered the server's task completed %v after SIGTERM", time.Since(termed).Round(time.Millisecond))
	if res, code, msg := rpc.result(own); code != 0 || !strings.Contains(string(res), "done: 80 steps") {
		t.Fatalf("the server's task's result on B: %d %s %s", code, msg, res)
	}
	if n := core.Cancels(); n != 0 {
		t.Fatalf("the server got %d tasks/cancel", n)
	}
	if n, k := st.Calls("slow"), st.Cancellations(); n != 2 || k != 1 {
		t.Fatalf("the server ran the slow calls %d times (want 2), cancelled %d (want 1)", n, k)
	}
}

// result is the outcome of task id: tasks/result at 2025-11-25, the
// result or error tasks/get carries at 2026-07-28.
func (r *taskRPC) result(id string) (json.RawMessage, int, string) {
	if !r.modern {
		return r.do("tasks/result", `{"taskId":"`+id+`"}`)
	}
	res, code, msg := r.do("tasks/get", `{"taskId":"`+id+`"}`)
	if code != 0 {
		return res, code, msg
	}
	var v struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return nil, -1, err.Error()
	}
	if v.Error != nil {
		return nil, v.Error.Code, v.Error.Message
	}
	return v.Result, 0, ""
}
