package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: a plain tools/call over stdio is written by the adapter
// on the connection it owns (internal/stdio's Conn.RoundTrip), and over
// streamable HTTP POSTed by the adapter through the session's HTTP client
// (fasthttp.go), and its answer is handed straight back, instead of going
// through go-sdk's request machinery, which costs several times the CPU
// and 70–240 KB of garbage per call (docs/dev/benchmarks.md).
// go-sdk still makes the connection, lists, handles every request and
// notification the server sends, and makes every call that is not plain;
// over HTTP an answer that carries anything but the result is handed over
// to go-sdk as it came (fasthttp_handoff.go).
//
// A call is plain when nothing but its name and arguments travel with it:
// no progress handler (CallOptions.Progress, ClientOptions.
// ProgressHandler), no _meta, no response cache, not an ElicitInterrupt
// client, a stdio connection or a streamable HTTP session (not the legacy
// SSE transport; not with ClientOptions.Trace, whose trace would show a
// call handed over to go-sdk twice; at 2026-07-28 only for a tool whose input schema, as
// listed, has no x-mcp-header, for which go-sdk sends Mcp-Param-*
// headers), and on a 2026-07-28 connection once go-sdk
// has made one plain call there (whose _meta, the protocol version, client
// info and capabilities go-sdk adds to every request of that era, the
// fast path then sends as it is). The answer is decoded here when it is
// one of the common shapes (fastresult.go) and by go-sdk's own decoder
// otherwise; an answer that asks for input (input_required) is left to
// go-sdk, which runs its multi-round-trip loop from the answer the fast
// path holds (handed over: over HTTP fasthttp_handoff.go, over stdio
// internal/stdio's handoff.go), so the server runs the tool once.
// ClientOptions.DisableFastPath (or building with the tag
// mcpadapter_nofastpath, which the tests use to run everything on
// go-sdk's path) turns it off.

// fastState is what the fast path knows of one session.
type fastState struct {
	// meta is the _meta go-sdk sends with every request on a 2026-07-28
	// connection, as JSON; nil until go-sdk has made a plain call.
	meta atomic.Pointer[[]byte]
	// resultMeta is the last _meta of a result, decoded (fastresult.go).
	resultMeta metaMemo
	// http is set for a streamable HTTP session (fasthttp.go).
	http *fastHTTP
}

// sdkMetaKeys returns go-sdk's _meta keys of a 2026-07-28 request.
func sdkMetaKeys() [3]string {
	return [3]string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}
}

// plainCall reports whether tc, about to be sent on s with params under
// ctx, may take the fast path. Not plain: a _meta set on params (a
// progress token, for a timeout that restarts on progress; the fast path
// sends none) and a call asked to run as a task (go-sdk's sending
// middleware adds its "task" member, task_rpc.go).
func (c *Client) plainCall(ctx context.Context, s *session, tc *toolCall, params *mcp.CallToolParams) bool {
	if !c.fastPathOn(s) || !c.plainOptions(tc) {
		return false
	}
	if len(params.Meta) > 0 || ctx.Value(taskAskKey{}) != nil {
		return false
	}
	if s.fast.http != nil && c.opts.Trace {
		// A call handed over to go-sdk would show twice in the trace:
		// its request and the answer replayed to go-sdk are seen again.
		return false
	}
	switch s.info.Era {
	case EraHandshake:
		return true
	case EraDiscover:
		return s.fast.meta.Load() != nil && !c.paramHeaders(s, params.Name)
	}
	return false
}

// fastPathOn reports whether the fast path is on for s: not turned off,
// and s a stdio or streamable HTTP connection.
func (c *Client) fastPathOn(s *session) bool {
	return !fastPathOff && !c.opts.DisableFastPath && (s.stdio != nil || s.fast.http != nil)
}

// paramHeaders reports whether go-sdk sends Mcp-Param-* headers with a
// call of the tool over HTTP: the input schema it was listed with has
// x-mcp-header annotations (calls of such tools are left to go-sdk).
func (c *Client) paramHeaders(s *session, tool string) bool {
	if s.fast.http == nil {
		return false
	}
	in, _, _ := c.obs.RawSchemas(tool)
	return bytes.Contains(in, []byte("x-mcp-header"))
}

// plainOptions reports whether nothing but tc's name and arguments travel
// with it.
func (c *Client) plainOptions(tc *toolCall) bool {
	return tc.progress == nil && tc.meta == nil && c.opts.ProgressHandler == nil && c.cache == nil && c.interrupt == nil
}

// learnFast keeps the _meta go-sdk sent with params, a plain call it made
// on s, a 2026-07-28 connection, for the fast path's later calls.
func (c *Client) learnFast(s *session, tc *toolCall, params *mcp.CallToolParams) {
	if !c.fastPathOn(s) || s.info.Era != EraDiscover || s.fast.meta.Load() != nil || !c.plainOptions(tc) {
		return
	}
	keys := sdkMetaKeys()
	if len(params.Meta) != len(keys) {
		return
	}
	for _, k := range keys {
		if _, ok := params.Meta[k]; !ok {
			return
		}
	}
	b, err := json.Marshal(params.Meta)
	if err != nil {
		return
	}
	s.fast.meta.Store(&b)
}

// sentResult is a result as the server wrote it.
type sentResult json.RawMessage

func (r sentResult) Result() (json.RawMessage, bool) { return json.RawMessage(r), r != nil }

// plainSent is a result as the server wrote it that decodePlainResult
// took: its members are content, isError, structuredContent, _meta and
// resultType "complete", so it is no task (taskReply need not read it
// again: what taskCreated would find is known).
type plainSent json.RawMessage

func (r plainSent) Result() (json.RawMessage, bool) { return json.RawMessage(r), r != nil }

// callFast makes the plain call params on s's stdio connection or, over
// streamable HTTP, with a POST of its own (fasthttp.go). It
// returns what go-sdk's CallTool would, and the result as sent.
func (c *Client) callFast(ctx context.Context, s *session, params *mcp.CallToolParams) (*mcp.CallToolResult, rawSource, error) {
	args, ok := params.Arguments.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(params.Arguments)
		if err != nil {
			return nil, nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
		}
		args = b
	}
	var meta []byte
	if m := s.fast.meta.Load(); m != nil {
		meta = *m
	}
	var result json.RawMessage
	if s.stdio != nil {
		resp, err := s.stdio.RoundTrip(ctx, "tools/call", func(buf []byte, id int64) []byte {
			return appendCallRequest(buf, id, params.Name, args, meta)
		})
		if err != nil {
			return nil, nil, err
		}
		result = resp.Result
	} else {
		var res *mcp.CallToolResult
		var err error
		if result, res, err = c.roundTripHTTP(ctx, s, params, args, meta); result == nil {
			return res, nil, err // handed over to go-sdk, or failed
		}
	}
	if res, ok := decodePlainResult(result, &s.fast.resultMeta); ok {
		return res, plainSent(result), nil
	}
	// go-sdk's own decoding of a result (what its CallTool does with it).
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(result); err != nil {
		return nil, sentResult(result), fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	if res.InputRequests != nil {
		// go-sdk's multi-round-trip loop answers these and retries:
		// leave the call to it, starting from this answer, which go-sdk's
		// call is answered with at the connection (internal/stdio
		// handoff.go), so the server runs the tool once. (Over HTTP
		// roundTripHTTP handed such an answer over already.)
		c.log.Debug("the server asked for input; handing the call over to go-sdk", "tool", params.Name)
		if s.stdio != nil {
			h := stdio.NewHandOff(result, func(buf []byte, id int64) []byte { return appendPing(buf, id, meta) })
			ctx = stdio.WithHandOff(ctx, h)
		}
		res, err := s.cs.CallTool(ctx, params)
		return res, nil, err
	}
	return res, sentResult(result), nil
}

// appendCallRequest appends the tools/call request with id for the tool
// name, with args (one JSON object) and, if not nil, meta as its _meta.
func appendCallRequest(buf []byte, id int64, name string, args, meta []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"tools/call","params":{`...)
	if meta != nil {
		buf = append(buf, `"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"name":`...)
	buf = appendJSONString(buf, name)
	buf = append(buf, `,"arguments":`...)
	if len(args) == 0 {
		buf = append(buf, "{}"...)
	} else if bytes.ContainsAny(args, "\r\n") {
		// A message is one line: drop the whitespace between tokens.
		var b bytes.Buffer
		if json.Compact(&b, args) == nil {
			buf = append(buf, b.Bytes()...)
		} else {
			buf = append(buf, "{}"...) // unreachable: call checked args
		}
	} else {
		buf = append(buf, args...)
	}
	return append(buf, "}}"...)
}

// appendPing appends a ping request with id and, if not nil, meta as its
// _meta.
func appendPing(buf []byte, id int64, meta []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"ping"`...)
	if meta != nil {
		buf = append(buf, `,"params":{"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, '}')
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// jsonString decodes b, the text of a JSON string, when it has no \u
// escape and is valid UTF-8 (what go-sdk's decoder would make of the rest
// is left to it).
func jsonString(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	b = b[1 : len(b)-1]
	if bytes.IndexByte(b, '\\') < 0 {
		if !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(b) {
			return "", false
		}
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return "", false
		}
	}
	if !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}
