package mcpadapter

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk v1.8.0 knows no tasks. The tasks/* methods are sent as custom
// methods (mcp.CallCustomMethod) whose results are kept as the server
// wrote them, and the "task" member of a task-augmented tools/call is
// added by taskMiddleware; the answer, a CreateTaskResult go-sdk decodes
// as an empty CallToolResult, is read from the wire layer's copy of the
// result as sent.

// The methods of both task protocols; tasks/result and tasks/list are
// 2025-11-25 only, tasks/update is the extension's.
var taskMethods = []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}

// extensionTasks is the Tasks extension's identifier.
const extensionTasks = "io.modelcontextprotocol/tasks"

// taskParams are the params of every tasks/* request.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId,omitempty"`
	Cursor         string               `json:"cursor,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
	RequestState   string               `json:"requestState,omitempty"`
}

// rawTaskResult keeps a result as the server wrote it.
type rawTaskResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawTaskResult) UnmarshalJSON(b []byte) error {
	r.raw = append(json.RawMessage(nil), b...)
	return nil
}

// taskCallParams are tools/call params with the "task" member.
type taskCallParams struct {
	mcp.ParamsBase
	Name      string   `json:"name"`
	Arguments any      `json:"arguments,omitempty"`
	Task      *taskAsk `json:"task"`
}

// addTaskMethods registers the tasks/* methods and the middleware that
// asks for tasks.
func (c *Client) addTaskMethods() {
	for _, m := range taskMethods {
		// Fails only for a standard method's name, which these are not
		// in go-sdk v1.8.0. A go-sdk that adds them makes task calls fail
		// with its "not registered" error (TestExtTaskCompletes).
		if err := mcp.AddSendingCustomMethod[*taskParams, *rawTaskResult](c.sdk, m); err != nil {
			c.log.Error("tasks unavailable", "method", m, "error", err)
		}
	}
	c.sdk.AddSendingMiddleware(c.taskMiddleware)
}

// declareTasks adds the Tasks extension to the client's capabilities,
// which go-sdk sends with every 2026-07-28 request.
func declareTasks(opts *ClientOptions, so *mcp.ClientOptions) {
	if opts.Tasks != nil && opts.Tasks.Mode == TaskNever {
		return
	}
	so.Capabilities.AddExtension(extensionTasks, map[string]any{})
}

// taskMiddleware sends a tools/call whose context carries a taskAsk with
// the "task" member. Added after the other sending middleware, it runs
// last, so they see the call's usual params.
func (c *Client) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ask, ok := ctx.Value(taskAskKey{}).(*taskAsk)
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParams)
		cs, ok2 := req.GetSession().(*mcp.ClientSession)
		if !ok || !ok2 {
			return next(ctx, method, req)
		}
		tp := &taskCallParams{ParamsBase: mcp.ParamsBase{Meta: p.Meta}, Name: p.Name, Arguments: p.Arguments, Task: ask}
		return next(ctx, method, &mcp.ClientRequest[*taskCallParams]{Session: cs, Params: tp})
	}
}

// taskRequest sends one tasks/* request and returns its result as sent.
// timeout bounds it (zero: only ctx does). A JSON-RPC error from the
// server is returned as it is; see send for the rest.
func (c *Client) taskRequest(ctx context.Context, h *TaskHandle, method string, p *taskParams, timeout time.Duration) (json.RawMessage, error) {
	if p == nil {
		p = &taskParams{}
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
		raw, err = callTaskMethod(ctx, s, method, p)
		return err
	})
	return raw, err
}

// callTaskMethod sends one tasks/* request on s.
func callTaskMethod(ctx context.Context, s *engine.Session, method string, p *taskParams) (json.RawMessage, error) {
	cp := *p // go-sdk adds _meta to the params: a copy per attempt
	res, err := mcp.CallCustomMethod[*taskParams, *rawTaskResult](ctx, s.SDK(), method, &cp)
	if err != nil {
		return nil, err
	}
	return res.raw, nil
}
