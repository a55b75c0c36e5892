package taskwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk v1.8.0 knows no tasks. The tasks/* methods are sent as custom
// methods (mcp.CallCustomMethod) whose results are kept as the server
// wrote them, and the "task" member of a task-augmented tools/call is
// added by Middleware; the answer, a CreateTaskResult go-sdk decodes
// as an empty CallToolResult, is read from the wire layer's copy of the
// result as sent.

// Methods are the methods of both task protocols; tasks/result and
// tasks/list are 2025-11-25 only, tasks/update is the extension's.
var Methods = []string{"tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tasks/update"}

// Extension is the Tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// Params are the params of every tasks/* request.
type Params struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId,omitempty"`
	Cursor         string               `json:"cursor,omitempty"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
	RequestState   string               `json:"requestState,omitempty"`
}

// RawResult keeps a result as the server wrote it.
type RawResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

func (r *RawResult) UnmarshalJSON(b []byte) error {
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// callParams are tools/call params with the "task" member.
type callParams struct {
	mcp.ParamsBase
	Name      string `json:"name"`
	Arguments any    `json:"arguments,omitempty"`
	Task      *ask   `json:"task"`
}

// Middleware sends a tools/call whose context WithAsk made with
// the "task" member. Added after the other sending middleware, it runs
// last, so they see the call's usual params.
func Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ask, ok := ctx.Value(askKey{}).(*ask)
		if !ok || method != "tools/call" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.CallToolParams)
		cs, ok2 := req.GetSession().(*mcp.ClientSession)
		if !ok || !ok2 {
			return next(ctx, method, req)
		}
		tp := &callParams{ParamsBase: mcp.ParamsBase{Meta: p.Meta}, Name: p.Name, Arguments: p.Arguments, Task: ask}
		return next(ctx, method, &mcp.ClientRequest[*callParams]{Session: cs, Params: tp})
	}
}

// Call sends one tasks/* request on cs and returns its result as the
// server wrote it.
func Call(ctx context.Context, cs *mcp.ClientSession, method string, p *Params) (json.RawMessage, error) {
	cp := *p // go-sdk adds _meta to the params: a copy per attempt
	res, err := mcp.CallCustomMethod[*Params, *RawResult](ctx, cs, method, &cp)
	if err != nil {
		return nil, err
	}
	return res.Raw, nil
}

// Probe is what decides whether a tools/call result is a task.
type Probe struct {
	ResultType string          `json:"resultType"`
	Task       json.RawMessage `json:"task"`
}

// ProbeOf decodes the fields of raw that make it a task, by their exact
// names, as go-sdk reads a result's members (plaincall.Round reads a
// round's resultType so: a result is never both, nor a task to one
// reading and plain to the other); ok is false when raw is not a JSON
// object or its resultType is not a string.
func ProbeOf(raw json.RawMessage) (probe Probe, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return Probe{}, false
	}
	if rt, found := m["resultType"]; found && json.Unmarshal(rt, &probe.ResultType) != nil {
		return Probe{}, false
	}
	probe.Task = m["task"]
	return probe, true
}

// MayBe reports whether raw could be a task, cheaply, so that the
// results of most calls are not decoded a second time: a task needs the
// word "task" (the key "task", or the value of "resultType"), which
// encoding/json matches in keys without regard to case, and which may
// also be spelled with escapes or reached by Unicode case folding (the
// Kelvin sign folds to "k"). raw without a backslash, without a
// non-ASCII byte and without "task" in any case is no task.
// The root's FuzzTaskResult checks this against the full decode.
func MayBe(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') >= 0 {
		return true
	}
	i := 0
	for ; i+8 <= len(raw); i += 8 { // non-ASCII, 8 bytes at a time
		if binary.LittleEndian.Uint64(raw[i:])&0x8080808080808080 != 0 {
			return true
		}
	}
	for ; i < len(raw); i++ {
		if raw[i] >= 0x80 {
			return true
		}
	}
	for _, k := range [2]byte{'k', 'K'} {
		for at := 0; ; {
			j := bytes.IndexByte(raw[at:], k)
			if j < 0 {
				break
			}
			at += j + 1
			if j := at - 1; j >= 3 && raw[j-3]|0x20 == 't' && raw[j-2]|0x20 == 'a' && raw[j-1]|0x20 == 's' {
				return true
			}
		}
	}
	return false
}

// askKey is the context key of the "task" member a tools/call carries
// (see Middleware).
type askKey struct{}

// ask is the "task" member of a task-augmented tools/call.
type ask struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// WithAsk returns a context whose tools/call Middleware sends as a task,
// asking the server to keep it for ttl (zero: the server's choice).
func WithAsk(ctx context.Context, ttl time.Duration) context.Context {
	a := &ask{}
	if ttl > 0 {
		ms := ttl.Milliseconds()
		a.TTL = &ms
	}
	return context.WithValue(ctx, askKey{}, a)
}

// State is a task as tasks/get, or the tools/call that made it,
// described it, in the members of both protocols.
type State struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	// TTL and PollInterval are in milliseconds, nil when not said.
	TTL          *int64 `json:"ttl,omitempty"`
	PollInterval *int64 `json:"pollInterval,omitempty"`
	// The extension's names for PollInterval and TTL.
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	TTLMs          *int64          `json:"ttlMs,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	RequestState   string          `json:"requestState,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *RPCError       `json:"error,omitempty"`
}

// RPCError is the JSON-RPC error of a failed task.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Interval returns the server's advised poll interval, or 0.
func (t *State) Interval() time.Duration {
	ms := t.PollInterval
	if ms == nil {
		ms = t.PollIntervalMs
	}
	if ms == nil || *ms <= 0 || *ms > int64(24*time.Hour/time.Millisecond) {
		return 0
	}
	return time.Duration(*ms) * time.Millisecond
}

// Created reads a tools/call result as sent: a 2025-11-25
// CreateTaskResult ({"task": {...}}, proto "2025-11-25") or a 2026-07-28
// task ({"resultType": "task", ...}, proto Extension). ok is false for
// any other result.
func Created(raw json.RawMessage) (st *State, proto string, ok bool, err error) {
	if len(raw) == 0 || !MayBe(raw) {
		return nil, "", false, nil
	}
	probe, ok := ProbeOf(raw)
	if !ok {
		return nil, "", false, nil
	}
	switch {
	case probe.ResultType == "task":
		st, proto = new(State), Extension
		err = json.Unmarshal(raw, st)
	case len(probe.Task) > 0 && string(probe.Task) != "null" && probe.ResultType == "":
		st, proto = new(State), "2025-11-25"
		err = json.Unmarshal(probe.Task, st)
	default:
		return nil, "", false, nil
	}
	if err == nil && st.TaskID == "" {
		err = errors.New("the task has no taskId")
	}
	if err != nil {
		return nil, proto, true, fmt.Errorf("reading the task the server made: %w", err)
	}
	if st.Status == "" {
		st.Status = "working"
	}
	st.normalize()
	return st, proto, true, nil
}

// Read reads a tasks/get (or tasks/cancel) result.
func Read(raw json.RawMessage) (*State, error) {
	st := new(State)
	if err := json.Unmarshal(raw, st); err != nil {
		return nil, err
	}
	if st.Status == "" {
		return nil, errors.New("the task has no status")
	}
	st.normalize()
	return st, nil
}

// normalize gives TTL and PollInterval the extension's ttlMs and pollIntervalMs.
func (t *State) normalize() {
	if t.TTL == nil {
		t.TTL = t.TTLMs
	}
	if t.PollInterval == nil {
		t.PollInterval = t.PollIntervalMs
	}
}
