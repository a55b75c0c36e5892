package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/taskserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askForever is a 2026-07-28 task server over HTTP that keeps a task
// waiting for input: it answers each tasks/get of the task itself, with
// the task waiting for input and a new question (a sampling request under
// a new key, a new lastUpdatedAt), and acknowledges each tasks/update
// without passing it on; after limit questions (zero: never) it lets the
// task be. Everything else (the tools/call that makes the task,
// tasks/cancel) reaches the real task server behind it.
type askForever struct {
	next  http.Handler
	limit int

	mu      sync.Mutex
	task    string // the task whose polls it answers
	rounds  int    // the questions it asked
	updates int    // the tasks/update it acknowledged
}

func (s *askForever) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	s.mu.Lock()
	mine := s.task != "" && msg.Params.TaskID == s.task && (s.limit == 0 || s.rounds < s.limit || (msg.Method == "tasks/update" && s.updates < s.limit))
	var result any
	switch {
	case mine && msg.Method == "tasks/get":
		s.rounds++
		now := time.Now().UTC()
		result = map[string]any{
			"taskId": s.task, "status": "input_required", "statusMessage": "one more question",
			"createdAt": now.Format(time.RFC3339), "lastUpdatedAt": now.Add(time.Duration(s.rounds) * time.Millisecond).Format(time.RFC3339Nano),
			"pollIntervalMs": 5, "ttlMs": 3600000,
			"inputRequests": map[string]any{fmt.Sprintf("q%d", s.rounds): map[string]any{
				"method": "sampling/createMessage",
				"params": map[string]any{"maxTokens": 10, "messages": []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "and now?"}}}},
			}},
		}
	case mine && msg.Method == "tasks/update":
		s.updates++
		result = map[string]any{}
	}
	s.mu.Unlock()
	if result == nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		s.next.ServeHTTP(w, r)
		return
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (s *askForever) follow(task string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.task = task
}

func (s *askForever) counts() (rounds, updates int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rounds, s.updates
}

// TestTaskInputNeverEnds: a server keeps its task waiting for input
// forever, asking a new sampling question at every poll. The client
// answers by itself only a bounded number of rounds (as go-sdk's
// multi-round-trip loop and a plain call's rounds do), then cancels the
// task on the server and ends the call, without the caller's context
// having to end: the SamplingHandler (a model, billed per request) is not
// called without end.
func TestTaskInputNeverEnds(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 5})
	af := &askForever{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true})}
	hs := httptest.NewServer(af)
	t.Cleanup(hs.Close)

	// The call's own context ends when the model was asked far more
	// often than any bound would let it: the call then fails below.
	callCtx, stop := context.WithCancel(ctx)
	defer stop()
	const tooMany = 60
	var sampled atomic.Int32
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{
		//lint:ignore SA1019 servers may still ask for sampling in a task's rounds
		SamplingHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if sampled.Add(1) >= tooMany {
				stop()
			}
			//lint:ignore SA1019 servers may still ask for sampling in a task's rounds
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "more"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	res, err := c.CallTool(callCtx, "ask", json.RawMessage(`{"stepMs":1}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; af.follow(h.TaskID) }})
	rounds, updates := af.counts()
	if callCtx.Err() != nil || ctx.Err() != nil {
		t.Fatalf("the call answered %d rounds of questions (%d model calls) and only ended with its context: %v %v", updates, sampled.Load(), res, err)
	}
	if n := sampled.Load(); n == 0 || n > 10 || rounds > 11 {
		t.Errorf("the model was asked %d times in %d rounds; want at most 10 (go-sdk's bound of a multi-round-trip call)", n, rounds)
	}
	var tce *mcpadapter.TaskCancelledError
	if (err != nil && !errors.As(err, &tce)) || (err == nil && (res == nil || !res.IsError)) {
		t.Errorf("want an error result (or a *TaskCancelledError) saying the task was given up, got %v %v", res, err)
	}
	if st := srv.Status(id); st != "cancelled" {
		t.Errorf("task %s is %q on the server: want it cancelled (tasks/cancel)", id, st)
	}
}

// TestTaskSamplingQuestion: a task asks for sampling (three rounds, one
// question each) before it goes on. The client's SamplingHandler answers
// each, as on go-sdk's path, and the task completes.
func TestTaskSamplingQuestion(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := newTaskServer(t, taskserver.Options{PollInterval: 5})
	af := &askForever{limit: 3, next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true})}
	hs := httptest.NewServer(af)
	t.Cleanup(hs.Close)
	var sampled atomic.Int32
	c, err := mcpadapter.NewClient(hs.URL, &mcpadapter.ClientOptions{
		//lint:ignore SA1019 servers may still ask for sampling in a task's rounds
		SamplingHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled.Add(1)
			if len(req.Params.Messages) != 1 {
				return nil, fmt.Errorf("%d messages", len(req.Params.Messages))
			}
			if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "and now?" {
				return nil, fmt.Errorf("the question was %#v", req.Params.Messages[0].Content)
			}
			//lint:ignore SA1019 servers may still ask for sampling in a task's rounds
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "more"}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	res, err := c.CallTool(ctx, "ask", json.RawMessage(`{"stepMs":1}`), &mcpadapter.CallOptions{
		OnTask: func(h mcpadapter.TaskHandle) { id = h.TaskID; af.follow(h.TaskID) }})
	if err != nil || res.IsError || sampled.Load() != 3 {
		t.Fatalf("want the task's result after 3 sampling rounds, got %v %v (the model was asked %d times)", res, err, sampled.Load())
	}
	if _, updates := af.counts(); updates != 3 {
		t.Errorf("%d tasks/update for the sampling rounds, want 3", updates)
	}
	told(t, srv, id, err)
}
