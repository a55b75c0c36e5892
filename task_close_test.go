package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestExtTaskCloseDuringGet: the client is closed while a tasks/get of
// a task call is in flight (the server holds it): the call lets go of
// the task (a *TaskError with ErrTaskDetached and the task's handle),
// and the task is not cancelled.
func TestExtTaskCloseDuringGet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, &mcp.StreamableHTTPOptions{Stateless: true})
	var hold atomic.Bool
	getting := make(chan struct{}, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if hold.Load() && bytes.Contains(body, []byte(`"tasks/get"`)) {
			select {
			case getting <- struct{}{}:
			default:
			}
			<-r.Context().Done() // held until the client lets go of it
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	c, err := mcpadapter.NewClient(hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	made := make(chan mcpadapter.TaskHandle, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "work", json.RawMessage(`{"steps":50,"stepMs":100}`), &mcpadapter.CallOptions{
			OnTask: func(h mcpadapter.TaskHandle) { hold.Store(true); made <- h }})
		done <- err
	}()
	var task mcpadapter.TaskHandle
	select {
	case task = <-made:
	case <-ctx.Done():
		t.Fatal("no task")
	}
	select {
	case <-getting:
	case <-ctx.Done():
		t.Fatal("no tasks/get")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var te *mcpadapter.TaskError
		if !errors.As(err, &te) || !errors.Is(err, mcpadapter.ErrTaskDetached) || te.Handle.TaskID != task.TaskID {
			t.Fatalf("want a *TaskError with ErrTaskDetached, got %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the task call still waits after Close")
	}
	if got := srv.Status(task.TaskID); got != "working" {
		t.Errorf("task %q after Close, want working (not cancelled)", got)
	}
}

// TestExtTaskCloseDuringQuestion: the client is closed while its
// elicitation handler answers a task's question, and the handler then
// fails (as a gateway handing its tasks to another replica does): the
// call lets go of the task (ErrTaskDetached), and the task is not
// cancelled: it still waits for its answer on the server.
func TestExtTaskCloseDuringQuestion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()
	asked, closed := make(chan struct{}, 1), make(chan struct{})
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		<-closed
		return nil, errors.New("handed over")
	}})
	if err != nil {
		t.Fatal(err)
	}
	made := make(chan mcpadapter.TaskHandle, 1)
	done := make(chan error, 1)
	go func() {
		_, err := c.CallTool(ctx, "ask", json.RawMessage(`{}`), &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) { made <- h }})
		done <- err
	}()
	// The question may come before the task's handle reaches OnTask.
	var task mcpadapter.TaskHandle
	for gotTask, gotQuestion := false, false; !gotTask || !gotQuestion; {
		select {
		case task = <-made:
			gotTask = true
		case <-asked:
			gotQuestion = true
		case <-ctx.Done():
			close(closed)
			t.Fatalf("after 30 s: task handle %v, question %v", gotTask, gotQuestion)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	close(closed)
	select {
	case err := <-done:
		if !errors.Is(err, mcpadapter.ErrTaskDetached) {
			t.Fatalf("want ErrTaskDetached, got %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the task call still waits after Close")
	}
	if got, n := srv.Status(task.TaskID), srv.Cancels(); got != "input_required" || n != 0 {
		t.Errorf("task %q after Close and %d tasks/cancel; want input_required and none", got, n)
	}
}

// TestExtTaskDeadlineDuringPoll: the caller's deadline passes while a
// task call waits between two polls: the call ends with the caller's
// own reason (errors.Is context.DeadlineExceeded, not a plain
// cancellation) as a *TaskCancelledError, and the task is cancelled on
// the server.
func TestExtTaskDeadlineDuringPoll(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 60000}) // the next poll is a minute away
	c, err := mcpadapter.NewClient(testserver.ServeStreamable(t, srv.MCP, testserver.Stateless()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A real deadline, far enough for the task to be made first; the
	// server advises a poll a minute away, so it passes in the wait.
	deadline, stop := context.WithTimeout(ctx, 5*time.Second)
	defer stop()
	var id string
	done := make(chan error, 1)
	made := make(chan struct{})
	go func() {
		_, err := c.CallTool(deadline, "work", json.RawMessage(`{"steps":100,"stepMs":100}`), &mcpadapter.CallOptions{
			OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; close(made) }})
		done <- err
	}()
	select {
	case <-made:
	case <-deadline.Done():
		t.Fatal("no task before the deadline")
	}
	var err2 error
	select {
	case err2 = <-done:
	case <-ctx.Done():
		t.Fatal("the call still waits after its deadline")
	}
	var tce *mcpadapter.TaskCancelledError
	if !errors.As(err2, &tce) || tce.Handle.TaskID != id || !errors.Is(err2, context.DeadlineExceeded) {
		t.Fatalf("want a *TaskCancelledError carrying context.DeadlineExceeded, got %v", err2)
	}
	for srv.Status(id) != "cancelled" {
		if ctx.Err() != nil {
			t.Fatalf("task %s is %s on the server: never cancelled", id, srv.Status(id))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestExtTaskDetach: a task call whose CallOptions.Detach is closed lets
// go of its task, while it polls and while its question waits for the
// handler (which then fails): the call returns ErrTaskDetached with the
// task's handle, no tasks/cancel is sent, and the client goes on (a call
// after it works). Client.ResumeTask takes Detach too.
func TestExtTaskDetach(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()
	asked, release := make(chan struct{}, 1), make(chan struct{}, 1)
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		<-release
		return nil, errors.New("let go")
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(tool, args string, detach chan struct{}, resume *mcpadapter.TaskHandle) (chan mcpadapter.TaskHandle, chan error) {
		made, done := make(chan mcpadapter.TaskHandle, 1), make(chan error, 1)
		go func() {
			opts := &mcpadapter.CallOptions{OnTask: func(h mcpadapter.TaskHandle) { made <- h }, Detach: detach}
			var err error
			if resume != nil {
				_, err = c.ResumeTask(ctx, *resume, opts)
			} else {
				_, err = c.CallTool(ctx, tool, json.RawMessage(args), opts)
			}
			done <- err
		}()
		return made, done
	}
	ended := func(done chan error) error {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			t.Fatal("the task call still follows its task after Detach")
			return nil
		}
	}
	detach := make(chan struct{})
	made, done := call("work", `{"steps":500,"stepMs":20}`, detach, nil)
	polled := <-made
	time.Sleep(100 * time.Millisecond)
	close(detach)
	var te *mcpadapter.TaskError
	if err := ended(done); !errors.Is(err, mcpadapter.ErrTaskDetached) || !errors.As(err, &te) || te.Handle.TaskID != polled.TaskID {
		t.Fatalf("a detached poll: want ErrTaskDetached with the handle, got %v", err)
	}
	// The question may come with the answer that makes the task (no
	// task to let go of yet): the call is made again until it comes
	// while the task is followed.
	for try := 1; ; try++ {
		detach = make(chan struct{})
		made, done = call("ask", `{}`, detach, nil)
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatal("no question")
		}
		select {
		case <-made:
			close(detach)
			release <- struct{}{}
			if err := ended(done); !errors.Is(err, mcpadapter.ErrTaskDetached) {
				t.Fatalf("a detached question: want ErrTaskDetached, got %v", err)
			}
		default:
			release <- struct{}{}
			ended(done)
			if try == 10 {
				t.Fatal("each question came before its task")
			}
			continue
		}
		break
	}
	detach = make(chan struct{})
	close(detach)
	if _, done = call("", "", detach, &polled); !errors.Is(ended(done), mcpadapter.ErrTaskDetached) {
		t.Fatal("a resumed task with Detach closed is followed")
	}
	if got, n := srv.Status(polled.TaskID), srv.Cancels(); got != "working" || n != 0 {
		t.Errorf("the polled task is %q after Detach, with %d tasks/cancel; want working and none", got, n)
	}
	if _, err := c.CallTool(ctx, "work", json.RawMessage(`{"steps":1,"stepMs":1}`), nil); err != nil {
		t.Fatalf("a call after the detached ones: %v", err)
	}
}
