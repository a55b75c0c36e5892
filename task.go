package mcpadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
)

// MCP tasks let a server answer a tools/call with a task handle and the
// result later: the client polls tasks/get and fetches the result. Two
// protocols exist. The 2025-11-25 protocol has them as an experimental
// part of the core: the client asks for a task with a "task" member in
// the tools/call params, as a tool's execution.taskSupport allows
// ("required", "optional", "forbidden"), and fetches the result with
// tasks/result. The 2026-07-28 protocol has them as the Tasks extension
// (io.modelcontextprotocol/tasks): the client declares the extension in
// its per-request capabilities, the server decides whether to make a
// task (resultType "task"), tasks/get carries the result or the questions
// (inputRequests), and tasks/update answers them.
//
// A Tool's Call hides either: it returns the task's result as it would a
// plain call's. CallOptions.OnTask hands the caller the TaskHandle, plain
// data that Client.ResumeTask takes in another process.

// TaskProtocol names the protocol a task was made with.
type TaskProtocol string

const (
	// TaskProtocolCore is the experimental tasks of protocol 2025-11-25.
	TaskProtocolCore TaskProtocol = "2025-11-25"
	// TaskProtocolExtension is the Tasks extension of 2026-07-28.
	TaskProtocolExtension TaskProtocol = "io.modelcontextprotocol/tasks"
)

// TaskMode says when a tool call runs as a task.
type TaskMode int

const (
	// TaskDefault, on CallOptions, takes the client's mode; on
	// TaskOptions it is TaskAuto.
	TaskDefault TaskMode = iota
	// TaskAuto makes a task when the tool requires one (taskSupport
	// "required", 2025-11-25), and lets a 2026-07-28 server make one when
	// it chooses.
	TaskAuto
	// TaskPrefer is TaskAuto, and also asks for a task when the tool
	// allows one (taskSupport "optional").
	TaskPrefer
	// TaskNever never asks for a task: a tool that requires one is
	// refused by its server. On a client it also leaves the Tasks
	// extension undeclared; on one call it cannot, as go-sdk declares a
	// client's capabilities with every request, so a 2026-07-28 server
	// may still answer that call with a task, which is then followed.
	TaskNever
)

// TaskOptions configures a client's task calls (ClientOptions.Tasks).
type TaskOptions struct {
	// Mode is the client's TaskMode; per call, CallOptions.Task overrides
	// it.
	Mode TaskMode
	// TTL is how long the server should keep a task after it is made,
	// asked of 2025-11-25 servers; zero leaves it to the server.
	TTL time.Duration
	// MinPoll and MaxPoll bound the interval between two tasks/get: the
	// server's pollInterval is kept within them, and without one the
	// interval starts at MinPoll*4 and grows by half up to MaxPoll.
	// Defaults: 50ms and 10s.
	MinPoll, MaxPoll time.Duration
}

// ttl is the TTL to ask for; zero for nil options.
func (o *TaskOptions) ttl() time.Duration {
	if o == nil {
		return 0
	}
	return o.TTL
}

// TaskHandle names a task on its server. It is plain data: save it (JSON)
// and give it to Client.ResumeTask, in this process or another, to get the
// task's result.
type TaskHandle struct {
	// Server is the name of the server (ServerInfo.Name) that runs it.
	Server string `json:"server"`
	// Tool is the server's name for the tool; ModelTool the model's.
	Tool      string `json:"tool"`
	ModelTool string `json:"modelTool,omitempty"`
	// TaskID is the server's id for the task.
	TaskID string `json:"taskId"`
	// Protocol is the task protocol the server spoke.
	Protocol TaskProtocol `json:"protocol"`
	// Principal is the CallIdentity.Principal the task was started for:
	// ResumeTask refuses it for another.
	Principal string `json:"principal,omitempty"`
}

// TaskStatus is the state of a task.
type TaskStatus string

// The statuses of a task; the last three are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether a task in status s is over.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is what a server says about a task (tasks/get, tasks/list).
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt,omitempty"`
	LastUpdatedAt string     `json:"lastUpdatedAt,omitempty"`
	// TTL is how long the server keeps the task, in milliseconds; nil:
	// not said, or unlimited. (2026-07-28 servers say "ttlMs".)
	TTL *int64 `json:"ttl,omitempty"`
	// PollInterval is the server's advice, in milliseconds, or nil.
	// (2026-07-28 servers say "pollIntervalMs".)
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// TaskCancelledError is the error of a task call that ended cancelled:
// the caller's context ended, after the server's answer made the task
// (while it ran or waited for the user's answer), and tasks/cancel was
// sent (Requested); or the server cancelled the task itself; or the
// task's questions could not be answered and the tasks/cancel sent for
// it failed (Err says why the call could not go on). errors.Is(err,
// context.Canceled) holds when the caller's context was cancelled,
// errors.Is(err, context.DeadlineExceeded) when its deadline passed. A
// context that ends before the server's answer is not this error: see
// CallOptions.Task.
type TaskCancelledError struct {
	Handle TaskHandle
	// Requested is set when this client sent tasks/cancel; Confirmed when
	// the server acknowledged it, and CancelErr says why not otherwise.
	Requested, Confirmed bool
	CancelErr            error
	// StatusMessage is the server's word on the cancelled task, if any.
	StatusMessage string
	// Err is why the call ended (the context's cause), or nil.
	Err error
}

func (e *TaskCancelledError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: server %q, tool %q: task %s ", e.Handle.Server, e.Handle.Tool, e.Handle.TaskID)
	switch {
	case !e.Requested:
		b.WriteString("was cancelled by the server")
		if e.StatusMessage != "" {
			fmt.Fprintf(&b, " (%s)", e.StatusMessage)
		}
	case e.Confirmed:
		b.WriteString("was cancelled on the server (tasks/cancel acknowledged)")
	default:
		fmt.Fprintf(&b, "may still run on the server: tasks/cancel failed: %v", e.CancelErr)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ", because the call ended: %v", e.Err)
	}
	return b.String()
}

func (e *TaskCancelledError) Unwrap() error { return e.Err }

// TaskError is the error of a task the client could not follow: the
// server no longer knows it (a tasks/get or tasks/result refused), or
// answered what cannot be read. The task may still run: its Handle can be
// given to Client.ResumeTask, or to Client.CancelTask.
type TaskError struct {
	Handle TaskHandle
	// Op is the request that failed, such as "tasks/get".
	Op  string
	Err error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("mcpadapter: server %q, tool %q: %s of task %s: %v", e.Handle.Server, e.Handle.Tool, e.Op, e.Handle.TaskID, e.Err)
}

func (e *TaskError) Unwrap() error { return e.Err }

// taskMode is the mode of one call.
func (c *Client) taskMode(tc *toolCall) TaskMode {
	m := tc.task
	if m == TaskDefault && c.opts.Tasks != nil {
		m = c.opts.Tasks.Mode
	}
	if m == TaskDefault {
		m = TaskAuto
	}
	return m
}

// mayWantTask reports whether tc would be a task on a 2025-11-25
// connection, before connecting.
func (c *Client) mayWantTask(ctx context.Context, tc *toolCall) bool {
	switch c.eng.Observer(ctx).TaskSupport(tc.tool) {
	case "required":
		return c.taskMode(tc) != TaskNever
	case "optional":
		return c.taskMode(tc) == TaskPrefer
	}
	return false
}

// wantsTask reports whether tc is sent as a task-augmented tools/call:
// on a 2025-11-25 connection, when the tool's taskSupport (from the
// latest tools/list) and the call's mode say so.
func (c *Client) wantsTask(ctx context.Context, s *engine.Session, tc *toolCall) bool {
	return !s.Discover() && c.mayWantTask(ctx, tc)
}

// taskState is a task as the server described it (taskwire.State).
type taskState = taskwire.State

// taskCreated reads a tools/call result as sent: a task the server made,
// and the protocol it made it with; ok is false for any other result.
func taskCreated(raw json.RawMessage) (st *taskState, proto TaskProtocol, ok bool, err error) {
	st, p, ok, err := taskwire.Created(raw)
	return st, TaskProtocol(p), ok, err
}

// publicTask is the Task of st.
func publicTask(st *taskState) *Task {
	return &Task{TaskID: st.TaskID, Status: TaskStatus(st.Status), StatusMessage: st.StatusMessage,
		CreatedAt: st.CreatedAt, LastUpdatedAt: st.LastUpdatedAt, TTL: st.TTL, PollInterval: st.PollInterval}
}

// taskModeOf reads a config's "tasks" member.
func taskModeOf(s string) TaskMode {
	switch s {
	case "auto":
		return TaskAuto
	case "prefer":
		return TaskPrefer
	case "never":
		return TaskNever
	}
	return TaskDefault
}
