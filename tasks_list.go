package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/engine"
)

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
		raw, err := callTaskMethod(ctx, s, "tasks/list", &taskParams{Cursor: cursor})
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
	st, err := c.getTask(ctx, &TaskHandle{Server: c.name, TaskID: taskID})
	if err != nil {
		return nil, c.serverErr(err, "tasks/get")
	}
	return &st.Task, nil
}

// CancelTask asks the server to cancel a task (tasks/cancel). It returns
// the task as the server describes it after the cancel, or nil when the
// server only acknowledges (2026-07-28: then GetTask tells, in time).
func (c *Client) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	if taskID == "" {
		return nil, errors.New("mcpadapter: CancelTask: no task id")
	}
	raw, err := c.taskRequest(ctx, &TaskHandle{Server: c.name, TaskID: taskID}, "tasks/cancel", nil, c.opts.Timeout)
	if err != nil {
		return nil, c.serverErr(err, "tasks/cancel")
	}
	if st, err := readTask(raw); err == nil {
		return &st.Task, nil
	}
	return nil, nil
}
