package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// observer watches the JSON-RPC messages of one client's connections. It
// writes the protocol trace (ClientOptions.Trace) and keeps the tool schemas
// exactly as the server sent them: go-sdk decodes them into maps, which
// loses key order and the precision of large numbers.
type observer struct {
	server string
	trace  *slog.Logger // nil unless tracing

	mu      sync.Mutex
	lists   map[jsonrpc.ID]struct{} // tools/list requests awaiting an answer
	nlists  atomic.Int32            // len(lists), read without mu
	schemas map[string]rawSchemas   // by tool name, from the latest tools/list
}

type rawSchemas struct {
	input, output json.RawMessage
}

func newObserver(server string, trace *slog.Logger) *observer {
	return &observer{
		server:  server,
		trace:   trace,
		lists:   make(map[jsonrpc.ID]struct{}),
		schemas: make(map[string]rawSchemas),
	}
}

// Sent records an outgoing message; raw is its encoding, or nil.
func (o *observer) Sent(msg jsonrpc.Message, raw []byte) {
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
func (o *observer) Received(msg jsonrpc.Message, raw []byte) {
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
			o.keepSchemas(resp.Result)
		}
	}
	if o.trace != nil {
		o.log("recv", msg, raw)
	}
}

func (o *observer) keepSchemas(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, t := range page.Tools {
		o.schemas[t.Name] = rawSchemas{input: t.InputSchema, output: t.OutputSchema}
	}
}

// rawSchemas returns the schemas of the named tool as last listed.
func (o *observer) rawSchemas(name string) (rawSchemas, bool) {
	if o == nil {
		return rawSchemas{}, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.schemas[name]
	return s, ok
}

func (o *observer) log(dir string, msg jsonrpc.Message, raw []byte) {
	if o.trace == nil || !o.trace.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	if raw == nil {
		var err error
		if raw, err = jsonrpc.EncodeMessage(msg); err != nil {
			return
		}
	}
	o.trace.Debug("mcp "+dir, "server", o.server, "message", redactJSON(raw))
}

// sensitiveKey matches JSON member names whose values are secrets.
var sensitiveKey = regexp.MustCompile(`(?i)(authorization|token|secret|password|passwd|api[-_]?key|cookie|credential|client[-_]?secret|session[-_]?id)`)

// redactJSON returns the JSON text with the values of secret-looking members
// replaced by "[REDACTED]". Text that is not JSON is returned as a length.
func redactJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "<not JSON>"
	}
	v = redactValue(v)
	out, err := json.Marshal(v)
	if err != nil {
		return "<unprintable>"
	}
	return string(out)
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if sensitiveKey.MatchString(k) {
				if _, isObj := x.(map[string]any); !isObj {
					v[k] = "[REDACTED]"
					continue
				}
			}
			v[k] = redactValue(x)
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x)
		}
	case string:
		return redactBearer(v)
	}
	return v
}

var bearerText = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)

func redactBearer(s string) string {
	return bearerText.ReplaceAllString(s, "$1 [REDACTED]")
}

// observedTransport reports every message of an mcp.Transport's connections
// to an observer. It must not wrap go-sdk's streamable HTTP transport, whose
// connection has hidden methods go-sdk relies on; HTTP is observed by
// tapTransport instead.
type observedTransport struct {
	inner mcp.Transport
	obs   *observer
}

func (t *observedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &observedConn{Connection: c, obs: t.obs}, nil
}

type observedConn struct {
	mcp.Connection
	obs *observer
}

func (c *observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.obs.Received(m, nil)
	}
	return m, err
}

// Write sends m. A failed write is not marked as undelivered: over SSE the
// POST may fail after the server took the message (a proxy's 502), and a
// request must not run twice; the HTTP tap marks the failures that are
// certain.
func (c *observedConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.obs.Sent(m, nil)
	return c.Connection.Write(ctx, m)
}
