package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A plain call on the fast path skips go-sdk's session too: the gateway
// still makes the request's own initialized session (lean.go), as every
// request of a 2026-07-28 client has, but calls its receiving middleware
// (Gateway.middleware) itself, in the request's goroutine, over what
// go-sdk's session would call beneath it for a tools/call (directTool:
// the registry's tool, its handler, the result made as go-sdk's
// Server.callTool makes it), and writes the answer as go-sdk's JSON-RPC
// connection would. go-sdk's session would decode the params twice more
// (each time with a new 32 KB decoder) and run the call on two goroutines
// of its own, each growing a fresh stack.
//
// A call is direct when, besides the fast path's rule, its session is
// lean (lean.go), its params hold only name, arguments and _meta and read
// as go-sdk reads them, and go-sdk's registry holds the tool
// (catalog.isRegistered). TestFastPathDifferential holds the answers to
// go-sdk's.

// readDirect sets f.call, its params, when f's call is direct.
func (f *fastRequest) readDirect(c *catalog) {
	if f.init == nil || !f.plain || !c.isRegistered(f.name) {
		return
	}
	if p, ok := f.directParams(); ok {
		f.call = p
		return
	}
	p, ok := decodeAsSDK[mcp.CallToolParamsRaw](f.leanParams())
	if !ok || p.Name != f.name {
		return
	}
	f.call = p
}

// directParams returns a lean plain call's params (f.leanParams) as go-sdk's
// decoder reads them, made from the members the fast path has read
// (f.pm, f.meta) rather than decoding the params again, when its
// arguments are absent or an object and its _meta holds nothing but what
// the lean session took (leanKeys); ok is false otherwise (they are
// decoded then). FuzzFastRequest (checkLeanParams) holds it to go-sdk's
// decoding.
func (f *fastRequest) directParams() (*mcp.CallToolParamsRaw, bool) {
	for k := range f.meta {
		if !slices.Contains(leanKeys, k) {
			return nil, false
		}
	}
	p := &mcp.CallToolParamsRaw{Meta: mcp.Meta{}, Name: f.name}
	if args, ok := f.pm["arguments"]; ok {
		if len(args) == 0 || args[0] != '{' {
			return nil, false
		}
		p.Arguments = bytes.Clone(args)
	}
	return p, true
}

// metalessParams returns a plain call's params (f.msg.Params) without a
// _meta, a handshake-era client's common call, as go-sdk's decoder reads
// them, made from the members the fast path has read (f.pm) rather than
// decoding the params again, when its arguments are absent or an object;
// ok is false otherwise (they are decoded then). FuzzFastRequest holds it
// to go-sdk's decoding.
func (f *fastRequest) metalessParams() (*mcp.CallToolParamsRaw, bool) {
	if _, ok := f.pm["_meta"]; ok || !f.plain {
		return nil, false
	}
	p := &mcp.CallToolParamsRaw{Name: f.name}
	if args, ok := f.pm["arguments"]; ok {
		if len(args) == 0 || args[0] != '{' {
			return nil, false
		}
		p.Arguments = bytes.Clone(args)
	}
	return p, true
}

// answerDirect answers f's call on the session ss made for it, writing
// the answer to c.
func (g *Gateway) answerDirect(ctx context.Context, c *fastConn, ss *mcp.ServerSession, f *fastRequest, one *oneRequest) {
	req := &mcp.CallToolRequest{Session: ss, Params: f.call, Extra: f.msg.Extra.(*mcp.RequestExtra)}
	res, err := g.directChain(ctx, "tools/call", req)
	if g.ctx.Err() != nil {
		// The gateway closed during the call: go-sdk's session, closed
		// with it, writes no answer, and neither does the fast path.
		return
	}
	resp := &jsonrpc.Response{ID: f.msg.ID, Error: err}
	if err == nil {
		if res == nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool returned no result"}
		} else if raw, merr := g.marshalResult(res, one); merr != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the tool returned a malformed result: %v", merr)}
		} else if data, ok := encodeAnswer(f.msg.ID, raw); ok {
			resp.Result = raw
			_ = c.writeAnswer(resp, data)
			return
		} else {
			resp.Result = raw
		}
	}
	_ = c.Write(ctx, resp)
}

// encodeAnswer returns the JSON-RPC answer to id with result, a compact
// JSON value, as jsonrpc.EncodeMessage writes it, without encoding result
// again; ok is false for an id it leaves to EncodeMessage.
func encodeAnswer(id jsonrpc.ID, result json.RawMessage) (data []byte, ok bool) {
	var idJSON []byte
	switch v := id.Raw().(type) {
	case int64:
		idJSON = strconv.AppendInt(nil, v, 10)
	case string:
		// The fast path takes string ids without escapes or control
		// characters (readEnvelope); encoding/json escapes these too.
		if strings.ContainsAny(v, "\u2028\u2029") {
			return nil, false
		}
		idJSON = append(append(append(idJSON, '"'), v...), '"')
	default:
		return nil, false
	}
	data = make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(idJSON)+len(result))
	data = append(data, `{"jsonrpc":"2.0","id":`...)
	data = append(data, idJSON...)
	data = append(data, `,"result":`...)
	data = append(data, result...)
	return append(data, '}'), true
}

// directTool is what go-sdk's session calls beneath the receiving
// middleware for a tools/call: the handler of the tool in the registry,
// and its result made as go-sdk's Server.callTool makes it (the result
// type, which the result's JSON carries, is kept in one: marshalDirect).
func (g *Gateway) directTool(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
	call := req.(*mcp.CallToolRequest)
	name := call.Params.Name
	if !g.cat.isRegistered(name) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	res, err := g.toolHandler(name)(ctx, call)
	if err != nil || res == nil {
		return res, err
	}
	asks := res.InputRequests != nil
	if asks && (len(res.Content) > 0 || res.StructuredContent != nil) {
		g.log.Warn("handler returned both content and inputRequests", "component", "go-sdk server")
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	resultType := "complete"
	if asks {
		resultType = "input_required"
	} else if res.Content == nil {
		res2 := *res
		res2.Content = []mcp.Content{} // avoid "null"
		res = &res2
	}
	if one, ok := ctx.Value(oneRequestKey{}).(*oneRequest); ok {
		one.result, one.resultType = res, resultType
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && !isModern(req) && ss.ID() != "" {
			// A handshake-era session's (fastsession.go): go-sdk sets
			// no result type for its client, and writes the one the
			// result holds.
			one.resultType = ""
		}
	}
	return res, nil
}

// marshalResult returns res as marshalDirect does: plainResult when it
// takes res.
func (g *Gateway) marshalResult(res mcp.Result, one *oneRequest) (json.RawMessage, error) {
	if one.resultType == "" && heldResultType(res) != "" {
		// A handshake-era session's result: its type is what the
		// handler's result holds (go-sdk's MarshalJSON writes it).
		return marshalDirect(res, one)
	}
	if data, ok := g.plainResult(res, one); ok {
		return data, nil
	}
	return marshalDirect(res, one)
}

// marshalDirect returns res as go-sdk's JSON-RPC connection writes it
// (no HTML escaping), with the result type directTool gave it when res is
// the result it made.
func marshalDirect(res mcp.Result, one *oneRequest) (json.RawMessage, error) {
	r, isCall := res.(*mcp.CallToolResult)
	var data []byte
	if isCall && r != nil {
		// What the encoder writes for it: its MarshalJSON's compact JSON,
		// compacted again.
		var err error
		if data, err = r.MarshalJSON(); err != nil {
			return nil, err
		}
	} else {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return nil, err
		}
		data = bytes.TrimRight(buf.Bytes(), "\n")
	}
	if !isCall || r != one.result || one.resultType == "" {
		return data, nil
	}
	return withResultType(data, one.resultType)
}

// withResultType returns data, a CallToolResult as go-sdk writes it, with
// its result type rt, where go-sdk writes it: after the result's own
// members, before inputRequests.
func withResultType(data []byte, rt string) (json.RawMessage, error) {
	spans, ok := memberSpans(data)
	if !ok {
		return nil, fmt.Errorf("a result that is no JSON object: %s", data)
	}
	value := `"` + rt + `"`
	at, insert := len(data)-1, `,"resultType":`+value // before the closing brace
	if len(spans) == 0 {
		insert = insert[1:]
	}
	for _, s := range spans {
		switch s.key {
		case "resultType":
			return concat(data[:s.value], value, data[s.end:]), nil
		case "inputRequests":
			at, insert = s.start, `"resultType":`+value+","
		}
	}
	return concat(data[:at], insert, data[at:]), nil
}

func concat(a []byte, mid string, b []byte) []byte {
	out := make([]byte, 0, len(a)+len(mid)+len(b))
	return append(append(append(out, a...), mid...), b...)
}
