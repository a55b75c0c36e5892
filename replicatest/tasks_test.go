package replicatest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeCallInterrupted is gateway.CodeCallInterrupted: the answer about a
// call whose replica stopped before the call ended.
const codeCallInterrupted = -32015

// TestServeTasksReplicaKilled: two `mcpadapter serve` replicas share
// their sessions and tasks in Redis (and again in PostgreSQL) behind a
// round-robin balancer. A go-sdk client at 2025-11-25 asks replica A for
// two tasks ("task" in tools/call): a slow tool of a server without
// tasks, which the gateway runs itself, and a tool of a 2025-11-25
// server with tasks, which makes its own. A is killed with SIGKILL while
// both run. Replica B answers tasks/get of the first with failed, and
// tasks/result with -32015 saying to repeat the call; the server ran the
// call once. B follows the server's own task to its result.
func TestServeTasksReplicaKilled(t *testing.T) {
	for _, store := range []string{"redis", "postgres"} {
		t.Run(store, func(t *testing.T) {
			plainSrv, st := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
			plain := testserver.StartStreamable(t, plainSrv)
			core := taskserver.New(taskserver.Options{Core: true, PollInterval: 20})
			t.Cleanup(core.Close)
			coreTS := httptest.NewServer(core.Handler())
			t.Cleanup(coreTS.Close)
			e := newServeEnv(t, 1, startDB(t, store).URL)
			cfg := fmt.Sprintf(`{"mcpServers": {"plain": {"url": %q}, "core": {"url": %q}}}`, plain.URL, coreTS.URL)
			if err := os.WriteFile(filepath.Join(e.dir, "mcp.json"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			a, b := e.start(), e.start()
			rr, lbURL := newRoundRobin(t, a.url, b.url)
			ctx := serveCtx(t, 2*time.Minute)
			tr := sharedTransport()
			t.Cleanup(tr.CloseIdleConnections)
			principal := e.principals[0]
			c := mcp.NewClient(&mcp.Implementation{Name: principal, Version: "1"}, nil)
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lbURL, HTTPClient: &http.Client{Transport: bearerTransport{tr, e.bearer[principal]}}, DisableStandaloneSSE: true},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			rpc := &taskRPC{ctx: ctx, url: lbURL, session: cs.ID(), bearer: e.bearer[principal], tr: tr}
			startOnA := func(tool, args string) string {
				t.Helper()
				rr.aim(0)
				res, code, msg := rpc.do("tools/call", `{"name":"`+tool+`","arguments":`+args+`,"task":{"ttl":120000}}`)
				if code != 0 {
					t.Fatalf("tools/call %s as a task: %d %s", tool, code, msg)
				}
				if on, _ := rr.lastOf(cs.ID()); on != 0 {
					t.Fatalf("tools/call %s was answered by slot %d, not A", tool, on)
				}
				var r struct {
					Task struct {
						TaskID string `json:"taskId"`
					} `json:"task"`
				}
				if json.Unmarshal(res, &r) != nil || r.Task.TaskID == "" {
					t.Fatalf("tools/call %s: no task: %s", tool, res)
				}
				return r.Task.TaskID
			}
			lost := startOnA("plain_slow", `{"ms":8000}`)
			started := time.Now()
			own := startOnA("core_work", `{"steps":80,"stepMs":100}`)
			if err := st.Wait(serveCtx(t, 20*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatal("the server's slow call never started")
			}
			for deadline := time.Now().Add(20 * time.Second); core.Started("work") == 0; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the server's task never started")
				}
			}
			time.Sleep(2500 * time.Millisecond) // two beats: A's record of its task holds the server's task id
			a.kill()
			killed := time.Now()

			rpc.waitStatus(t, lost, "failed", 30*time.Second)
			t.Logf("B answered the lost call as failed %v after the kill", time.Since(killed).Round(time.Millisecond))
			if _, code, msg := rpc.do("tasks/result", `{"taskId":"`+lost+`"}`); code != codeCallInterrupted || !strings.Contains(msg, "repeat the call") {
				t.Fatalf("tasks/result of the lost call: %d %q; want %d saying to repeat the call", code, msg, codeCallInterrupted)
			}
			rpc.waitStatus(t, own, "completed", 60*time.Second)
			res, code, msg := rpc.do("tasks/result", `{"taskId":"`+own+`"}`)
			if code != 0 || !strings.Contains(string(res), "done: 80 steps") {
				t.Fatalf("tasks/result of the server's own task on B: %d %s %s", code, msg, res)
			}
			time.Sleep(time.Until(started.Add(9 * time.Second))) // the lost call would have ended
			if n := st.Calls("slow"); n != 1 {
				t.Fatalf("the server ran the slow call %d times; want once", n)
			}
			if res, _, _ := rpc.do("tasks/get", `{"taskId":"`+lost+`"}`); !strings.Contains(string(res), `"failed"`) {
				t.Fatalf("tasks/get of the lost call later: %s", res)
			}
		})
	}
}

// taskRPC sends JSON-RPC requests of a 2025-11-25 session over HTTP, as
// a principal: the requests about tasks the go-sdk client does not send.
type taskRPC struct {
	ctx          context.Context
	url, session string
	bearer       string
	tr           http.RoundTripper
	n            int
	modern       bool // 2026-07-28: no session; each request says who it is
}

// do sends method and returns its result, or its error's code and
// message; a failed exchange is code -1.
func (r *taskRPC) do(method, params string) (json.RawMessage, int, string) {
	r.n++
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		return nil, -1, err.Error()
	}
	if r.modern {
		p["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: map[string]any{"name": "raw", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}
	}
	pb, _ := json.Marshal(p)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, r.n, method, pb)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.bearer)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.modern {
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name, _ := p["name"].(string); name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	} else {
		req.Header.Set("Mcp-Session-Id", r.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := r.tr.RoundTrip(req)
	if err != nil {
		return nil, -1, err.Error()
	}
	defer resp.Body.Close()
	var reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	found := false
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() && !found {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(line), &reply) == nil && string(reply.ID) == fmt.Sprint(r.n) {
				found = true
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		found = json.Unmarshal(b, &reply) == nil && len(reply.ID) > 0
		if !found {
			return nil, -1, fmt.Sprintf("%s: %s", resp.Status, b)
		}
	}
	if !found {
		return nil, -1, resp.Status + ": no answer"
	}
	if reply.Error != nil {
		return nil, reply.Error.Code, reply.Error.Message
	}
	return reply.Result, 0, ""
}

// waitStatus sends tasks/get until task id's status is want, within d;
// a status that ends the task otherwise fails the test.
func (r *taskRPC) waitStatus(t *testing.T, id, want string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		res, code, msg := r.do("tasks/get", `{"taskId":"`+id+`"}`)
		var got struct {
			Status  string `json:"status"`
			Message string `json:"statusMessage"`
		}
		if code == 0 && json.Unmarshal(res, &got) == nil {
			if got.Status == want {
				return
			}
			if got.Status != "working" && got.Status != "input_required" {
				t.Fatalf("task %s is %s (%s); want %s", id, got.Status, got.Message, want)
			}
		}
		last = fmt.Sprintf("%d %s %s", code, msg, res)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("task %s was not %s within %v; last tasks/get: %s", id, want, d, last)
}
