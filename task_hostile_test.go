package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskSwapper is a 2026-07-28 task server over HTTP that mixes up its
// tasks: once swap is set, every tasks/get of task from is answered with
// the state of task to (the request is rewritten before the server sees
// it). It counts the tasks/get it rewrote.
type taskSwapper struct {
	next http.Handler

	mu        sync.Mutex
	from, to  string
	rewritten int
}

func (s *taskSwapper) swap(from, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.from, s.to = from, to
}

func (s *taskSwapper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rewritten
}

func (s *taskSwapper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	s.mu.Lock()
	if json.Unmarshal(body, &msg) == nil && msg.Method == "tasks/get" && s.from != "" && msg.Params.TaskID == s.from {
		body = bytes.Replace(body, []byte(`"`+s.from+`"`), []byte(`"`+s.to+`"`), 1)
		s.rewritten++
	}
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	s.next.ServeHTTP(w, r)
}

// TestTaskAnswerForAnotherTask: a server answers the polls of one task
// with the state of another (a finished one, with its result). The call
// never returns the other task's result as its own: it ends with a
// *TaskError that names its own task.
func TestTaskAnswerForAnotherTask(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20})
	sw := &taskSwapper{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true})}
	hs := httptest.NewServer(sw)
	t.Cleanup(hs.Close)
	c, err := mcpadapter.NewClient(hs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	var other string
	res, err := c.CallTool(ctx, "work", json.RawMessage(`{"steps":1,"stepMs":1}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) { other = h.TaskID }})
	if err != nil || other == "" || res.Text() != "done: 1 steps" {
		t.Fatalf("the other task: %v %v (task %q)", res, err, other)
	}

	var mine string
	res, err = c.CallTool(ctx, "work", json.RawMessage(`{"steps":100,"stepMs":100}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) {
			mine = h.TaskID
			sw.swap(mine, other)
		}})
	if sw.count() == 0 {
		t.Fatalf("the server never answered for another task (%v %v)", res, err)
	}
	if res != nil && strings.Contains(res.Text(), "done: 1 steps") {
		t.Fatalf("task %s's call returned task %s's result: %q", mine, other, res.Text())
	}
	var te *mcpadapter.TaskError
	if !errors.As(err, &te) || te.Handle.TaskID != mine || !strings.Contains(err.Error(), other) {
		t.Fatalf("want a *TaskError of task %s naming task %s, got %v %v", mine, other, res, err)
	}
}

// TestTaskSameQuestionNoTimestamps: a server that shows no lastUpdatedAt
// asks the same question under the same key twice, working in between (lastUpdatedAt is
// required; servers omit it, or keep it in whole seconds).
// The second question is asked too: a round of questions ends when the
// task shows another status, whatever its timestamps.
func TestTaskSameQuestionNoTimestamps(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 20, NoLastUpdated: true})
	var mu sync.Mutex
	names := []string{"Ada", "Grace"}
	asked := 0
	c, err := mcpadapter.NewClient(srv.MCP, &mcpadapter.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			if asked == len(names) {
				return nil, errors.New("asked a third time")
			}
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": names[asked-1]}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The task works a second between its questions: the polls (every
	// 20 ms) see it working.
	res, err := c.CallTool(ctx, "asktwice", json.RawMessage(`{"stepMs":1000}`), nil)
	if err != nil || res.Text() != "hello Ada (accept), then Grace (accept)" {
		t.Fatalf("result %v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 2 || srv.Updates() != 2 {
		t.Errorf("the user was asked %d times, %d tasks/update; want 2 and 2", asked, srv.Updates())
	}
}

// TestResumeTaskMovedOn: a task's question is answered by one process;
// another resumes its own copy of the pending call while the task works
// on. Its answers are not sent (the task no longer shows the question
// they answer): the server gets one tasks/update, and the second process
// follows the task to its next question.
func TestResumeTaskMovedOn(t *testing.T) {
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
	answer := func(who string) *elicitation.Resume {
		return &elicitation.Resume{Responses: map[string]elicitation.Response{
			"name": {Action: elicitation.Accept, Content: map[string]any{"name": who}}}}
	}
	var id string
	// The task works 2 s between its two questions.
	_, err := extTool(t, ctx, newAdapter(), "asktwice").CallWith(ctx, json.RawMessage(`{"stepMs":2000}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID }})
	var ire *mcpadapter.InputRequiredError
	if !errors.As(err, &ire) {
		t.Fatalf("want the question, got %v", err)
	}
	// B answers; its Resume follows the task to the second question.
	bDone := make(chan error, 1)
	go func() {
		_, err := extTool(t, ctx, newAdapter(), "asktwice").Resume(ctx, ire.Pending, answer("Ada"))
		bDone <- err
	}()
	for srv.Updates() == 0 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if st := srv.Status(id); st != "working" {
		t.Fatalf("task %s after B's answer, want working", st)
	}
	// C resumes the same pending call while the task works.
	_, err = extTool(t, ctx, newAdapter(), "asktwice").Resume(ctx, ire.Pending, answer("Eve"))
	if !errors.As(err, &ire) {
		t.Fatalf("C: want the task's second question, got %v", err)
	}
	if n := srv.Updates(); n != 1 {
		t.Errorf("%d tasks/update; want B's only (C's answer was to a question the task no longer showed)", n)
	}
	if err := <-bDone; !errors.As(err, &ire) {
		t.Errorf("B: want the second question, got %v", err)
	}
}
