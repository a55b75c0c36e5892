//lint:file-ignore SA1019 a 2026-07-28 request's log level (logging: deprecated in 2026-07-28, alive in its window) is read as go-sdk reads it

package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path answers the commonest request of a 2026-07-28 client, a
// POST holding one tools/call, without go-sdk's streamable HTTP transport:
// it reads and decodes the request once, checks what that transport checks
// of such a POST, and hands the request to a session of the gateway's
// go-sdk server made for it (as go-sdk's stateless handler makes one per
// request), over a connection that carries that one request and its
// answer. Everything past the transport (the receiving middleware, the
// per-request _meta checks, callTool, the result's encoding) is the code
// every other request runs.
//
// The rule, decided once per request by fastRequestOf: a request takes the
// fast path when all of these hold, and goes to go-sdk's stateless handler
// (its body put back as it was) otherwise:
//
//   - the fast path is on (Options.slowPathOnly unset);
//   - it is a POST with an Mcp-Protocol-Version header >= 2026-07-28 and
//     no Mcp-Session-Id or Last-Event-ID header;
//   - its Content-Type is application/json and its Accept takes both
//     application/json and text/event-stream (go-sdk's own tests);
//   - its body, at most Options.MaxRequestBytes, is one JSON-RPC request
//     (not a batch) whose reading is plain (readEnvelope: it reads it as
//     go-sdk's jsonrpc.DecodeMessage does), with an id, method tools/call
//     and params that are a JSON object with a string name, no member
//     named twice in it or in its _meta, that go-sdk's transport decodes
//     (every number fits a float64; the members of a retry have their
//     types);
//   - its Mcp-Method header is tools/call and its Mcp-Name header the
//     params' name; its _meta holds a string protocol version equal to the
//     Mcp-Protocol-Version header;
//   - the tool named takes no argument from a header (x-mcp-header in its
//     input schema, its key written plainly or with escapes: bindsHeader),
//     which go-sdk's transport checks.
//
// Whatever go-sdk's transport would refuse fails one of these, so that the
// refusal is go-sdk's own.
//
// A call whose client asked for its progress (a progress token in _meta)
// or its log messages (a log level in _meta) takes the fast path too: the
// server's progress reports and log messages for it, which the relay of
// its session writes (relay.go, origin.writeProgress and writeLog), are
// written by the fast path as SSE events on the request's response
// (fastConn.writeNote), in the order they came, before the answer, as
// go-sdk's transport writes them (the same JSON-RPC messages and events;
// the response's header goes with the first). The relay's bounds hold
// them: a client that does not read its response holds up its own relay
// only, and the relay's memory is bounded as for any session. An answer
// that is an error with an HTTP status of its own (errorStatus) is a JSON
// body with that status, as go-sdk's transport writes it, unless such
// notifications began the stream: it is then an SSE event like any
// answer, where go-sdk's transport writes its JSON bare after the events,
// which no client reads. go-sdk's handler, for the requests the gateway
// hands it, writes it as an SSE event too: the gateway wraps its writer
// (sseErrorWriter), so that both paths answer alike.

// fastRequest is a request the fast path may answer.
type fastRequest struct {
	r      *http.Request
	msg    *jsonrpc.Request
	name   string                     // the params' name
	meta   map[string]json.RawMessage // the params' _meta
	pm     map[string]json.RawMessage // the params' members
	header string                     // the Mcp-Protocol-Version header

	// With init set, the session is made initialized with init and reads
	// params (leanParams), the request's params without the _meta members
	// init was read from (lean.go).
	init   *mcp.InitializeParams
	params json.RawMessage
	taken  map[string]json.RawMessage // the client's info and capabilities taken out of params

	plain bool                   // the params hold only name, arguments and _meta
	call  *mcp.CallToolParamsRaw // the params, when the call is direct (direct.go)
}

// serveFast answers r on the fast path when r takes it, reporting whether
// it did; when it did not, r (its body put back) is for go-sdk's handler.
func (g *Gateway) serveFast(w http.ResponseWriter, r *http.Request) bool {
	f := g.fastRequestOf(r)
	if f == nil {
		return false
	}
	g.answerFast(w, f)
	return true
}

// fastRequestOf returns r as a fastRequest, or nil when r does not take
// the fast path (see the rule above). It may read r's body and puts it
// back.
func (g *Gateway) fastRequestOf(r *http.Request) *fastRequest {
	if g.opts.slowPathOnly || r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	h := r.Header
	v := h.Get("Mcp-Protocol-Version")
	if v < modernVersion || h.Get("Mcp-Session-Id") != "" || len(h.Values("Last-Event-ID")) > 0 {
		return nil
	}
	if !isJSON(h.Get("Content-Type")) {
		return nil
	}
	if !acceptsBoth(h.Values("Accept")) || h.Get("Mcp-Method") != "tools/call" {
		return nil
	}
	body, ok := g.readBody(r)
	if !ok {
		return nil
	}
	f := parseFast(body)
	if f == nil || f.name == "" || f.name != h.Get("Mcp-Name") {
		return nil
	}
	if mv, ok := metaString(f.meta, mcp.MetaKeyProtocolVersion); !ok || mv != v {
		return nil
	}
	f.r, f.header = r, v
	f.lean()
	f.readDirect(g.cat)
	if r, ok := g.cat.tool(f.name); ok && bindsHeader(r.tool.InputSchema) {
		return nil
	}
	return f
}

// bindsHeader reports whether schema may bind an argument to a header:
// whether it holds the key x-mcp-header anywhere, written plainly or with
// escapes (go-sdk's transport reads the key unescaped), or cannot be read.
func bindsHeader(schema json.RawMessage) bool {
	if bytes.Contains(schema, []byte("x-mcp-header")) {
		return true
	}
	if bytes.IndexByte(schema, '\\') < 0 {
		return false // every key is written plainly
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return false
		}
		if err != nil || t == "x-mcp-header" {
			return true
		}
	}
}

// isJSON reports whether a Content-Type header of ct names
// application/json, as mime.ParseMediaType reads it.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true // as a client writes it, read without making a map
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// acceptsBoth reports whether Accept values take both application/json
// and text/event-stream, as go-sdk's streamable handler reads them.
func acceptsBoth(values []string) bool {
	jsonOK, streamOK := accepts(values)
	return jsonOK && streamOK
}

// answerFast answers f through a session of the gateway's server made for
// it, as go-sdk's stateless handler does, and writes the answer as that
// handler writes it.
func (g *Gateway) answerFast(w http.ResponseWriter, f *fastRequest) {
	f.msg.Extra = &mcp.RequestExtra{
		TokenInfo:      auth.TokenInfoFromContext(f.r.Context()),
		Header:         f.r.Header,
		CloseSSEStream: func(mcp.CloseSSEStreamArgs) {}, // none at 2026-07-28
	}
	state := new(mcp.ServerSessionState)
	c := &fastConn{req: f.msg, direct: f.call != nil, httpCtx: f.r.Context(), w: w, closed: make(chan struct{})}
	if !c.direct {
		c.answered = make(chan struct{})
	}
	one := &oneRequest{stream: c}
	if f.init != nil {
		state.InitializeParams = f.init
		if !c.direct {
			// The session reads the request (a direct call's does not).
			f.msg.Params = f.leanParams()
		}
		one.version, one.meta, one.caps = f.init.ProtocolVersion, f.taken, f.init.Capabilities
		// go-sdk's session, which reads no protocol version in the params
		// now, takes the log level from its state (ServerSession.Log), as
		// it would take it from the request's _meta.
		state.LogLevel = f.logLevel()
	}
	ctx := context.WithValue(f.r.Context(), oneRequestKey{}, one)
	ss, err := g.server.Connect(ctx, fastTransport{c}, &mcp.ServerSessionOptions{State: state})
	if err != nil {
		g.log.Error("failed to connect a session for a request", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	defer ss.Close()
	if c.direct {
		g.answerDirect(ctx, c, ss, f, one)
	} else {
		select {
		case <-c.answered:
		case <-c.closed: // the session ended (the gateway closed it)
		case <-f.r.Context().Done():
		}
	}
	// The response is the handler's no more: an answer that comes now
	// (the client went away) is not written. One the session handed
	// over is written here, in the handler's goroutine, so that the
	// session (and Gateway.Close, which closes it) never waits for the
	// client to read.
	c.mu.Lock()
	c.done = true
	c.writing = true // no notification is written now (writeNote)
	held := c.held
	c.mu.Unlock()
	if held != nil {
		_ = c.writeAnswer(held.resp, held.data)
	}
}

// logLevel returns the log level f's _meta asks for as go-sdk's session
// reads it from a 2026-07-28 request's _meta (a string, or none).
func (f *fastRequest) logLevel() mcp.LoggingLevel {
	if l, ok := metaValue[mcp.LoggingLevel](f.meta, mcp.MetaKeyLogLevel); ok {
		return *l
	}
	return ""
}

// fastTransport connects a session to one fastConn.
type fastTransport struct{ c *fastConn }

func (t fastTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// fastConn is a connection that carries one request of a client to a
// session and its answer back to the HTTP response.
type fastConn struct {
	req     *jsonrpc.Request
	direct  bool // req is answered beside the session (direct.go), not read by it
	session bool // req is a handshake-era session's (fastsession.go): an error is an SSE event too
	httpCtx context.Context
	w       http.ResponseWriter

	mu       sync.Mutex
	headed   bool          // the response's header was sent (writeHeaderEarly, writeNote)
	writing  bool          // the answer is being written or was (writeAnswer), or the handler is returning
	broken   bool          // a notification's write failed: the client lost the stream
	read     bool          // req was read
	done     bool          // the answer was taken
	held     *heldAnswer   // the answer the session handed over (not direct)
	closed   chan struct{} // closed by Close (nil: a connection no session has)
	once     sync.Once
	answered chan struct{} // closed when held is set (nil: direct)
	// answering, when set, is called once the call has ended, before its
	// answer is written: it releases the claim of a shared session's
	// request (sessions_claims.go).
	answering func()
}

// heldAnswer is an answer to write to the HTTP response: resp, encoded as
// data.
type heldAnswer struct {
	resp *jsonrpc.Response
	data []byte
}

// Read returns the request, then waits for the connection to close; it
// fails when the client goes away, which cancels the request's handler
// (as go-sdk's stateless handler propagates the HTTP request's end).
//
// On a direct call's connection nothing comes to the session: its request
// is answered beside it (direct.go), in the handler's goroutine, whose
// context is the HTTP request's. Read only waits, as for any request, and
// the session's Close (answerFast's, or Gateway.Close's) ends it. A Read
// that ended at once would end the session's connection with a read
// error while the call runs, and go-sdk's connection then makes an error
// of it at each of its later steps (jsonrpc2's shuttingDown), which costs
// a direct call more than the wait does.
func (c *fastConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.mu.Lock()
	first := !c.read && !c.direct
	c.read = true
	c.mu.Unlock()
	if first {
		return c.req, nil
	}
	select {
	case <-c.closed:
		return nil, io.EOF
	case <-c.httpCtx.Done():
		return nil, c.httpCtx.Err()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// errFastWrite refuses a message that is not the request's answer. It
// wraps the JSON-RPC error go-sdk's transports refuse a message with
// (code -32005, "rejected by transport"): the session's connection then
// stays up and the request runs on, as on go-sdk's stateless handler,
// which has no stream for such a message either.
var errFastWrite = fmt.Errorf("%w: a stateless request's stream carries only its answer", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"})

// Write takes the answer to the request, to be written to the HTTP
// response as go-sdk's stateless handler writes it (writeAnswer): on a
// direct call, in the handler's goroutine, it writes it; from the session
// it hands it over to the handler (answerFast), which writes it. The
// request's progress reports and log messages never come here: the
// gateway's sending middleware writes them (writeNote). Anything else the
// session would send has no stream to go on.
func (c *fastConn) Write(_ context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID != c.req.ID {
		return errFastWrite
	}
	data, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		return errFastWrite
	}
	c.done = true
	if !c.direct {
		c.held = &heldAnswer{resp: resp, data: data}
		c.mu.Unlock()
		close(c.answered)
		return nil
	}
	c.mu.Unlock()
	return c.writeAnswer(resp, data)
}

// writeAnswer writes resp, encoded as data, to the HTTP response as
// go-sdk's stateless handler does: an SSE event (a JSON body with
// statelessJSON), or (for an error that has an HTTP status of its own at
// 2026-07-28, unless notifications began the stream) a JSON body with
// that status. Only the handler's goroutine calls it, once.
func (c *fastConn) writeAnswer(resp *jsonrpc.Response, data []byte) (err error) {
	if c.answering != nil {
		c.answering()
	}
	// writeHeaderEarly or writeNote may be writing now; neither writes
	// once writing is set.
	c.mu.Lock()
	c.writing = true
	headed := c.headed
	c.mu.Unlock()
	h := c.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	// Once notifications began the stream (status 200, headed), an error
	// with a status of its own is an SSE event like any answer: go-sdk's
	// transport writes its JSON there as it is, its status too late,
	// which no client reads (the gateway's writer for go-sdk's handler
	// frames it as an event too: sseErrorWriter).
	if status := errorStatus(resp.Error); status != 0 && !c.session && !headed {
		h.Set("Content-Type", "application/json")
		if !statelessJSON {
			h.Set("Connection", "keep-alive") // set for the SSE stream it would have been
		}
		c.w.WriteHeader(status)
		_, err = c.w.Write(data)
		return err
	}
	if statelessJSON && !headed {
		h.Set("Content-Type", "application/json")
		_, err = c.w.Write(data)
		return err
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	buf := make([]byte, 0, len("event: message\ndata: \n\n")+len(data))
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	// Not flushed: the handler returns once the answer is written, and
	// net/http then sends the response whole, in one write, where a flush
	// now would make it two (a chunk, then the chunked body's end).
	_, err = c.w.Write(buf)
	return err
}

// errorStatus is the HTTP status go-sdk answers a 2026-07-28 request's
// JSON-RPC error with, or 0 (the error goes in an SSE event).
func errorStatus(err error) int {
	var jerr *jsonrpc.Error
	if err == nil || !errors.As(err, &jerr) {
		return 0
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// writeHeaderEarly sends the response's header, as writeAnswer would set
// it for an SSE event, before the answer, unless writeAnswer has begun.
// It runs at most once, when the call comes due in Gateway.early, while
// the handler's goroutine may be in writeAnswer: c.mu orders the two.
func (c *fastConn) writeHeaderEarly() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing || c.headed {
		return
	}
	c.headed = true
	h := c.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	c.w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(c.w).Flush()
}

// writeNote writes a notification of the request's call (method with
// params: a progress report or a log message, from its relay's writer) to
// the HTTP response as go-sdk's transport writes it on the request's
// stream: an SSE event of the JSON-RPC notification, flushed, the
// response's header (as writeAnswer sets it for an SSE event) sent first
// when it has not been. c.mu orders it with writeHeaderEarly and
// writeAnswer: once the answer is being written, or the handler is
// returning, it writes nothing and fails (a log message then goes to the
// session's standalone stream: origin.writeLog). A stream whose write
// failed (the client went away) takes nothing more: what comes for it is
// dropped, as its answer is.
func (c *fastConn) writeNote(method string, params any) error {
	raw, err := marshalNoEscape(params)
	if err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: method, Params: raw})
	if err != nil {
		return err
	}
	buf := make([]byte, 0, len("event: message\ndata: \n\n")+len(data))
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writing {
		return errStreamEnded
	}
	if c.broken {
		return nil
	}
	if !c.headed {
		c.headed = true
		h := c.w.Header()
		h.Set("Cache-Control", "no-cache, no-transform")
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
		c.w.WriteHeader(http.StatusOK)
	}
	if _, err := c.w.Write(buf); err != nil {
		c.broken = true
		return nil
	}
	// A writer that cannot flush (a middleware's that lets no Flush
	// through) sends the events with the answer, as on go-sdk's
	// transport, which flushes at best; a flush that fails lost the
	// stream.
	if err := http.NewResponseController(c.w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		c.broken = true
	}
	return nil
}

// errStreamEnded refuses a notification for a request whose answer is
// written or whose handler returned.
var errStreamEnded = fmt.Errorf("%w: the request's stream has ended", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"})

// marshalNoEscape returns v as go-sdk's JSON-RPC connection encodes a
// message's params (no HTML escaping).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func (c *fastConn) Close() error {
	if c.closed != nil {
		c.once.Do(func() { close(c.closed) })
	}
	return nil
}

func (c *fastConn) SessionID() string { return "" }

// oneRequestKey marks the context of a session the fast path made for one
// request; its value is a *oneRequest.
type oneRequestKey struct{}

// oneRequest is what the fast path tells the session it made of its
// request.
type oneRequest struct {
	version string                     // the protocol version taken out of the params' _meta, or ""
	meta    map[string]json.RawMessage // the other members taken out of it
	caps    *mcp.ClientCapabilities    // the session's, read from meta

	// For a direct call: the result directTool made and its type.
	result     *mcp.CallToolResult
	resultType string

	// stream is the connection whose HTTP response carries the request's
	// progress reports and log messages (writeNote, filterSent).
	stream *fastConn
}

// capsJSON returns the client's capabilities as the request's _meta
// wrote them when c is the ones the fast path read from there, or nil.
func (one *oneRequest) capsJSON(c *mcp.ClientCapabilities) json.RawMessage {
	if one == nil || one.caps == nil || one.caps != c {
		return nil
	}
	return one.meta[mcp.MetaKeyClientCapabilities]
}

// clientCaps returns the capabilities of the client of req, handled in
// ctx. A request answered on the fast path has a session of its own, whose
// InitializeParams go-sdk made from the request's _meta (as
// ServerRequest.ClientCapabilities reads them): they are taken from there,
// not decoded again.
func clientCaps(ctx context.Context, req mcp.Request) *mcp.ClientCapabilities {
	if ctx.Value(oneRequestKey{}) != nil {
		if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.ID() == "" {
			if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion >= modernVersion && ip.Capabilities != nil {
				return ip.Capabilities
			}
		}
	}
	if r, ok := req.(interface {
		ClientCapabilities() *mcp.ClientCapabilities
	}); ok {
		return r.ClientCapabilities()
	}
	return nil
}
