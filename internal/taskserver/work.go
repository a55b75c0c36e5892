package taskserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskResult is a task as the extension describes it: the answer to a
// tools/call (resultType "task") and to tasks/get.
type taskResult struct {
	mcp.ResultBase
	ResultType    string `json:"resultType,omitempty"`
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"` // 2025-11-25
	TTL           *int64 `json:"ttl,omitempty"`          // 2025-11-25
	// The extension's names (2026-07-28).
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	TTLMs          *int64          `json:"ttlMs,omitempty"`
	InputRequests  map[string]any  `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

// idParams are the params of tasks/get, tasks/update and tasks/cancel.
type idParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"`
	RequestState   string                     `json:"requestState,omitempty"`
}

type ack struct{ mcp.ResultBase }

// view describes t; created says it answers the tools/call that made it.
func (s *Server) view(t *task, created bool) *taskResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.shown != nil {
		close(t.shown)
		t.shown = nil
	}
	r := &taskResult{TaskID: t.id, Status: t.status, StatusMessage: t.message, CreatedAt: t.created.UTC().Format(time.RFC3339),
		LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano)}
	if s.opts.NoLastUpdated {
		r.LastUpdatedAt = ""
	}
	if s.opts.PollInterval > 0 {
		ms := s.opts.PollInterval
		r.PollInterval = &ms
	}
	r.TTL = t.ttl
	if !s.opts.Core {
		ttl := int64(time.Hour / time.Millisecond)
		r.PollIntervalMs, r.TTLMs, r.PollInterval, r.TTL = r.PollInterval, &ttl, nil, nil
	}
	if s.opts.Core {
		if created {
			r.ResultType = "task"
		}
		return r // 2025-11-25: the result comes with tasks/result
	}
	if created {
		// A task may wait for input already when the call is answered:
		// its questions come with it.
		r.ResultType = "task"
		if t.status == "input_required" {
			r.InputRequests = t.asks
		}
		return r
	}
	switch t.status {
	case "completed":
		r.Result = t.result
	case "failed":
		r.Error = t.err
	case "input_required":
		r.InputRequests = t.asks
	}
	return r
}

// create makes a task for tool and starts its work.
func (s *Server) create(tool string, steps int, step time.Duration) *task {
	ctx, stop := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.seq++
	now := time.Now()
	t := &task{id: fmt.Sprintf("task-%d-%d", now.UnixNano(), s.seq), tool: tool, status: "working", created: now, updated: now, stop: stop,
		answer: make(chan map[string]json.RawMessage, 1), done: make(chan struct{})}
	s.tasks[t.id] = t
	s.started[tool]++
	if tool == "forget" {
		// Lost at once, and never run: a task that completed before its
		// creation was answered would be answered as completed.
		delete(s.tasks, t.id)
		s.mu.Unlock()
		stop()
		return t
	}
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		s.run(ctx, t, steps, step)
	}()
	return t
}

// run does the work of t until it ends or ctx does.
func (s *Server) run(ctx context.Context, t *task, steps int, step time.Duration) {
	if steps <= 0 {
		steps = 1
	}
	for i := 0; i < steps; i++ {
		shown := s.step(t, fmt.Sprintf("step %d of %d", i+1, steps))
		select {
		case <-time.After(step):
		case <-ctx.Done():
			return
		}
		select {
		case <-shown:
		case <-ctx.Done():
			return
		}
	}
	switch t.tool {
	case "fail":
		s.set(t, "failed", "disk on fire", nil, &jsonrpc.Error{Code: -32000, Message: "disk on fire"})
	case "ask":
		name, ok := s.askName(ctx, t)
		if !ok {
			return
		}
		s.set(t, "completed", "", textResult("hello "+name), nil)
	case "asktwice":
		first, ok := s.askName(ctx, t)
		if !ok {
			return
		}
		s.set(t, "working", "checking "+first, nil, nil)
		select {
		case <-time.After(step):
		case <-ctx.Done():
			return
		}
		second, ok := s.askName(ctx, t)
		if !ok {
			return
		}
		s.set(t, "completed", "", textResult("hello "+first+", then "+second), nil)
	default:
		s.set(t, "completed", "", textResult(fmt.Sprintf("done: %d steps", steps)), nil)
	}
}

// askName puts t in input_required with the question "name" and waits
// for the answer, which it returns as "NAME (ACTION)"; ok is false when
// the task's work was stopped.
func (s *Server) askName(ctx context.Context, t *task) (name string, ok bool) {
	s.mu.Lock()
	t.asks = map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": "What is your name?",
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
	}}}
	if s.opts.AskURL != "" {
		t.asks = map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "url", "message": "Sign in", "url": s.opts.AskURL, "elicitationId": "e1"}}}
	}
	s.mu.Unlock()
	s.set(t, "input_required", "waiting for a name", nil, nil)
	var answer map[string]json.RawMessage
	select {
	case answer = <-t.answer:
	case <-ctx.Done():
		return "", false
	}
	var resp struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	_ = json.Unmarshal(answer["name"], &resp)
	return fmt.Sprintf("%v (%s)", resp.Content["name"], resp.Action), true
}

func textResult(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	return b
}

// step moves t to a step of its work; the channel it returns is closed
// once an answer has shown that step (at once without ShowSteps).
func (s *Server) step(t *task, msg string) <-chan struct{} {
	shown := make(chan struct{})
	s.set(t, "working", msg, nil, nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.ShowSteps && t.status == "working" {
		t.shown = shown
	} else {
		close(shown)
	}
	return shown
}

// set moves t to status, unless it is already over.
func (s *Server) set(t *task, status, msg string, result json.RawMessage, err *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.status == "completed" || t.status == "failed" || t.status == "cancelled" {
		return
	}
	t.status, t.message, t.result, t.err = status, msg, result, err
	t.updated = time.Now()
	if status != "input_required" {
		t.asks = nil
	}
	if status == "completed" || status == "failed" || status == "cancelled" {
		close(t.done)
	}
}

func (s *Server) lookup(id string) (*task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[id]
	if t == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task " + id}
	}
	return t, nil
}

func (s *Server) get(_ context.Context, _ *mcp.ServerSession, p *idParams) (*taskResult, error) {
	s.mu.Lock()
	s.gets[p.TaskID] = append(s.gets[p.TaskID], time.Now())
	s.mu.Unlock()
	if err := s.refused("tasks/get"); err != nil {
		return nil, err
	}
	t, err := s.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var take map[string]json.RawMessage
	if t.lagged != nil {
		if t.lagGets++; t.lagGets >= 2 {
			take, t.lagged = t.lagged, nil
		}
	}
	s.mu.Unlock()
	if take != nil {
		s.take(t, take)
	}
	return s.view(t, false), nil
}

func (s *Server) update(_ context.Context, _ *mcp.ServerSession, p *idParams) (*ack, error) {
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	if err := s.refused("tasks/update"); err != nil {
		return nil, err
	}
	t, err := s.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	if s.opts.LagUpdates {
		s.mu.Lock()
		if t.status == "input_required" && t.lagged == nil {
			t.lagged, t.lagGets = p.InputResponses, 0
		}
		s.mu.Unlock()
		return &ack{}, nil
	}
	s.take(t, p.InputResponses)
	return &ack{}, nil
}

// take hands answers to a task waiting for them; a task that waits for
// none ignores them.
func (s *Server) take(t *task, answers map[string]json.RawMessage) {
	// The task moves on from input_required as it gets the answers, under
	// one lock: its work cannot ask its next question in between, which
	// this "working" would then hide.
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.status != "input_required" {
		return
	}
	select {
	case t.answer <- answers:
		t.status, t.message, t.asks, t.updated = "working", "answer received", nil, time.Now()
	default: // answered already
	}
}

func (s *Server) cancelTask(ctx context.Context, ss *mcp.ServerSession, p *idParams) (mcp.Result, error) {
	s.mu.Lock()
	s.cancels++
	s.mu.Unlock()
	t, err := s.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	s.set(t, "cancelled", "cancelled by the client", nil, nil)
	t.stop()
	if s.opts.Core {
		return s.view(t, false), nil // 2025-11-25 answers with the task
	}
	return &ack{}, nil
}
