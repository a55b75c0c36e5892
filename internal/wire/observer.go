package wire

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Observer watches the JSON-RPC messages of one client's connections. It
// writes the protocol trace and keeps the tool schemas exactly as the
// server sent them: go-sdk decodes them into maps, which loses key order
// and the precision of large numbers. A nil *Observer observes nothing.
type Observer struct {
	server string
	trace  *slog.Logger // nil unless tracing

	mu      sync.Mutex
	lists   map[jsonrpc.ID]struct{} // tools/list requests awaiting an answer
	nlists  atomic.Int32            // len(lists), read without mu
	schemas map[string]rawSchemas   // by tool name, from the latest tools/list
}

type rawSchemas struct {
	input, output json.RawMessage
	taskSupport   string // execution.taskSupport, or ""
}

// NewObserver returns an Observer for the named server. If trace is not
// nil, every message is logged to it at debug level, redacted, with the
// server's name.
func NewObserver(server string, trace *slog.Logger) *Observer {
	return &Observer{
		server:  server,
		trace:   trace,
		lists:   make(map[jsonrpc.ID]struct{}),
		schemas: make(map[string]rawSchemas),
	}
}

// Partition returns an Observer of another set of connections of the
// same server (those of one principal): it writes the same trace and
// keeps its own tool schemas. It returns nil for a nil o.
func (o *Observer) Partition() *Observer {
	if o == nil {
		return nil
	}
	return NewObserver(o.server, o.trace)
}

type observerKey struct{}

// WithObserver returns ctx carrying o, the Observer of the connection a
// request made with ctx is sent on (a principal's own, see Partition).
func WithObserver(ctx context.Context, o *Observer) context.Context {
	return context.WithValue(ctx, observerKey{}, o)
}

// ObserverFrom returns the Observer set by WithObserver, or nil.
func ObserverFrom(ctx context.Context) *Observer {
	o, _ := ctx.Value(observerKey{}).(*Observer)
	return o
}

// Sent records an outgoing message; raw is its encoding, or nil.
func (o *Observer) Sent(msg jsonrpc.Message, raw []byte) {
	if o == nil {
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		o.mu.Lock()
		o.lists[req.ID] = struct{}{}
		o.nlists.Store(int32(len(o.lists)))
		o.mu.Unlock()
	}
	if o.trace != nil {
		o.log("send", msg, raw)
	}
}

// Received records an incoming message; raw is its encoding, or nil.
func (o *Observer) Received(msg jsonrpc.Message, raw []byte) {
	if o == nil {
		return
	}
	// Most responses answer calls: no lock unless a tools/list is pending.
	if resp, ok := msg.(*jsonrpc.Response); ok && o.nlists.Load() > 0 {
		o.mu.Lock()
		_, isList := o.lists[resp.ID]
		delete(o.lists, resp.ID)
		o.nlists.Store(int32(len(o.lists)))
		o.mu.Unlock()
		if isList && resp.Error == nil {
			o.KeepSchemas(resp.Result)
		}
	}
	if o.trace != nil {
		o.log("recv", msg, raw)
	}
}

// KeepSchemas records the tool schemas of result, the result of a
// tools/list request the Observer did not see answered (one served from a
// cache). Text that is not such a result is ignored.
func (o *Observer) KeepSchemas(result json.RawMessage) {
	if o == nil {
		return
	}
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Execution    struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, t := range page.Tools {
		o.schemas[t.Name] = rawSchemas{input: t.InputSchema, output: t.OutputSchema, taskSupport: t.Execution.TaskSupport}
	}
}

// TaskSupport returns the execution.taskSupport of the named tool in the
// latest tools/list answer ("required", "optional", "forbidden"), or ""
// when it is not said or the tool was not listed.
func (o *Observer) TaskSupport(tool string) string {
	if o == nil {
		return ""
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.schemas[tool].taskSupport
}

// RawSchemas returns the input and output schemas of the named tool as the
// server wrote them in the latest tools/list answer; ok is false if no
// answer listed the tool. Either schema may be empty (absent) or "null".
func (o *Observer) RawSchemas(tool string) (input, output json.RawMessage, ok bool) {
	if o == nil {
		return nil, nil, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.schemas[tool]
	return s.input, s.output, ok
}

// tracing reports whether o writes a trace.
func (o *Observer) tracing() bool {
	return o != nil && o.trace != nil
}

func (o *Observer) log(dir string, msg jsonrpc.Message, raw []byte) {
	if o.trace == nil || !o.trace.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if raw == nil {
		var err error
		if raw, err = jsonrpc.EncodeMessage(msg); err != nil {
			return
		}
	}
	o.trace.Debug("mcp "+dir, "server", o.server, "message", RedactJSON(raw))
}

// ToolSchemas returns t's input and output schemas as JSON: as the server
// wrote them in the latest tools/list answer when o saw it, else as go-sdk
// decoded them. A tool without an input schema gets {"type":"object"}; an
// output schema absent or null is nil.
func (o *Observer) ToolSchemas(t *mcp.Tool) (input, output json.RawMessage, err error) {
	rawIn, rawOut, ok := o.RawSchemas(t.Name)
	switch {
	case ok && len(rawIn) > 0:
		input = rawIn
	case t.InputSchema != nil:
		if input, err = json.Marshal(t.InputSchema); err != nil {
			return nil, nil, err
		}
	default:
		input = json.RawMessage(`{"type":"object"}`)
	}
	switch {
	case ok && len(rawOut) > 0 && string(rawOut) != "null":
		output = rawOut
	case t.OutputSchema != nil:
		if output, err = json.Marshal(t.OutputSchema); err != nil {
			return nil, nil, err
		}
	}
	return input, output, nil
}
