package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// extTargets are the 2026-07-28 task server in-process and over
// stateless streamable HTTP.
func extTargets() map[string]func(t *testing.T, s *taskserver.Server) any {
	return map[string]func(t *testing.T, s *taskserver.Server) any{
		"inprocess": func(t *testing.T, s *taskserver.Server) any { return s.MCP },
		"http": func(t *testing.T, s *taskserver.Server) any {
			return testserver.ServeStreamable(t, s.MCP, testserver.Stateless())
		},
	}
}

func newTaskServer(t *testing.T, opts taskserver.Options) *taskserver.Server {
	s := taskserver.New(opts)
	t.Cleanup(s.Close)
	return s
}

// extTool lists the server's tools and returns the named one.
func extTool(t *testing.T, ctx context.Context, a *mcpadapter.Adapter, name string) *mcpadapter.Tool {
	t.Helper()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("tool %q not listed", name)
	return nil
}

// TestExtTaskCompletes: a 2026-07-28 server answers with a task (Tasks
// extension), the call polls it and returns its result; the server's
// pollInterval is honoured (counted: a task done well before the first
// poll is polled once; with a short interval, no two polls come closer
// than most of it).
func TestExtTaskCompletes(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, tc := range []struct {
				interval, steps, stepMs int64
				polls                   func(n int) bool
				want                    string
			}{
				{interval: 1000, steps: 1, stepMs: 50, polls: func(n int) bool { return n == 1 }, want: "once"},
				{interval: 40, steps: 5, stepMs: 40, polls: func(n int) bool { return n >= 2 && n <= 12 }, want: "2 to 12 times"},
			} {
				srv := newTaskServer(t, taskserver.Options{PollInterval: tc.interval})
				a, err := mcpadapter.New(target(t, srv), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				var log statusLog
				var h mcpadapter.TaskHandle
				args, _ := json.Marshal(map[string]int64{"steps": tc.steps, "stepMs": tc.stepMs})
				res, err := extTool(t, ctx, a, "work").CallWith(ctx, args, &mcpadapter.CallOptions{
					Progress: log.progress, OnTask: func(th mcpadapter.TaskHandle) { h = th }})
				if err != nil {
					t.Fatal(err)
				}
				if want := "done: " + string(rune('0'+tc.steps)) + " steps"; res.IsError || res.Text() != want {
					t.Fatalf("result %q (isError %v), want %q", res.Text(), res.IsError, want)
				}
				if h.Protocol != mcpadapter.TaskProtocolExtension || h.TaskID == "" {
					t.Fatalf("handle %+v", h)
				}
				gets := srv.Gets(h.TaskID)
				if !tc.polls(len(gets)) {
					t.Errorf("interval %dms: polled %d times, want %s", tc.interval, len(gets), tc.want)
				}
				for i := 1; i < len(gets); i++ {
					if gap := gets[i].Sub(gets[i-1]); gap < time.Duration(tc.interval)*time.Millisecond*3/4 {
						t.Errorf("polls %d and %d only %v apart; the server advised %dms", i-1, i, gap, tc.interval)
					}
				}
				if srv.Started("work") != 1 {
					t.Errorf("work started %d times", srv.Started("work"))
				}
				// The extension's ttlMs and pollIntervalMs, read as TTL and PollInterval.
				got, err := a.Client().GetTask(ctx, h.TaskID)
				if err != nil || got.Status != mcpadapter.TaskCompleted || got.TTL == nil || *got.TTL != 3600000 || got.PollInterval == nil || *got.PollInterval != tc.interval {
					t.Errorf("GetTask: %+v %v", got, err)
				}
				if !log.seen(mcpadapter.TaskWorking) || !log.seen(mcpadapter.TaskCompleted) {
					t.Errorf("statuses: %v", log.statuses)
				}
			}
		})
	}
}

// TestExtTaskFailsAndForgotten: a failed task is an error result with
// the server's words; a task the server forgot is a *TaskError naming
// the task and tasks/get.
func TestExtTaskFailsAndForgotten(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
			a, err := mcpadapter.New(target(t, srv), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			res, err := extTool(t, ctx, a, "fail").Call(ctx, json.RawMessage(`{"stepMs":10}`))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Text(), "disk on fire") {
				t.Errorf("failed task: isError=%v %q", res.IsError, res.Text())
			}
			_, err = extTool(t, ctx, a, "forget").Call(ctx, nil)
			var te *mcpadapter.TaskError
			if !errors.As(err, &te) || te.Op != "tasks/get" || te.Handle.TaskID == "" || !strings.Contains(err.Error(), "unknown task") {
				t.Fatalf("want a *TaskError from tasks/get saying the task is unknown, got %v", err)
			}
		})
	}
}

// TestExtTaskCancel: the call's context ends, tasks/cancel goes out, the
// error says the task was cancelled on the server, and no work is left
// running.
func TestExtTaskCancel(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
			a, err := mcpadapter.New(target(t, srv), nil)
			if err != nil {
				t.Fatal(err)
			}
			callCtx, stop := context.WithCancel(ctx)
			var id string
			_, err = extTool(t, ctx, a, "work").CallWith(callCtx, json.RawMessage(`{"steps":100,"stepMs":100}`), &mcpadapter.CallOptions{
				OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; stop() }})
			var tce *mcpadapter.TaskCancelledError
			if !errors.As(err, &tce) || !tce.Confirmed || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled on the server") {
				t.Fatalf("want a confirmed *TaskCancelledError, got %v", err)
			}
			if got := srv.Status(id); got != "cancelled" || srv.Cancels() != 1 || srv.Running() != 0 {
				t.Errorf("server: status %q, %d cancels, %d running", got, srv.Cancels(), srv.Running())
			}
			if err := a.Close(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestExtTaskInput: a task waiting for input becomes the elicitation
// interrupt; its pending call is plain data (JSON) that a fresh client
// resumes, and the answer reaches the task (tasks/update).
func TestExtTaskInput(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
			tgt := target(t, srv)
			a, err := mcpadapter.New(tgt, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			_, err = extTool(t, ctx, a, "ask").Call(ctx, json.RawMessage(`{"stepMs":10}`))
			var ire *mcpadapter.InputRequiredError
			if !errors.As(err, &ire) || ire.Pending.Task == nil || len(ire.Pending.Requests) != 1 || ire.Pending.Requests[0].Message != "What is your name?" {
				t.Fatalf("want the task's question as an interrupt, got %v", err)
			}
			saved, err := json.Marshal(ire.Pending)
			if err != nil {
				t.Fatal(err)
			}
			a.Close()

			b, err := mcpadapter.New(tgt, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var pending mcpadapter.PendingCall
			if err := json.Unmarshal(saved, &pending); err != nil {
				t.Fatal(err)
			}
			res, err := extTool(t, ctx, b, "ask").Resume(ctx, &pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
				"name": {Action: elicitation.Accept, Content: map[string]any{"name": "Ada"}}}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "hello Ada (accept)" {
				t.Errorf("result %q", res.Text())
			}
			if srv.Started("ask") != 1 {
				t.Errorf("ask started %d times", srv.Started("ask"))
			}
		})
	}
}

// TestExtTaskInputHandler: without ElicitInterrupt the client's own
// ElicitationHandler answers the task's question.
func TestExtTaskInputHandler(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "ask", json.RawMessage(`{"stepMs":10}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "hello Grace (accept)" {
		t.Errorf("result %q", res.Text())
	}
}

// TestExtTaskAsksAtCreation: a task that waits for input already when
// the server answers the tools/call shows its questions with the task
// (resultType "task" and inputRequests). The client's ElicitationHandler
// answers them with tasks/update, once; the tools/call is never sent
// again with the answers, which would make a second task and run the
// tool twice.
func TestExtTaskAsksAtCreation(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var srv *taskserver.Server
			srv = newTaskServer(t, taskserver.Options{PollInterval: 20, OnCreate: func(ctx context.Context, id string) {
				// The tools/call is answered once the task asks.
				for srv.Status(id) != "input_required" && ctx.Err() == nil {
					time.Sleep(2 * time.Millisecond)
				}
			}})
			var asked atomic.Int32
			var handle mcpadapter.TaskHandle
			c, err := mcpadapter.NewClient(target(t, srv), &mcpadapter.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "ask", json.RawMessage(`{}`), &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) { handle = h }})
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != "hello Grace (accept)" || handle.TaskID == "" {
				t.Errorf("result %q, task %q", res.Text(), handle.TaskID)
			}
			if n, q, u := srv.Started("ask"), asked.Load(), srv.Updates(); n != 1 || q != 1 || u != 1 {
				t.Errorf("ask started %d times, its question asked %d times, %d tasks/update; want 1 of each", n, q, u)
			}
		})
	}
}

// TestExtTaskNever: TaskNever does not declare the extension, so the
// server runs the call at once.
func TestExtTaskNever(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{})
	c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{Tasks: &mcpadapter.TaskOptions{Mode: mcpadapter.TaskNever}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "work", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "plain call of work" || srv.Started("work") != 0 {
		t.Errorf("result %q, %d tasks started", res.Text(), srv.Started("work"))
	}
	if _, err := c.ListTasks(ctx); !errors.Is(err, mcpadapter.ErrNoTaskList) {
		t.Errorf("ListTasks on 2026-07-28: %v", err)
	}
}

// TestExtTaskClose: closing the client ends a task call at once, lets go
// of the task (which goes on on the server: Close is not a cancel) and
// leaves no goroutine behind; the handle resumes it.
func TestExtTaskClose(t *testing.T) {
	// Not parallel: it counts goroutines.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 5000})
	url := testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())
	before := runtime.NumGoroutine()
	c, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	made := make(chan mcpadapter.TaskHandle, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "work", json.RawMessage(`{"steps":4,"stepMs":100}`), &mcpadapter.CallOptions{
			OnTask: func(h mcpadapter.TaskHandle) { made <- h }})
		done <- err
	}()
	h := <-made
	time.Sleep(50 * time.Millisecond) // into the 5s wait for the next poll
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var te *mcpadapter.TaskError
		if !errors.As(err, &te) || !errors.Is(err, mcpadapter.ErrTaskDetached) || te.Handle.TaskID != h.TaskID {
			t.Fatalf("want a *TaskError with ErrTaskDetached, got %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the task call still waits after Close")
	}
	if got := srv.Status(h.TaskID); got != "working" {
		t.Errorf("task %q after Close, want working (not cancelled)", got)
	}
	testenv.WaitGoroutines(t, before)
	// The handle still reaches the task.
	d, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{Tasks: &mcpadapter.TaskOptions{MaxPoll: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	res, err := d.ResumeTask(ctx, h, nil)
	if err != nil || res.Text() != "done: 4 steps" {
		t.Fatalf("resumed: %v %v", res, err)
	}
}

// TestTaskConfig: an mcpServers config sets the task mode per server and
// per tool ("tasks"); a bad mode is an error naming its JSON path.
func TestTaskConfig(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	url := testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())
	path, args, env := testenv.EverythingStdio(t)
	adapter := func(servers map[string]any) *mcpadapter.Adapter {
		doc, _ := json.Marshal(map[string]any{"mcpServers": servers})
		cfg, err := mcpadapter.ParseConfig(doc)
		if err != nil {
			t.Fatal(err)
		}
		a, err := mcpadapter.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	// Two groups: a handshake-era server would pull a group down to
	// 2025-11-25, where the Tasks extension is not spoken.
	a := adapter(map[string]any{"plain": map[string]any{"url": url, "tasks": "never"}, "tasks": map[string]any{"url": url}})
	b := adapter(map[string]any{"everything": map[string]any{"command": path, "args": args, "env": envMap(env),
		"tools": map[string]any{"simulate-research-query": map[string]any{"tasks": "never"}}}})
	for tool, want := range map[string]string{
		"plain_work": "plain call of work", // the server's mode: no task
		"tasks_work": "done: 1 steps",      // the default: the server makes a task
	} {
		res, err := extTool(t, ctx, a, tool).Call(ctx, json.RawMessage(`{"stepMs":10}`))
		if err != nil || res.Text() != want {
			t.Errorf("%s: %v %v, want %q", tool, res, err, want)
		}
	}
	// The tool's mode: a plain call, which the server refuses.
	res, err := extTool(t, ctx, b, "simulate-research-query").Call(ctx, json.RawMessage(`{"topic":"x"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "requires task augmentation") {
		t.Errorf("tasks never on the tool: %v %v", res, err)
	}

	_, err = mcpadapter.ParseConfig([]byte(`{"mcpServers":{"s":{"url":"http://127.0.0.1:1/mcp","tools":{"t":{"tasks":"sometimes"}}}}}`))
	var ce *mcpadapter.ConfigError
	if !errors.As(err, &ce) || ce.Path != "mcpServers.s.tools.t.tasks" || !strings.Contains(err.Error(), `unknown task mode "sometimes"`) {
		t.Errorf("bad mode: %v", err)
	}
}

// envMap turns KEY=value pairs into a config's "env" object.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
