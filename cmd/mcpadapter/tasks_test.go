package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestCallTaskAndTasksCommands: "call" follows a task and shows its
// statuses; "tasks get" and "tasks cancel" reach a task another process
// started; "tasks list" says a 2026-07-28 server has none to list.
func TestCallTaskAndTasksCommands(t *testing.T) {
	srv := taskserver.New(taskserver.Options{PollInterval: 30, ShowSteps: true})
	t.Cleanup(srv.Close)
	url := testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())

	cli(t, "", "call", "--target", url, "work", "--arg", "steps=3", "--arg", "stepMs=50").Must(t, 0,
		[]string{"done: 3 steps"}, []string{"work: running as task task-", "task working: step 2 of 3", "task completed"})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "work", json.RawMessage(`{"steps":300,"stepMs":100}`), &mcpadapter.CallOptions{
			OnTask: func(h mcpadapter.TaskHandle) { ids <- h.TaskID }})
		done <- err
	}()
	var id string
	select {
	case id = <-ids:
	case err := <-done:
		t.Fatalf("the call ended before its task was made: %v", err)
	}
	cli(t, "", "tasks", "get", url, id).Must(t, 0, []string{id + ": working (step "}, nil)
	cli(t, "", "tasks", "cancel", url, id).Must(t, 0, []string{id + ": cancel acknowledged"}, nil)
	cli(t, "", "tasks", "get", url, id, "--json").Must(t, 0, []string{`"status": "cancelled"`}, nil)
	var tce *mcpadapter.TaskCancelledError
	if err := <-done; !errors.As(err, &tce) || tce.Requested {
		t.Errorf("the call whose task was cancelled elsewhere: %v", err)
	}
	cli(t, "", "tasks", "get", url, "no-such-task").Must(t, 2, nil, []string{"unknown task no-such-task"})
	cli(t, "", "tasks", "list", url).Must(t, 2, nil, []string{"2026-07-28", "no tasks/list"})
	cli(t, "", "tasks", "stop", url).Must(t, 2, nil, []string{`unknown tasks command "stop"`})
}
