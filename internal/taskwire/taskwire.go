package taskwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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

// ProbeOf decodes the fields of raw that make it a task; ok is false
// when raw is not a JSON object.
func ProbeOf(raw json.RawMessage) (probe Probe, ok bool) {
	return probe, json.Unmarshal(raw, &probe) == nil
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
