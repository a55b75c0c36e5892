package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// CallState is a tool call as the page shows it, sent whole with every
// change.
type CallState struct {
	ID     string          `json:"id"`
	Server string          `json:"server"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	// Status is "running", "input" (waiting for the user's answers),
	// "done", "error" (a Go error: transport, timeout) or "cancelled".
	Status    string        `json:"status"`
	Started   time.Time     `json:"started"`
	Ended     *time.Time    `json:"ended,omitempty"`
	Progress  *progressView `json:"progress,omitempty"`
	Task      *taskView     `json:"task,omitempty"`
	Questions *questions    `json:"questions,omitempty"`
	Result    *resultView   `json:"result,omitempty"`
	Error     *errorInfo    `json:"error,omitempty"`
	// Saved names the saved call this run checks, if any; Match says
	// whether the result was the one expected.
	Saved string `json:"saved,omitempty"`
	Match *bool  `json:"match,omitempty"`
}

type progressView struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
	Count    int     `json:"count"`
}

// taskView is the task behind a call, with the statuses it went through:
// the first and the latest maxTaskHistory-1.
type taskView struct {
	Handle  mcpadapter.TaskHandle `json:"handle"`
	History []taskStatus          `json:"history"`
	// Skipped counts the statuses left out of History.
	Skipped int `json:"skipped,omitempty"`
}

// maxStatusText bounds a progress or status message as a call keeps it
// (the trace has the whole message); maxTaskHistory bounds a task's
// history.
const (
	maxStatusText  = 2 << 10
	maxTaskHistory = 100
)

// note adds s to the history unless it says what the latest status said.
// The history is a new slice each time: published states share the old.
func (t *taskView) note(s taskStatus) {
	h := t.History
	if len(h) > 0 && h[len(h)-1].Status == s.Status && h[len(h)-1].Message == s.Message {
		return
	}
	if len(h) >= maxTaskHistory {
		t.Skipped++
		h = append(h[:1:1], h[2:]...)
	}
	t.History = append(h[:len(h):len(h)], s)
}

type taskStatus struct {
	Time    time.Time `json:"time"`
	Status  string    `json:"status"`
	Message string    `json:"message,omitempty"`
}

// questions are the server's questions a call waits on.
type questions struct {
	Requests []elicitation.Request `json:"requests"`
	Problem  string                `json:"problem,omitempty"`
	Round    int                   `json:"round"`
	Era      string                `json:"era,omitempty"`
}

// call is one call in flight or done.
type call struct {
	mu      sync.Mutex
	state   CallState
	cancel  context.CancelFunc
	answers chan *elicitation.Resume // the user's answers, while Status is "input"
}

// calls are the inspector's calls.
type calls struct {
	s    *Server
	mu   sync.Mutex
	byID map[string]*call
	next int
}

func newCalls(s *Server) *calls { return &calls{s: s, byID: map[string]*call{}} }

// snapshot returns a copy of c's state that later changes leave alone.
func (c *call) snapshot() CallState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state
	if st.Task != nil {
		task := *st.Task
		st.Task = &task
	}
	return st
}

// publish publishes a snapshot of c's state as an event.
func (cs *calls) publish(c *call) {
	st := c.snapshot()
	cs.s.events.add(Event{Kind: "call", Call: &st})
}

// callRequest is the body of POST /api/call.
type callRequest struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	// ResetOnProgress restarts the timeout on each progress report.
	ResetOnProgress bool `json:"resetOnProgress,omitempty"`
	// Task is "" (the client's mode), "prefer" or "never".
	Task string `json:"task,omitempty"`
	// Saved is the saved call this run checks.
	Saved string `json:"saved,omitempty"`
}

// start starts a call of a listed tool and returns its id.
func (cs *calls) start(req callRequest, expected *resultView) (string, error) {
	ctx, cancel := context.WithTimeout(cs.s.ctx, time.Minute)
	tool, err := cs.s.state.tool(ctx, req.Server, req.Tool)
	cancel()
	if err != nil {
		return "", err
	}
	args := req.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil {
		return "", fmt.Errorf("the arguments are not a JSON object: %w", err)
	}
	opts := &mcpadapter.CallOptions{ResetTimeoutOnProgress: req.ResetOnProgress}
	if req.TimeoutMs > 0 {
		opts.Timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	}
	switch req.Task {
	case "":
	case "prefer":
		opts.Task = mcpadapter.TaskPrefer
	case "never":
		opts.Task = mcpadapter.TaskNever
	default:
		return "", fmt.Errorf("task mode %q: want prefer or never", req.Task)
	}
	cs.mu.Lock()
	cs.next++
	id := "c" + strconv.Itoa(cs.next)
	callCtx, callCancel := context.WithCancel(cs.s.ctx)
	c := &call{cancel: callCancel, answers: make(chan *elicitation.Resume, 1), state: CallState{
		ID: id, Server: tool.Server, Tool: tool.Name, Args: args, Status: "running", Started: time.Now(), Saved: req.Saved,
	}}
	cs.byID[id] = c
	cs.mu.Unlock()
	opts.Progress = func(p mcpadapter.Progress) {
		c.mu.Lock()
		if p.Task != nil {
			if c.state.Task == nil {
				c.state.Task = &taskView{Handle: p.Task.Handle}
			}
			c.state.Task.note(taskStatus{Time: time.Now(), Status: clip(string(p.Task.Status), 64), Message: clip(p.Task.StatusMessage, maxStatusText)})
		} else {
			n := 1
			if c.state.Progress != nil {
				n = c.state.Progress.Count + 1
			}
			c.state.Progress = &progressView{Progress: p.Progress, Total: p.Total, Message: clip(p.Message, maxStatusText), Count: n}
		}
		c.mu.Unlock()
		cs.publish(c)
	}
	opts.OnTask = func(h mcpadapter.TaskHandle) {
		c.mu.Lock()
		if c.state.Task == nil {
			c.state.Task = &taskView{Handle: h, History: []taskStatus{{Time: time.Now(), Status: "created"}}}
		} else {
			c.state.Task.Handle = h
		}
		c.mu.Unlock()
		cs.publish(c)
	}
	cs.publish(c)
	cs.s.goOwned(func() {
		defer callCancel()
		res, err := cs.run(callCtx, c, tool, args, opts)
		cs.finish(c, res, err, expected)
	})
	return id, nil
}

// run makes the call, asking the user each question the server puts.
func (cs *calls) run(ctx context.Context, c *call, tool *mcpadapter.Tool, args json.RawMessage, opts *mcpadapter.CallOptions) (*mcpadapter.Result, error) {
	res, err := tool.CallWith(ctx, args, opts)
	for round := 0; round < 50; round++ {
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			break
		}
		p := ir.Pending
		c.mu.Lock()
		c.state.Status = "input"
		c.state.Questions = &questions{Requests: p.Requests, Problem: p.Problem, Round: p.Round}
		if p.ParkID != "" || p.Queued != "" {
			c.state.Questions.Era = "handshake"
		} else {
			c.state.Questions.Era = "2026-07-28"
		}
		c.mu.Unlock()
		cs.publish(c)
		var resume *elicitation.Resume
		select {
		case resume = <-c.answers:
		case <-ctx.Done():
			// Tell a parked call its questions are cancelled, so that it
			// ends on its server too.
			resume = &elicitation.Resume{Responses: map[string]elicitation.Response{}}
			for _, q := range p.Requests {
				resume.Responses[q.Key] = elicitation.Response{Action: elicitation.Cancel}
			}
			bg, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = tool.Resume(bg, p, resume)
			cancel()
			return nil, ctx.Err()
		}
		c.mu.Lock()
		c.state.Status = "running"
		c.state.Questions = nil
		c.mu.Unlock()
		cs.publish(c)
		res, err = tool.Resume(ctx, p, resume)
	}
	return res, err
}

// finish records how the call ended.
func (cs *calls) finish(c *call, res *mcpadapter.Result, err error, expected *resultView) {
	now := time.Now()
	c.mu.Lock()
	c.state.Ended = &now
	c.state.Questions = nil
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		c.state.Status = "cancelled"
		c.state.Error = errorView(err)
	case err != nil:
		c.state.Status = "error"
		c.state.Error = errorView(err)
	default:
		c.state.Status = "done"
		c.state.Result = resultOf(res, c.state.Server, c.state.Tool, cs.s)
	}
	if expected != nil {
		m := c.state.Result != nil && sameResult(expected, c.state.Result)
		c.state.Match = &m
	}
	c.mu.Unlock()
	cs.publish(c)
}

// get returns the call with id.
func (cs *calls) get(id string) (*call, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.byID[id]
	return c, ok
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var req callRequest
	if !readJSON(w, r, &req) {
		return
	}
	id, err := s.calls.start(req, nil)
	if err != nil {
		apiError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, map[string]string{"id": id})
}

func (s *Server) handleCalls(w http.ResponseWriter, r *http.Request) {
	s.calls.mu.Lock()
	all := make([]*call, 0, len(s.calls.byID))
	for i := 1; i <= s.calls.next; i++ {
		if c, ok := s.calls.byID["c"+strconv.Itoa(i)]; ok {
			all = append(all, c)
		}
	}
	s.calls.mu.Unlock()
	out := make([]CallState, 0, len(all))
	for _, c := range all {
		out = append(out, c.snapshot())
	}
	writeJSON(w, out)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID string `json:"id"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.calls.get(req.ID)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Errorf("no call %q", req.ID))
		return
	}
	c.cancel()
	writeJSON(w, map[string]bool{"ok": true})
}

func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID        string                          `json:"id"`
		Responses map[string]elicitation.Response `json:"responses"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	c, ok := s.calls.get(req.ID)
	if !ok {
		apiError(w, http.StatusNotFound, fmt.Errorf("no call %q", req.ID))
		return
	}
	c.mu.Lock()
	waiting := c.state.Status == "input"
	c.mu.Unlock()
	if !waiting {
		apiError(w, http.StatusConflict, fmt.Errorf("call %s is not waiting for answers", req.ID))
		return
	}
	select {
	case c.answers <- &elicitation.Resume{Responses: req.Responses}:
		writeJSON(w, map[string]bool{"ok": true})
	default:
		apiError(w, http.StatusConflict, fmt.Errorf("call %s has its answers already", req.ID))
	}
}
