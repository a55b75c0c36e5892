package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// everythingTargets are server-everything over stdio and streamable HTTP,
// the transports its tasks (2025-11-25) are tested over.
func everythingTargets() map[string]func(t *testing.T) any {
	targets := everythingTransports()
	delete(targets, "sse")
	return targets
}

// researchTool lists server-everything's simulate-research-query, a tool
// whose execution.taskSupport is "required".
func researchTool(t *testing.T, ctx context.Context, a *mcpadapter.Adapter) *mcpadapter.Tool {
	t.Helper()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name == "simulate-research-query" {
			if tl.TaskSupport != "required" {
				t.Fatalf("TaskSupport = %q, want required", tl.TaskSupport)
			}
			return tl
		}
	}
	t.Fatal("simulate-research-query not listed")
	return nil
}

// statusLog collects the task statuses a call's Progress receives.
type statusLog struct {
	mu       sync.Mutex
	statuses []mcpadapter.TaskStatus
	messages []string
	handle   mcpadapter.TaskHandle
}

func (l *statusLog) progress(p mcpadapter.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p.Task != nil {
		l.statuses = append(l.statuses, p.Task.Status)
		l.messages = append(l.messages, p.Task.StatusMessage)
		l.handle = p.Task.Handle
	}
}

func (l *statusLog) seen(s mcpadapter.TaskStatus) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.statuses {
		if x == s {
			return true
		}
	}
	return false
}

// TestEverythingTaskCompletes: a task-only tool, which fails as a plain
// call, runs as a task and returns its report as a normal result; its
// statuses reach the progress function.
func TestEverythingTaskCompletes(t *testing.T) {
	t.Parallel()
	for name, target := range everythingTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := mcpadapter.New(target(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tool := researchTool(t, ctx, a)
			var log statusLog
			var handles []mcpadapter.TaskHandle
			res, err := tool.CallWith(ctx, json.RawMessage(`{"topic":"gophers"}`), &mcpadapter.CallOptions{
				Progress: log.progress,
				OnTask:   func(h mcpadapter.TaskHandle) { handles = append(handles, h) },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.Contains(res.Text(), "# Research Report: gophers") {
				t.Fatalf("result: isError=%v %q", res.IsError, res.Text())
			}
			if len(handles) != 1 || handles[0].TaskID == "" || handles[0].Protocol != mcpadapter.TaskProtocolCore || handles[0].Tool != "simulate-research-query" {
				t.Fatalf("OnTask got %+v", handles)
			}
			if !log.seen(mcpadapter.TaskWorking) || !log.seen(mcpadapter.TaskCompleted) {
				t.Errorf("statuses seen: %v", log.statuses)
			}
			// The server still knows the finished task.
			got, err := a.Client().GetTask(ctx, handles[0].TaskID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != mcpadapter.TaskCompleted {
				t.Errorf("GetTask: status %q", got.Status)
			}
			listed, err := a.Client().ListTasks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tk := range listed {
				found = found || tk.TaskID == handles[0].TaskID
			}
			if !found {
				t.Errorf("ListTasks: %d tasks, not %s", len(listed), handles[0].TaskID)
			}
		})
	}
}

// TestEverythingTaskNever: with TaskNever the call is plain, and the
// server refuses it, as it did before tasks were supported.
func TestEverythingTaskNever(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	path, args, env := testenv.EverythingStdio(t)
	a, err := mcpadapter.New(mcpadapter.Command{Path: path, Args: args, Env: env}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tool := researchTool(t, ctx, a)
	res, err := tool.CallWith(ctx, json.RawMessage(`{"topic":"x"}`), &mcpadapter.CallOptions{Task: mcpadapter.TaskNever})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text(), "task") {
		t.Fatalf("want the server's refusal, got isError=%v %q", res.IsError, res.Text())
	}
}

// TestEverythingTaskCancel: ending the call's context cancels the task on
// the server, and the error says so.
func TestEverythingTaskCancel(t *testing.T) {
	t.Parallel()
	for name, target := range everythingTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := mcpadapter.New(target(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tool := researchTool(t, ctx, a)
			callCtx, stop := context.WithCancel(ctx)
			var id string
			_, err = tool.CallWith(callCtx, json.RawMessage(`{"topic":"cancel me"}`), &mcpadapter.CallOptions{
				OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; stop() },
			})
			var tce *mcpadapter.TaskCancelledError
			if !errors.As(err, &tce) || !tce.Requested || !tce.Confirmed || !errors.Is(err, context.Canceled) {
				t.Fatalf("want a confirmed *TaskCancelledError wrapping context.Canceled, got %v", err)
			}
			if !strings.Contains(err.Error(), "cancelled on the server") {
				t.Errorf("error does not say the task was cancelled on the server: %v", err)
			}
			got, err := a.Client().GetTask(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != mcpadapter.TaskCancelled {
				t.Errorf("server says %q after the cancel", got.Status)
			}
		})
	}
}

// TestEverythingTaskInput: a task that needs the user's answer mid-way
// (input_required; server-everything asks while tasks/result waits) is
// the same interrupt as a plain call's, and the answer finishes it.
func TestEverythingTaskInput(t *testing.T) {
	t.Parallel()
	for name, target := range everythingTargets() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := mcpadapter.New(target(t), &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tool := researchTool(t, ctx, a)
			_, err = tool.Call(ctx, json.RawMessage(`{"topic":"python","ambiguous":true}`))
			var ire *mcpadapter.InputRequiredError
			if !errors.As(err, &ire) || len(ire.Pending.Requests) != 1 {
				t.Fatalf("want one question, got %v", err)
			}
			q := ire.Pending.Requests[0]
			if !strings.Contains(q.Message, "multiple interpretations") {
				t.Errorf("question: %q", q.Message)
			}
			res, err := tool.Resume(ctx, ire.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
				q.Key: {Action: elicitation.Accept, Content: map[string]any{"interpretation": "snake"}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.Contains(res.Text(), "python (snake)") {
				t.Fatalf("result: isError=%v %q", res.IsError, res.Text())
			}
		})
	}
}

// TestEverythingResumeTask: ResumeTask follows a 2025-11-25 task from its
// handle (tasks/get, then tasks/result) while the call that made it still
// runs; both get the report. (server-everything keeps a task for the
// session that made it, so the handle works on the same connection.)
func TestEverythingResumeTask(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := mcpadapter.New(testenv.StartEverythingHTTP(t, testenv.TransportStreamable), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tool := researchTool(t, ctx, a)
	handles := make(chan mcpadapter.TaskHandle, 1)
	type outcome struct {
		res *mcpadapter.Result
		err error
	}
	first := make(chan outcome, 1)
	go func() {
		res, err := tool.CallWith(ctx, json.RawMessage(`{"topic":"otters"}`), &mcpadapter.CallOptions{
			OnTask: func(h mcpadapter.TaskHandle) { handles <- h }})
		first <- outcome{res, err}
	}()
	var h mcpadapter.TaskHandle
	select {
	case h = <-handles:
	case o := <-first:
		t.Fatalf("the call ended before its task was made: %v", o.err)
	}
	saved, _ := json.Marshal(h)
	var back mcpadapter.TaskHandle
	if err := json.Unmarshal(saved, &back); err != nil {
		t.Fatal(err)
	}
	res, err := a.Client().ResumeTask(ctx, back, nil)
	if err != nil || !strings.Contains(res.Text(), "# Research Report: otters") {
		t.Fatalf("ResumeTask: %v %v", res, err)
	}
	o := <-first
	if o.err != nil || !strings.Contains(o.res.Text(), "# Research Report: otters") {
		t.Fatalf("the call: %v %v", o.res, o.err)
	}
}
