package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/streamable"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path: a plain tools/call over stdio is written by the engine on
// the connection it owns (internal/stdio's Conn.RoundTrip), and over
// streamable HTTP POSTed through the session's HTTP client
// (internal/streamable's Conn.RoundTrip), and its answer is handed straight
// back, instead of going through go-sdk's request machinery, which costs
// several times the CPU and 70–240 KB of garbage per call
// (docs/dev/benchmarks.md). go-sdk still makes the connection, lists, handles
// every request and notification the server sends, and makes every call
// that is not plain; an answer that is go-sdk's to read (over HTTP,
// anything but the plain result; on both, an answer that asks for input)
// is handed over to go-sdk, which makes the call from the answer the fast
// path holds, so the server runs the tool once.
//
// Whether a connection has a fast path is decided once, when it is made
// (chooseFastPath), from facts of the connection: Config.FastPath (the
// client's switch), the build tag mcpadapter_nofastpath, the transport
// (stdio, or streamable HTTP without Config.Trace, whose trace would show
// a call handed over to go-sdk twice) and the protocol era.
//
// Whether one call takes it is decided by plainParams, from the call
// alone: Call.ViaSDK (set by any feature that needs go-sdk's machinery for
// the call), params that carry more than a name, arguments and a _meta (a
// progress token, whose notifications go-sdk delivers; input responses),
// and what the fast path cannot send: on a 2026-07-28 connection, the
// _meta entries go-sdk adds to every request that lacks them (the
// protocol version, client info and capabilities), which the fast path
// learns from go-sdk's calls there (learn), and over HTTP the Mcp-Param-*
// headers go-sdk sends for a tool whose input schema has x-mcp-header
// annotations. A call's own _meta is sent as go-sdk would send it: its
// entries over those go-sdk adds (fastMeta).

// A Call is one tools/call to make.
type Call struct {
	// Params are the call's parameters.
	Params *mcp.CallToolParams
	// ViaSDK says the call needs go-sdk's full request machinery: its
	// sending middleware (such as the "task" member of a task-augmented
	// call), its multi-round-trip loop as configured, or its handling of
	// the server's requests during the call. A feature that needs any of
	// it for a call sets ViaSDK; the engine then never takes the fast path
	// for the call. Nothing else needs to know the fast path exists.
	ViaSDK bool
}

// A Raw gives the result of a call as the server wrote it, when it is
// known (a *wire.RequestStatus, SentResult, PlainResult).
type Raw interface {
	Result() (json.RawMessage, bool)
}

// SentResult is a result as the server wrote it.
type SentResult json.RawMessage

// Result returns r.
func (r SentResult) Result() (json.RawMessage, bool) { return json.RawMessage(r), r != nil }

// PlainResult is a result as the server wrote it that
// plaincall.DecodeResult took: its members are content, isError,
// structuredContent, _meta and resultType "complete", so it is no task
// (what a task reading would find is known).
type PlainResult json.RawMessage

// Result returns r.
func (r PlainResult) Result() (json.RawMessage, bool) { return json.RawMessage(r), r != nil }

// fastPath is the fast path a connection has.
type fastPath uint8

const (
	noFastPath fastPath = iota
	fastStdio
	fastHTTP
)

// fastState is what the fast path knows of one session.
type fastState struct {
	path fastPath // chosen once, by chooseFastPath
	// meta is what is known of the _meta go-sdk sends with every
	// request on a 2026-07-28 connection (learn); nil until go-sdk has
	// made a call.
	meta atomic.Pointer[learnedMeta]
	// resultMeta is the last _meta of a result, decoded.
	resultMeta plaincall.MetaMemo
	// http is set for a streamable HTTP session.
	http *streamable.Conn
	// broken is set once go-sdk failed a call handed over to it with an
	// error that is not the server's answer: go-sdk's connection may be
	// failing (it fails it on a malformed answer), and on go-sdk's path
	// every later call would be refused before it is sent ("client is
	// closing"). The session's later calls go through go-sdk, so that
	// they are refused, unsent, and retried on a new connection, as there,
	// until one of them is answered: then go-sdk's connection is not
	// failing (the error was the call's own, such as a result go-sdk
	// could not decode), and the fast path goes on.
	broken atomic.Bool
}

// chooseFastPath decides whether s, just connected, has a fast path.
func (s *Session) chooseFastPath() {
	cfg := &s.e.cfg
	switch {
	case fastPathOff || !cfg.FastPath || s.version == "":
	case s.stdio != nil:
		s.fast.path = fastStdio
	case s.fast.http != nil && !cfg.Trace:
		s.fast.path = fastHTTP
		s.fast.http.Session = s
	}
}

// FastPath reports whether s has a fast path for plain calls.
func (s *Session) FastPath() bool { return s.fast.path != noFastPath }

// CallTool makes the tools/call c on s: on the connection's fast path when
// it has one and the call is plain, else through go-sdk. It returns what
// go-sdk's CallTool would, and the result as sent when the fast path read
// it (else nil). It returns once the notifications the server sent before
// its answer (the call's progress, its log messages) have been handled,
// as the connection's markers say (internal/order; BacklogMiddleware),
// or once waiting for them gives up (the call's context, the connection's
// end, order.Quiet without a notification handled).
func (s *Session) CallTool(ctx context.Context, c Call) (*mcp.CallToolResult, Raw, error) {
	sp := order.SpanFrom(ctx)
	sp.Sent(s.order)
	res, raw, err := s.callTool(ctx, c)
	s.settle(ctx, sp)
	return res, raw, err
}

// settle notes in sp (the request's order.Span, or nil) where the
// connection stands after a request's answer, and waits until the
// notifications read before it have been handled (order.Marks.Wait).
func (s *Session) settle(ctx context.Context, sp *order.Span) {
	sp.Answered(s.order)
	s.order.Wait(ctx, s.done)
}

// callTool is CallTool without its wait for the notifications.
func (s *Session) callTool(ctx context.Context, c Call) (*mcp.CallToolResult, Raw, error) {
	if s.fast.path == noFastPath || !plainParams(c) {
		s.e.paths.add(PathSDK)
		res, err := s.sdkCallTool(ctx, c.Params)
		return res, nil, err
	}
	if !s.fastReady(c.Params) || s.fast.broken.Load() {
		s.e.paths.add(PathSDK)
		given := sdkKeysIn(c.Params.Meta)
		res, err := s.sdkCallTool(ctx, c.Params)
		if (err == nil || sdkerr.IsServerError(err)) && s.fast.broken.Load() {
			// go-sdk's connection answered: it is not failing, and the
			// fast path may go on.
			s.fast.broken.Store(false)
		}
		s.learn(c.Params, given)
		return res, nil, err
	}
	return s.callFast(ctx, c.Params)
}

// plainParams reports whether nothing but the call's name, arguments and
// _meta travel with it (no progress token, whose notifications go-sdk
// delivers; no input responses), and no feature asked for go-sdk's path.
func plainParams(c Call) bool {
	p := c.Params
	if _, progress := p.Meta["progressToken"]; progress {
		return false
	}
	return !c.ViaSDK && p.InputResponses == nil && p.RequestState == ""
}

// fastReady reports whether the fast path can send the plain call params:
// on a 2026-07-28 connection, once it knows the _meta go-sdk would add
// (the entries of sdkMetaKeys that params' own _meta lacks), and over
// HTTP for a tool without Mcp-Param-* headers and a call whose _meta names
// no other protocol version than the connection's (versionHeader).
func (s *Session) fastReady(params *mcp.CallToolParams) bool {
	if !s.Discover() {
		return !s.versionHeader(params.Meta)
	}
	m := s.fast.meta.Load()
	if m == nil {
		return false
	}
	for i, k := range sdkMetaKeys() {
		if _, given := params.Meta[k]; m.vals[i] == nil && !given {
			return false
		}
	}
	return !s.paramHeaders(params.Name) && !s.versionHeader(params.Meta)
}

// versionHeader reports whether, over HTTP, go-sdk sends the call with an
// Mcp-Protocol-Version header other than the connection's: the one its
// own _meta names (as a relayed client may write it), with the headers
// that version calls for.
func (s *Session) versionHeader(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return s.fast.path == fastHTTP && v != "" && v != s.version
}

// paramHeaders reports whether go-sdk sends Mcp-Param-* headers with a
// call of the tool over HTTP: the input schema it was listed with has
// x-mcp-header annotations.
func (s *Session) paramHeaders(tool string) bool {
	if s.fast.path != fastHTTP {
		return false
	}
	in, _, _ := s.slot.obs.RawSchemas(tool)
	return bytes.Contains(in, []byte("x-mcp-header"))
}

// sdkMetaKeys returns go-sdk's _meta keys of a 2026-07-28 request.
func sdkMetaKeys() [3]string {
	return [3]string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities}
}

// learnedMeta is what the fast path knows of the _meta go-sdk sends
// with every request on a 2026-07-28 connection.
type learnedMeta struct {
	// vals holds go-sdk's value of each of sdkMetaKeys, as JSON; nil
	// while not known.
	vals [3]json.RawMessage
	// all is the three as one _meta, once all are known.
	all []byte
}

// sdkKeysIn reports which of sdkMetaKeys m has.
func sdkKeysIn(m mcp.Meta) (in [3]bool) {
	for i, k := range sdkMetaKeys() {
		_, in[i] = m[k]
	}
	return in
}

// learn keeps the _meta entries go-sdk added to params, a call it made on
// s, a 2026-07-28 connection, for the fast path's later calls; given says
// which of them the call's own _meta had (go-sdk keeps those).
func (s *Session) learn(params *mcp.CallToolParams, given [3]bool) {
	old := s.fast.meta.Load()
	if !s.Discover() || old != nil && old.all != nil {
		return
	}
	m := &learnedMeta{}
	if old != nil {
		*m = *old
	}
	learnt := false
	for i, k := range sdkMetaKeys() {
		v, ok := params.Meta[k]
		if m.vals[i] != nil || given[i] || !ok {
			continue
		}
		b, err := marshalMeta(v)
		if err != nil {
			return
		}
		m.vals[i], learnt = b, true
	}
	if !learnt {
		return
	}
	if m.vals[0] != nil && m.vals[1] != nil && m.vals[2] != nil {
		all := make(map[string]json.RawMessage, 3)
		for i, k := range sdkMetaKeys() {
			all[k] = m.vals[i]
		}
		b, err := marshalMeta(all)
		if err != nil {
			return
		}
		m.all = b
	}
	s.fast.meta.Store(m)
	// The same for every connection of this version (it names go-sdk's
	// client, not a principal): later connections start with it.
	s.e.learned.Store(s.version, m)
}

// callFast makes the plain call params on s's stdio connection or, over
// streamable HTTP, with a POST of its own. It returns what go-sdk's
// CallTool would, and the result as sent.
func (s *Session) callFast(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, Raw, error) {
	s.e.paths.add(PathFast)
	args, ok := params.Arguments.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(params.Arguments)
		if err != nil {
			return nil, nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
		}
		args = b
	}
	meta, err := s.fastMeta(params)
	if err != nil {
		return nil, nil, err
	}
	var result json.RawMessage
	if s.fast.path == fastStdio {
		resp, err := s.stdio.RoundTrip(ctx, "tools/call", func(buf []byte, id int64) []byte {
			return plaincall.AppendCall(buf, id, params.Name, args, meta)
		})
		if err != nil {
			return nil, nil, err
		}
		result = resp.Result
	} else {
		var h *streamable.HandOff
		var err error
		if result, h, err = s.fast.http.RoundTrip(ctx, params.Name, args, meta); h != nil {
			defer h.Close(ctx)
			s.e.paths.handOver()
			res, err := s.sdkCallTool(streamable.WithHandOff(ctx, h), params)
			if err != nil && !sdkerr.IsServerError(err) {
				s.fast.broken.Store(true)
			}
			if err != nil && h.Sent() {
				// The server has the fast path's POST of the call, even if
				// go-sdk failed before it took the answer.
				err = &sdkerr.DeliveredError{Err: err}
			}
			return res, nil, err
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if res, ok := plaincall.DecodeResult(result, &s.fast.resultMeta); ok {
		return res, PlainResult(result), nil
	}
	// go-sdk's own decoding of a result (what its CallTool does with it).
	res, err := decodeResult(result)
	var panicked *AnswerPanicError
	if errors.As(err, &panicked) {
		// As go-sdk's path says it (sdkCallTool): a question that is
		// null, say, in a round.
		return nil, SentResult(result), err
	}
	if err != nil {
		return nil, SentResult(result), fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	if _, _, round := plaincall.Round(res); round {
		// The client's multi-round-trip loop (a sending middleware)
		// answers these and retries: leave the call to go-sdk, starting
		// from this answer, which go-sdk's call is answered with at the
		// connection (internal/stdio's handoff.go), so the server runs
		// the tool once. (Over HTTP RoundTrip handed such an answer over
		// already.) A task's questions are no round: the caller follows
		// the task.
		s.e.cfg.Log.Debug("the server asked for input; handing the call over to go-sdk", "tool", params.Name)
		s.e.paths.handOver()
		if s.stdio != nil {
			h := stdio.NewHandOff(result, func(buf []byte, id int64) []byte { return plaincall.AppendPing(buf, id, meta) })
			ctx = stdio.WithHandOff(ctx, h)
		}
		res, err := s.sdkCallTool(ctx, params)
		if err != nil {
			// The server has the call (it answered it).
			err = &sdkerr.DeliveredError{Err: err}
		}
		return res, nil, err
	}
	return res, SentResult(result), nil
}

// Slots bounds the tool calls in flight (ClientOptions.MaxConcurrentCalls)
// with a token per call; nil bounds none.
type Slots chan struct{}

// NewSlots returns the slots of n calls at once; nil for n <= 0.
func NewSlots(n int) Slots {
	if n <= 0 {
		return nil
	}
	return make(Slots, n)
}

// Take waits for a free slot for a call of tool and returns its release.
// When ctx ends while it waits, the error (the call was never sent) wraps
// the context's cause.
func (s Slots) Take(ctx context.Context, log *slog.Logger, tool string) (release func(), _ error) {
	if s == nil {
		return func() {}, nil
	}
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	default:
	}
	log.Debug("tool call waits for a free slot", "tool", tool, "maxConcurrentCalls", cap(s))
	select {
	case s <- struct{}{}:
		return func() { <-s }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("not sent: still waiting for one of the %d call slots (ClientOptions.MaxConcurrentCalls) when the call ended: %w", cap(s), context.Cause(ctx))
	}
}
