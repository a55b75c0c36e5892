package replicatest

import (
	"encoding/json"
	"fmt"
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

// TestServeTasksOtherPrincipal: two `mcpadapter serve` replicas share
// their tasks in Redis. Alice's tasks (a call the gateway runs, and a
// server's own task), made on A by a client of either era, are "unknown
// task" to Bob on both replicas in every task request (tasks/get,
// tasks/result, tasks/cancel, and tasks/update of 2026-07-28); Bob's
// tasks/list shows none of them; they still run for Alice.
func TestServeTasksOtherPrincipal(t *testing.T) {
	plainSrv, _ := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	plain := testserver.StartStreamable(t, plainSrv)
	core := taskserver.New(taskserver.Options{Core: true, PollInterval: 20})
	t.Cleanup(core.Close)
	coreTS := httptest.NewServer(core.Handler())
	t.Cleanup(coreTS.Close)
	e := newServeEnv(t, 2, startDB(t, "redis").URL)
	cfg := fmt.Sprintf(`{"mcpServers": {"plain": {"url": %q}, "core": {"url": %q}}}`, plain.URL, coreTS.URL)
	if err := os.WriteFile(filepath.Join(e.dir, "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := e.start(), e.start()
	ctx := serveCtx(t, 3*time.Minute)
	tr := sharedTransport()
	t.Cleanup(tr.CloseIdleConnections)
	alice, bob := e.principals[0], e.principals[1] // an API key, a JWT
	client := func(who string, modern bool) *taskRPC {
		r := &taskRPC{ctx: ctx, url: a.url, bearer: e.bearer[who], tr: tr, modern: modern}
		if modern {
			return r
		}
		c := mcp.NewClient(&mcp.Implementation{Name: who, Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.url, HTTPClient: &http.Client{Transport: bearerTransport{tr, e.bearer[who]}}, DisableStandaloneSSE: true},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		r.session = cs.ID()
		return r
	}
	for _, modern := range []bool{false, true} {
		t.Run(map[bool]string{false: "2025-11-25", true: "2026-07-28"}[modern], func(t *testing.T) {
			al, bo := client(alice, modern), client(bob, modern)
			var ids []string
			for _, call := range []string{`{"name":"plain_slow","arguments":{"ms":30000}`, `{"name":"core_work","arguments":{"steps":600,"stepMs":100}`} {
				res, code, msg := al.do("tools/call", call+`,"task":{"ttl":120000}}`)
				var r struct {
					TaskID string `json:"taskId"`
					Task   struct {
						TaskID string `json:"taskId"`
					} `json:"task"`
				}
				if code != 0 || json.Unmarshal(res, &r) != nil || r.TaskID+r.Task.TaskID == "" {
					t.Fatalf("alice's task %s: %d %s %s", call, code, msg, res)
				}
				ids = append(ids, r.TaskID+r.Task.TaskID)
			}
			methods := []string{"tasks/get", "tasks/result", "tasks/cancel"}
			if modern {
				methods = append(methods, "tasks/update")
			}
			for _, u := range []string{a.url, b.url} {
				bo.url = u
				for _, id := range ids {
					for _, m := range methods {
						params := `{"taskId":"` + id + `"}`
						if m == "tasks/update" {
							params = `{"taskId":"` + id + `","inputResponses":{"q1":{"action":"accept","content":{"name":"Eve"}}}}`
						}
						if res, code, msg := bo.do(m, params); code == 0 || !strings.Contains(msg, "unknown task") {
							t.Fatalf("bob's %s of alice's task %s at %s: %d %q %s", m, id, u, code, msg, res)
						}
					}
				}
				res, code, msg := bo.do("tasks/list", `{}`)
				if code != 0 || !strings.Contains(string(res), `"tasks":[]`) {
					t.Fatalf("bob's tasks/list at %s: %d %s %s", u, code, msg, res)
				}
			}
			al.url = b.url
			for _, id := range ids {
				res, code, msg := al.do("tasks/get", `{"taskId":"`+id+`"}`)
				if code != 0 || !strings.Contains(string(res), `"working"`) {
					t.Fatalf("alice's task %s on B after bob's requests: %d %s %s", id, code, msg, res)
				}
				if _, code, msg := al.do("tasks/cancel", `{"taskId":"`+id+`"}`); code != 0 {
					t.Fatalf("alice cancels her task %s: %d %s", id, code, msg)
				}
			}
		})
	}
}
