package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksExtension is the identifier of the 2026-07-28 Tasks extension,
// which a stateless [PerUserServer] declares.
const TasksExtension = "io.modelcontextprotocol/tasks"

// userTasks are the tasks of one user's server (the Tasks extension of
// 2026-07-28): the whoamitask tool, called by a client that declares the
// extension, is answered with a task owned by the caller the verified
// token names; it completes at its first tasks/get with that caller's
// name. Another user's server does not know it ("unknown task").
type userTasks struct {
	user  string
	mu    sync.Mutex
	seq   int
	tasks map[string]*userTask
}

type userTask struct {
	id, owner string
	created   time.Time
	status    string
}

// userTaskView is a task as the extension describes it.
type userTaskView struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	TaskID     string          `json:"taskId"`
	Status     string          `json:"status"`
	CreatedAt  string          `json:"createdAt"`
	TTLMs      int64           `json:"ttlMs"`
	Result     json.RawMessage `json:"result,omitempty"`
}

// userTaskParams are the params of tasks/get and tasks/cancel.
type userTaskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type userTaskAck struct{ mcp.ResultBase }

// addTasks gives srv, user's server, the whoamitask tool and its tasks.
func addTasks(srv *mcp.Server, user string) {
	ut := &userTasks{user: user, tasks: map[string]*userTask{}}
	srv.AddTool(&mcp.Tool{Name: "whoamitask", Description: "Say who called, as the verified token says, from a task.",
		InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{text(userOf(req))}}, nil
		})
	srv.AddReceivingMiddleware(ut.middleware)
	must(mcp.AddReceivingCustomMethod(srv, "tasks/get", ut.get))
	must(mcp.AddReceivingCustomMethod(srv, "tasks/cancel", ut.cancel))
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// declaresTasks reports whether a request's per-request capabilities name
// the Tasks extension.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[TasksExtension]
	return ok
}

// middleware answers a whoamitask call with a task when the client
// declares the extension.
func (ut *userTasks) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil || call.Params.Name != "whoamitask" || !declaresTasks(call.Params.Meta) {
			return next(ctx, method, req)
		}
		ut.mu.Lock()
		defer ut.mu.Unlock()
		ut.seq++
		t := &userTask{id: fmt.Sprintf("task-%s-%d", ut.user, ut.seq), owner: userOf(call), created: time.Now(), status: "working"}
		ut.tasks[t.id] = t
		v := ut.view(t, nil)
		v.ResultType = "task"
		return v, nil
	}
}

// lookup returns task id if it belongs to the user whose server this is
// (the server is chosen by the request's verified token).
func (ut *userTasks) lookup(id string) (*userTask, error) {
	t := ut.tasks[id]
	if t == nil || t.owner != ut.user {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task " + id}
	}
	return t, nil
}

func (ut *userTasks) view(t *userTask, result json.RawMessage) *userTaskView {
	return &userTaskView{TaskID: t.id, Status: t.status, CreatedAt: t.created.UTC().Format(time.RFC3339), TTLMs: int64(time.Hour / time.Millisecond), Result: result}
}

func (ut *userTasks) get(_ context.Context, _ *mcp.ServerSession, p *userTaskParams) (*userTaskView, error) {
	ut.mu.Lock()
	defer ut.mu.Unlock()
	t, err := ut.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.status == "working" {
		t.status = "completed"
	}
	var result json.RawMessage
	if t.status == "completed" {
		result, _ = json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": t.owner}}})
	}
	return ut.view(t, result), nil
}

func (ut *userTasks) cancel(_ context.Context, _ *mcp.ServerSession, p *userTaskParams) (*userTaskAck, error) {
	ut.mu.Lock()
	defer ut.mu.Unlock()
	t, err := ut.lookup(p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.status == "working" {
		t.status = "cancelled"
	}
	return &userTaskAck{}, nil
}
