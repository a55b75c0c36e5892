package mcpadapter_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// taskHost is a stdio MCP server written in sh that calls itself
// "taskhost" and keeps one finished task, t1: tasks/get of any id
// answers t1's state, tasks/result its result. Its starts are counted
// in the returned file.
func taskHost(t *testing.T) (mcpadapter.Command, string) {
	t.Helper()
	count := filepath.Join(t.TempDir(), "starts")
	script := `echo start >> "$0"
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
  case "$line" in
  *'"server/discover"'*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}\n' "$id" ;;
  *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"taskhost","version":"1"}}}\n' "$id" ;;
  *'"tasks/get"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"taskId":"t1","status":"completed","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}\n' "$id" ;;
  *'"tasks/result"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done by t1"}]}}\n' "$id" ;;
  *'"id":'*) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done`
	return mcpadapter.Command{Path: "/bin/sh", Args: []string{"-c", script, count}}, count
}

// TestNameFromServerFreshClientTasks: a NameFromServer client that has
// not connected yet (a process following a task another one started)
// knows its server's name where a task or a pending call is checked
// against it: ResumeTask of a handle naming the server follows the task,
// GetTask's errors name the server, Client.Resume of a pending call made
// on that server is not denied as made on another.
func TestNameFromServerFreshClientTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := taskHost(t)
	fresh := func() *mcpadapter.Client {
		c, err := mcpadapter.NewClient(cmd, &mcpadapter.ClientOptions{NameFromServer: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}

	c := fresh()
	res, err := c.ResumeTask(ctx, mcpadapter.TaskHandle{Server: "taskhost", Tool: "work", TaskID: "t1"}, nil)
	if err != nil || res == nil || !strings.Contains(res.Text(), "done by t1") {
		t.Errorf("ResumeTask on a client not yet connected: %v, %v", res, err)
	}
	if c.Name() != "taskhost" {
		t.Errorf("Name after ResumeTask %q", c.Name())
	}
	if _, err := c.ResumeTask(ctx, mcpadapter.TaskHandle{Server: "elsewhere", TaskID: "t1"}, nil); err == nil || !strings.Contains(err.Error(), `this client reaches "taskhost"`) {
		t.Errorf("ResumeTask of another server's task: %v", err)
	}

	c = fresh()
	_, err = c.GetTask(ctx, "t2") // the server answers with t1's state
	var te *mcpadapter.TaskError
	if !errors.As(err, &te) || te.Handle.Server != "taskhost" {
		t.Errorf("GetTask on a client not yet connected: %v (handle %+v)", err, te)
	}

	ad, err := mcpadapter.New(fresh(), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	pending := &mcpadapter.PendingCall{ID: "p1", Server: "taskhost", Tool: "work"}
	_, err = ad.Group().Clients()[0].Resume(ctx, pending, nil)
	var denied *mcpadapter.ResumeDeniedError
	if errors.As(err, &denied) && denied.Reason == mcpadapter.DeniedTool {
		t.Errorf("Resume of a call made on this server, on a client not yet connected: %v", err)
	}
	if n := starts(t, count); n != 3 {
		t.Errorf("%d starts, want one per client", n)
	}
}

// TestNameFromServerTasksRaceFirstConnect: task requests made while
// another goroutine makes the client's first connection read the name
// that connection settles (under -race: no unsynchronised read of it).
func TestNameFromServerTasksRaceFirstConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, count := taskHost(t)
	c := nameFromServerClient(t, cmd)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var err error
			switch i % 4 {
			case 0:
				_, err = c.Connect(ctx)
			case 1:
				_, err = c.GetTask(ctx, "t1")
			case 2:
				_, err = c.CancelTask(ctx, "t1")
			case 3:
				_, err = c.ResumeTask(ctx, mcpadapter.TaskHandle{Server: "taskhost", TaskID: "t1"}, nil)
			}
			if err != nil {
				t.Errorf("goroutine %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if c.Name() != "taskhost" || starts(t, count) != 1 {
		t.Errorf("Name %q, %d starts", c.Name(), starts(t, count))
	}
}
