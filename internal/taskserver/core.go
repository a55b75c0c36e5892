package taskserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// In Core mode the server speaks 2025-11-25 tasks: the client asks for a
// task with a "task" member in the tools/call params, as each tool's
// execution.taskSupport allows (work: optional; fail, forget: required;
// ask: forbidden), and fetches the result with tasks/result. go-sdk
// v1.8.0 drops params it does not know, so Handler moves "task" into
// _meta before go-sdk reads the request, and coreMiddleware adds
// execution to the tools/list answer.

// taskMetaKey is where Handler puts the "task" member.
const taskMetaKey = "mcpadapter.test/task"

// taskSupport is each tool's execution.taskSupport in Core mode.
var taskSupport = map[string]string{"work": "optional", "fail": "required", "forget": "required", "ask": "forbidden", "asktwice": "forbidden"}

// Handler serves the server over streamable HTTP (sessions, as
// 2025-11-25 has). Its tasks outlive the sessions.
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = moveTask(body)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		h.ServeHTTP(w, r)
	})
}

// moveTask moves the "task" member of a tools/call's params into _meta.
func moveTask(body []byte) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || string(msg["method"]) != `"tools/call"` {
		return body
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params["task"] == nil {
		return body
	}
	meta := map[string]json.RawMessage{}
	if m := params["_meta"]; m != nil && json.Unmarshal(m, &meta) != nil {
		return body
	}
	meta[taskMetaKey] = params["task"]
	delete(params, "task")
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		return body
	}
	return out
}

// rawResult is a result written as given.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// coreMiddleware makes tasks of task-augmented tools/calls and lists the
// tools with their execution.taskSupport.
func (s *Server) coreMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil {
				return nil, err
			}
			return withExecution(res)
		case "tools/call":
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			ask, asked := p.Meta[taskMetaKey].(map[string]any)
			if !ok || !asked {
				return next(ctx, method, req)
			}
			if s.opts.OnCall != nil && !s.opts.OnCall(ctx, p.Name) {
				return next(ctx, method, req)
			}
			if taskSupport[p.Name] == "forbidden" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tool " + p.Name + " does not support tasks"}
			}
			var args struct {
				Steps  int `json:"steps"`
				StepMs int `json:"stepMs"`
			}
			_ = json.Unmarshal(p.Arguments, &args)
			t := s.create(p.Name, args.Steps, time.Duration(args.StepMs)*time.Millisecond)
			if ttl, ok := ask["ttl"].(float64); ok {
				ms := int64(ttl)
				s.mu.Lock()
				t.ttl = &ms
				s.mu.Unlock()
			}
			if s.opts.OnCreate != nil {
				s.opts.OnCreate(ctx, t.id)
			}
			v := s.view(t, false)
			b, err := json.Marshal(map[string]any{"task": v})
			if err != nil {
				return nil, err
			}
			return &rawResult{raw: b}, nil
		}
		return next(ctx, method, req)
	}
}

// withExecution adds each tool's execution.taskSupport to a tools/list
// result.
func withExecution(res mcp.Result) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var page map[string]any
	if err := json.Unmarshal(b, &page); err != nil {
		return nil, err
	}
	tools, _ := page["tools"].([]any)
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			if ts := taskSupport[m["name"].(string)]; ts != "" {
				m["execution"] = map[string]any{"taskSupport": ts}
			}
		}
	}
	b, err = json.Marshal(page)
	if err != nil {
		return nil, err
	}
	return &rawResult{raw: b}, nil
}

// result answers tasks/result: it waits for the task to end.
func (s *Server) result(ctx context.Context, _ *mcp.ServerSession, p *idParams) (*rawResult, error) {
	if err := s.refused("tasks/result"); err != nil {
		return nil, err
	}
	t, err := s.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch t.status {
	case "completed":
		return &rawResult{raw: t.result}, nil
	case "failed":
		return nil, t.err
	}
	return nil, &jsonrpc.Error{Code: -32000, Message: "task " + t.id + " was " + t.status}
}

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	Tasks      []*taskResult `json:"tasks"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

// list answers tasks/list, two tasks a page, oldest first.
func (s *Server) list(_ context.Context, _ *mcp.ServerSession, p *listParams) (*listResult, error) {
	s.mu.Lock()
	var all []*task
	for _, t := range s.tasks {
		all = append(all, t)
	}
	s.mu.Unlock()
	sortTasks(all)
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad cursor " + p.Cursor}
		}
		start = n
	}
	out := &listResult{Tasks: []*taskResult{}}
	end := min(start+2, len(all))
	for _, t := range all[start:end] {
		out.Tasks = append(out.Tasks, s.view(t, false))
	}
	if end < len(all) {
		out.NextCursor = strconv.Itoa(end)
	}
	return out, nil
}

func sortTasks(ts []*task) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].created.Before(ts[j-1].created); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}
