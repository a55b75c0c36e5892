package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// told checks how a task call ended against the invariant of
// followTask: the task is over on the server (completed, failed,
// cancelled), or the caller holds its handle in the error (a *TaskError,
// an *InputRequiredError with the task, a *TaskCancelledError whose
// tasks/cancel failed).
func told(t *testing.T, srv *taskserver.Server, id string, err error) {
	t.Helper()
	switch st := srv.Status(id); st {
	case "completed", "failed", "cancelled":
		return
	default:
		var te *mcpadapter.TaskError
		var ire *mcpadapter.InputRequiredError
		var tce *mcpadapter.TaskCancelledError
		switch {
		case errors.As(err, &te) && te.Handle.TaskID == id:
		case errors.As(err, &ire) && ire.Pending.Task != nil && ire.Pending.Task.TaskID == id:
		case errors.As(err, &tce) && !tce.Confirmed && tce.Handle.TaskID == id:
		default:
			t.Errorf("the call ended (%v) with task %s still %s on the server, and the caller was not handed the task", err, id, st)
		}
	}
}

// TestTaskEndsTold: every way a task call ends leaves the task over on
// the server, or hands the caller its handle (the invariant of
// followTask).
func TestTaskEndsTold(t *testing.T) {
	t.Parallel()
	decline := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	fail := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, errors.New("no user")
	}
	for _, tc := range []struct {
		name      string
		tool      string
		args      string
		srv       taskserver.Options
		client    mcpadapter.ClientOptions
		interrupt bool
		end       func(stop func(), c *mcpadapter.Client) // called once the task is made
		want      string                                  // the task's status on the server afterwards
	}{
		{name: "completed", tool: "work", want: "completed"},
		{name: "failed", tool: "fail", want: "failed"},
		{name: "answered", tool: "ask", client: mcpadapter.ClientOptions{ElicitationHandler: decline}, want: "completed"},
		{name: "cancelled", tool: "work", args: `{"steps":100,"stepMs":100}`, end: func(stop func(), _ *mcpadapter.Client) { stop() }, want: "cancelled"},
		{name: "closed", tool: "work", args: `{"steps":100,"stepMs":100}`, end: func(_ func(), c *mcpadapter.Client) { go c.Close() }, want: "working"},
		{name: "unanswerable", tool: "ask", client: mcpadapter.ClientOptions{ElicitationHandler: fail}, want: "cancelled"},
		{name: "interrupted", tool: "ask", interrupt: true, want: "input_required"},
		{name: "update refused", tool: "ask", srv: taskserver.Options{Refuse: []string{"tasks/update"}}, client: mcpadapter.ClientOptions{ElicitationHandler: decline}, want: "input_required"},
		{name: "get refused", tool: "work", args: `{"steps":100,"stepMs":100}`, srv: taskserver.Options{Refuse: []string{"tasks/get"}}, want: "working"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			callCtx, stop := context.WithCancel(ctx)
			defer stop()
			tc.srv.PollInterval = 20
			srv := newTaskServer(t, tc.srv)
			var c *mcpadapter.Client
			var err error
			if tc.interrupt {
				var a *mcpadapter.Adapter
				a, err = mcpadapter.New(srv.MCP, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
				if err == nil {
					defer a.Close()
					c = a.Client()
				}
			} else {
				c, err = mcpadapter.NewClient(srv.MCP, &tc.client)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			args := tc.args
			if args == "" {
				args = `{"stepMs":10}`
			}
			var id string
			_, err = c.CallTool(callCtx, tc.tool, json.RawMessage(args), &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) {
				id = h.TaskID
				if tc.end != nil {
					tc.end(stop, c)
				}
			}})
			if got := srv.Status(id); got != tc.want {
				t.Errorf("task %s after the call (%v), want %s", got, err, tc.want)
			}
			told(t, srv, id, err)
		})
	}
}

// blockingHandler answers no elicitation: it waits for the call's
// context to end; called is closed on its first call.
func blockingHandler(called chan<- struct{}) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	var once sync.Once
	return func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		once.Do(func() { close(called) })
		<-ctx.Done()
		return nil, ctx.Err()
	}
}

// TestTaskInputCancelled: the caller's context ends while the task waits
// for the user's answer: the call ends as a cancellation, told to the
// server (tasks/cancel: the task does not stay input_required), as a
// *TaskCancelledError that wraps the context's error.
func TestTaskInputCancelled(t *testing.T) {
	t.Parallel()
	for name, target := range extTargets() {
		for _, how := range []string{"cancel", "deadline"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
				called := make(chan struct{})
				c, err := mcpadapter.NewClient(target(t, srv), &mcpadapter.ClientOptions{ElicitationHandler: blockingHandler(called)})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				callCtx, stop := context.WithCancel(ctx)
				defer stop()
				want := context.Canceled
				if how == "deadline" {
					callCtx, stop = context.WithTimeout(ctx, 2*time.Second)
					defer stop()
					want = context.DeadlineExceeded
				} else {
					go func() {
						select {
						case <-called:
							stop()
						case <-ctx.Done():
						}
					}()
				}
				var id string
				res, err := c.CallTool(callCtx, "ask", json.RawMessage(`{"stepMs":10}`), &mcpadapter.CallOptions{
					OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
				select {
				case <-called:
				default:
					t.Fatalf("the handler was never asked: %v %v", res, err)
				}
				var tce *mcpadapter.TaskCancelledError
				if res != nil || !errors.As(err, &tce) || !tce.Requested || !tce.Confirmed || !errors.Is(err, want) {
					t.Fatalf("want a confirmed *TaskCancelledError wrapping %v, got %v, %v", want, res, err)
				}
				if st := srv.Status(id); st != "cancelled" || srv.Cancels() != 1 || srv.Running() != 0 {
					t.Errorf("server: task %s, %d cancels, %d running", st, srv.Cancels(), srv.Running())
				}
				told(t, srv, id, err)
			})
		}
	}
}

// TestTaskInputUnanswerable: a question the client cannot answer (the
// handler fails) ends the call with an error result the model reads, and
// the task is cancelled on the server rather than left waiting.
func TestTaskInputUnanswerable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("no user at this terminal")
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	res, err := c.CallTool(ctx, "ask", json.RawMessage(`{"stepMs":10}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "no user at this terminal") {
		t.Fatalf("want an error result naming the handler's error, got %v %v", res, err)
	}
	if st := srv.Status(id); st != "cancelled" || srv.Running() != 0 {
		t.Errorf("server: task %s, %d running; want it cancelled", st, srv.Running())
	}
	told(t, srv, id, err)
}

// TestTaskSameKeyAgain: a task asks a second question under the key of
// the first; the second is asked and answered too, with the client's
// handler and through interrupts, also on a server that takes
// tasks/update late (the question just answered is still shown once:
// it is not asked again).
func TestTaskSameKeyAgain(t *testing.T) {
	t.Parallel()
	for _, lag := range []bool{false, true} {
		name := "prompt"
		if lag {
			name = "lagging"
		}
		t.Run(name+"/handler", func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv := newTaskServer(t, taskserver.Options{PollInterval: 20, LagUpdates: lag})
			names := []string{"Ada", "Grace"}
			var asked atomic.Int32
			c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					n := asked.Add(1)
					if int(n) > len(names) {
						return nil, errors.New("asked a third time")
					}
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": names[n-1]}}, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var id string
			res, err := c.CallTool(ctx, "asktwice", json.RawMessage(`{"stepMs":1}`), &mcpadapter.CallOptions{
				OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
			if err != nil || res.Text() != "hello Ada (accept), then Grace (accept)" {
				t.Fatalf("result %v %v", res, err)
			}
			if asked.Load() != 2 || srv.Updates() != 2 {
				t.Errorf("the user was asked %d times, %d tasks/update; want 2 and 2", asked.Load(), srv.Updates())
			}
			told(t, srv, id, err)
		})
		t.Run(name+"/interrupt", func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv := newTaskServer(t, taskserver.Options{PollInterval: 20, LagUpdates: lag})
			a, err := mcpadapter.New(srv.MCP, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			tool := extTool(t, ctx, a, "asktwice")
			_, err = tool.Call(ctx, json.RawMessage(`{"stepMs":1}`))
			for i, who := range []string{"Ada", "Grace"} {
				var ire *mcpadapter.InputRequiredError
				if !errors.As(err, &ire) || len(ire.Pending.Requests) != 1 || ire.Pending.Requests[0].Key != "name" {
					t.Fatalf("question %d: want the question as an interrupt, got %v", i+1, err)
				}
				var res *mcpadapter.Result
				res, err = tool.Resume(ctx, ire.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
					"name": {Action: elicitation.Accept, Content: map[string]any{"name": who}}}})
				if i == 1 && (err != nil || res.Text() != "hello Ada (accept), then Grace (accept)") {
					t.Fatalf("result %v %v", res, err)
				}
			}
			if srv.Updates() != 2 {
				t.Errorf("%d tasks/update, want 2", srv.Updates())
			}
		})
	}
}

// TestTaskCreateCancelled: the caller's context ends while the server
// makes the task: the call returns at once with the caller's
// context.Canceled (the task was not seen yet), and the task the server
// then hands over is still taken and cancelled (tasks/cancel) in the
// background, not left running unknown to anyone. Both task protocols.
func TestTaskCreateCancelled(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			callCtx, stop := context.WithCancel(ctx)
			defer stop()
			made := make(chan string, 1)
			opts := taskserver.Options{PollInterval: 20, Core: proto == "2025-11-25",
				// The call's context ends as the server makes the task;
				// the server answers once the client has given up on the
				// tools/call (notifications/cancelled), or soon.
				OnCreate: func(rctx context.Context, id string) {
					made <- id
					stop()
					select {
					case <-rctx.Done():
					case <-time.After(300 * time.Millisecond):
					}
				}}
			srv := newTaskServer(t, opts)
			var target any = testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())
			if opts.Core {
				_, target = coreServerWith(t, srv)
			}
			c, err := mcpadapter.NewClient(target, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Tools(ctx); err != nil { // 2025-11-25: taskSupport
				t.Fatal(err)
			}
			_, err = c.CallTool(callCtx, "work", json.RawMessage(`{"steps":100,"stepMs":100}`), &mcpadapter.CallOptions{Task: mcpadapter.TaskPrefer})
			id := <-made
			var te *mcpadapter.TransportError
			if !errors.As(err, &te) || !errors.Is(err, context.Canceled) {
				t.Fatalf("want the caller's cancel as a *TransportError (context.Canceled), got %v", err)
			}
			for srv.Status(id) != "cancelled" {
				if ctx.Err() != nil {
					t.Fatalf("task %s is %s on the server: never cancelled", id, srv.Status(id))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if srv.Running() != 0 || srv.Cancels() != 1 {
				t.Errorf("server: %d running, %d tasks/cancel", srv.Running(), srv.Cancels())
			}
		})
	}
}

// TestTaskEndedOps: a tasks/update or tasks/result the server refuses is
// a *TaskError naming that request, with the task's handle.
func TestTaskEndedOps(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20, Refuse: []string{"tasks/update"}})
	c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	_, err = c.CallTool(ctx, "ask", json.RawMessage(`{"stepMs":10}`), &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
	var te *mcpadapter.TaskError
	if !errors.As(err, &te) || te.Op != "tasks/update" || te.Handle.TaskID != id || !strings.Contains(err.Error(), "tasks/update refused") {
		t.Errorf("refused tasks/update: want a *TaskError of tasks/update, got %v", err)
	}
	told(t, srv, id, err)

	core := newTaskServer(t, taskserver.Options{PollInterval: 20, Core: true, Refuse: []string{"tasks/result"}})
	_, url := coreServerWith(t, core)
	d, err := mcpadapter.NewClient(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Tools(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = d.CallTool(ctx, "work", json.RawMessage(`{"stepMs":10}`), &mcpadapter.CallOptions{Task: mcpadapter.TaskPrefer, OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
	if !errors.As(err, &te) || te.Op != "tasks/result" || te.Handle.TaskID != id {
		t.Errorf("refused tasks/result: want a *TaskError of tasks/result, got %v", err)
	}
	told(t, core, id, err)
}

// TestResumeTaskAnsweredElsewhere: a question answered in one process
// (Resume of the pending call) is not asked again by another that
// resumes the task from its handle while it runs on.
func TestResumeTaskAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	url := testserver.ServeStreamable(t, srv.MCP, testserver.Stateless())
	newAdapter := func() *mcpadapter.Adapter {
		a, err := mcpadapter.New(url, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a
	}
	// A asks the question; B answers it; C resumes the task from its
	// handle after the answer went out, while the task works on.
	a := newAdapter()
	var h mcpadapter.TaskHandle
	_, err := extTool(t, ctx, a, "asktwice").CallWith(ctx, json.RawMessage(`{"stepMs":300}`), &mcpadapter.CallOptions{
		OnTask: func(th mcpadapter.TaskHandle) { h = th }})
	var ire *mcpadapter.InputRequiredError
	if !errors.As(err, &ire) {
		t.Fatalf("want the question, got %v", err)
	}
	b := newAdapter()
	bDone := make(chan error, 1)
	go func() {
		_, err := extTool(t, ctx, b, "asktwice").Resume(ctx, ire.Pending, &elicitation.Resume{Responses: map[string]elicitation.Response{
			"name": {Action: elicitation.Accept, Content: map[string]any{"name": "Ada"}}}})
		bDone <- err
	}()
	for srv.Updates() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	var asked atomic.Int32
	c, err := mcpadapter.NewClient(url, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.ResumeTask(ctx, h, nil)
	if err != nil || res.Text() != "hello Ada (accept), then Grace (accept)" {
		t.Fatalf("C's ResumeTask: %v %v", res, err)
	}
	if asked.Load() != 1 || srv.Updates() != 2 {
		t.Errorf("C asked its user %d times, %d tasks/update in all; want once (the second question) and 2", asked.Load(), srv.Updates())
	}
	// B, which answered the first question, sees the second, or the
	// task completed if C answered before B looked again.
	if err := <-bDone; err != nil && !errors.As(err, &ire) {
		t.Errorf("B: %v", err)
	}
}

// coreServerWith serves a 2025-11-25 task server over streamable HTTP.
func coreServerWith(t *testing.T, srv *taskserver.Server) (*taskserver.Server, string) {
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return srv, hs.URL
}
