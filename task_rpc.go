package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTaskMethods registers the tasks/* methods and the middleware that
// asks for tasks.
func (c *Client) addTaskMethods() {
	for _, m := range taskwire.Methods {
		// Fails only for a standard method's name, which these are not
		// in go-sdk v1.8.0. A go-sdk that adds them makes task calls fail
		// with its "not registered" error (TestExtTaskCompletes).
		if err := mcp.AddSendingCustomMethod[*taskwire.Params, *taskwire.RawResult](c.sdk, m); err != nil {
			c.log.Error("tasks unavailable", "method", m, "error", err)
		}
	}
	c.sdk.AddSendingMiddleware(taskwire.Middleware)
}

// declareTasks adds the Tasks extension to the client's capabilities,
// which go-sdk sends with every 2026-07-28 request.
func declareTasks(opts *ClientOptions, so *mcp.ClientOptions) {
	if opts.Tasks != nil && opts.Tasks.Mode == TaskNever {
		return
	}
	so.Capabilities.AddExtension(taskwire.Extension, map[string]any{})
}

// taskRequest sends one tasks/* request and returns its result as sent.
// timeout bounds it (zero: only ctx does). A JSON-RPC error from the
// server is returned as it is; see send for the rest.
func (c *Client) taskRequest(ctx context.Context, h *TaskHandle, method string, p *taskwire.Params, timeout time.Duration) (json.RawMessage, error) {
	if p == nil {
		p = &taskwire.Params{}
	}
	if h != nil {
		p.TaskID = h.TaskID
	}
	tool := ""
	if h != nil {
		tool = h.Tool
	}
	var raw json.RawMessage
	err := c.send(ctx, engine.Request{Op: method, Tool: tool, Timeout: timeout}, func(ctx context.Context, s *engine.Session) error {
		var err error
		raw, err = taskwire.Call(ctx, s.SDK(), method, p)
		return err
	})
	return raw, err
}

// ErrNoTaskList is returned by ListTasks on a 2026-07-28 connection: the
// Tasks extension has no tasks/list.
var ErrNoTaskList = errors.New("the server speaks 2026-07-28, whose Tasks extension has no tasks/list")

// ListTasks lists the tasks the server keeps for this client, all pages
// of tasks/list (2025-11-25; a server may scope them to the session).
// The server's refusal is a *ServerError.
func (c *Client) ListTasks(ctx context.Context) ([]Task, error) {
	s, err := c.session(ctx)
	if err != nil {
		return nil, err
	}
	if s.Discover() {
		return nil, fmt.Errorf("mcpadapter: server %q: tasks/list: %w", c.name, ErrNoTaskList)
	}
	tasks, err := listAll(ctx, c, "tasks/list", func(ctx context.Context, s *engine.Session, cursor string) ([]Task, string, error) {
		raw, err := taskwire.Call(ctx, s.SDK(), "tasks/list", &taskwire.Params{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		var page struct {
			Tasks      []Task `json:"tasks"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, "", fmt.Errorf("unreadable tasks/list answer: %w", err)
		}
		return page.Tasks, page.NextCursor, nil
	})
	if err != nil {
		return nil, c.serverErr(err, "tasks/list")
	}
	return tasks, nil
}

// GetTask returns what the server says about a task (tasks/get). A task
// the server does not know is a *ServerError.
func (c *Client) GetTask(ctx context.Context, taskID string) (*Task, error) {
	if taskID == "" {
		return nil, errors.New("mcpadapter: GetTask: no task id")
	}
	st, err := c.getTask(ctx, &TaskHandle{Server: c.nameAt(ctx), TaskID: taskID})
	if err != nil {
		return nil, c.serverErr(err, "tasks/get")
	}
	return publicTask(st), nil
}

// CancelTask asks the server to cancel a task (tasks/cancel). It returns
// the task as the server describes it after the cancel, or nil when the
// server only acknowledges (2026-07-28: then GetTask tells, in time).
func (c *Client) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	if taskID == "" {
		return nil, errors.New("mcpadapter: CancelTask: no task id")
	}
	raw, err := c.taskRequest(ctx, &TaskHandle{Server: c.nameAt(ctx), TaskID: taskID}, "tasks/cancel", nil, c.opts.Timeout)
	if err != nil {
		return nil, c.serverErr(err, "tasks/cancel")
	}
	if st, err := taskwire.Read(raw); err == nil {
		return publicTask(st), nil
	}
	return nil, nil
}
