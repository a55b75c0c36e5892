package mcpadapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// taskChildEnv names the task server a re-executed test binary calls as
// the host that is killed mid-task (see taskChild).
const taskChildEnv = "MCPADAPTER_TEST_TASK_CHILD"

// taskChild is the host process of TestTaskSurvivesHostKill: it calls the
// work tool, prints the task handle as one JSON line when the server made
// the task, and keeps polling until it is killed. It returns the exit
// code.
func taskChild(url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := c.Tools(ctx); err != nil { // 2025-11-25: the tool's taskSupport
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = c.CallTool(ctx, "work", json.RawMessage(`{"steps":30,"stepMs":100}`), &mcpadapter.CallOptions{
		Task: mcpadapter.TaskPrefer,
		OnTask: func(h mcpadapter.TaskHandle) {
			b, _ := json.Marshal(h)
			fmt.Println(string(b))
		},
	})
	fmt.Fprintln(os.Stderr, "the call returned, it should have been killed:", err)
	return 3
}

// TestTaskSurvivesHostKill: a host process starts a task and is killed
// (SIGKILL) while it runs; a fresh client in another process resumes the
// task from its handle, plain JSON, and gets the result; the server
// started the work once. Both eras: the 2026-07-28 Tasks extension over
// stateless HTTP, 2025-11-25 tasks over HTTP sessions (the resuming
// client has a session of its own).
func TestTaskSurvivesHostKill(t *testing.T) {
	t.Parallel()
	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		srv := newTaskServer(t, taskserver.Options{PollInterval: 50})
		hostKill(t, srv, testserver.ServeStreamable(t, srv.MCP, testserver.Stateless()), mcpadapter.TaskProtocolExtension)
	})
	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		srv, url := coreServer(t, 50)
		hostKill(t, srv, url, mcpadapter.TaskProtocolCore)
	})
}

func hostKill(t *testing.T, srv *taskserver.Server, url string, proto mcpadapter.TaskProtocol) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), taskChildEnv+"="+url)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("no task handle from the host: %v", err)
	}
	// Let the host poll a little, then kill it mid-task.
	deadline := time.Now().Add(10 * time.Second)
	var h mcpadapter.TaskHandle
	if err := json.Unmarshal(line, &h); err != nil || h.Protocol != proto {
		t.Fatalf("handle %q: %v, want protocol %s", line, err, proto)
	}
	for len(srv.Gets(h.TaskID)) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if got := srv.Status(h.TaskID); got != "working" {
		t.Fatalf("task %s is %q after the host died, want working", h.TaskID, got)
	}

	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ResumeTask(ctx, h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "done: 30 steps" {
		t.Errorf("resumed result %q", res.Text())
	}
	if n := srv.Started("work"); n != 1 {
		t.Errorf("the work started %d times, want once", n)
	}
}
