package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handshake-era session's POST of one plain tools/call is answered on a
// fast path of its own: the gateway reads the request once, calls its
// receiving middleware itself over the session's go-sdk ServerSession (as
// a 2026-07-28 direct call does: direct.go), and writes the answer as one
// SSE event. go-sdk's streamable handler would read the body into a
// stream of the session, decode the request three more times (each time
// with a new 32 KB decoder) and run the call on goroutines of its own.
//
// The rule, decided by sessionFastRequestOf: a request takes this path
// when all of these hold, and goes to go-sdk's handler (its body put back)
// otherwise:
//
//   - the fast path is on (Options.slowPathOnly unset);
//   - it is a POST naming, in Mcp-Session-Id, an initialized session of
//     this gateway, made by the request's principal (go-sdk answers
//     another principal's request with 403), with an Mcp-Protocol-Version
//     header of 2025-06-18 or 2025-11-25 and no Last-Event-ID header;
//     with shared sessions (Options.Sessions), a session whose record
//     serveShared has read (not deleted or expired on any replica, its
//     principal the request's, its changes applied here) and whose copy
//     this replica holds;
//   - its Content-Type is application/json and its Accept takes both
//     application/json and text/event-stream;
//   - its body is one JSON-RPC tools/call request as readEnvelope reads
//     it, whose params hold only name, arguments and _meta, read as
//     go-sdk reads them, naming a tool go-sdk's registry holds; its _meta
//     holds no member named io.modelcontextprotocol/… (go-sdk reads a
//     protocol version there as a 2026-07-28 request's);
//   - a client that can be asked (elicitation, sampling, roots) has its
//     session's standalone stream (GET) open: a question a server puts to
//     a call on this path travels there (go-sdk's session sends what it
//     cannot tie to a request of its own on that stream);
//   - no request of the session is in go-sdk's handler (its POST being
//     served, or its handler running): go-sdk refuses a request whose id
//     is in flight there, and only its handler knows those ids;
//   - the session is still live (not ended by its client's DELETE or by
//     the gateway's Close) when the call starts.
//
// A request naming the id of a call on this path in flight in its
// session (a retry after the call's stream dropped, say), whichever path
// it would take, is refused as go-sdk refuses a duplicate in-flight id:
// 400 and a JSON-RPC error. With shared sessions, so is one naming the
// id of a request in flight on another replica (sessions_claims.go). A DELETE cancels the session's calls on this
// path, also one that has not reached the receiving middleware yet.
//
// The call's progress reports (its _meta holds a progress token) and log
// messages (the session asked for them with logging/setLevel, before the
// call or while it runs) go on the request's stream, as go-sdk's handler
// sends them: the relay of the session writes each (origin.writeProgress,
// writeLog) with the call's context, and the gateway's sending middleware
// (filterSent) writes it to the response as an SSE event
// (fastConn.writeNote), in the order the server sent them, before the
// answer. The relay's bounds hold them (relay.go): a client that does not
// read the stream holds up its session's relay only.
//
// What differs from go-sdk's handler, for such a call: the events have no
// id and no priming event goes before them, so the stream cannot be
// resumed (Last-Event-ID); a client that loses the stream loses what was
// still to come on it (its notifications, its answer), as with an answer
// written as JSON. A disconnection does not
// cancel the call (it does not on go-sdk's path either); the call ends
// with a notifications/cancelled naming it (cancelSessionFast), with its
// session (DELETE), or when the gateway closes.

// sessionFastVersions are the handshake-era protocol versions a request
// on the session fast path may name.
var sessionFastVersions = []string{"2025-06-18", "2025-11-25"}

// serveSession serves r, a request with or without a session, on the
// session fast path when it takes it, and with go-sdk's handler
// otherwise.
func (g *Gateway) serveSession(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if g.opts.slowPathOnly || r.Method != http.MethodPost || id == "" || r.Body == nil {
		g.stateful.ServeHTTP(w, r)
		return
	}
	ls := g.live.get(id, principalOf(r))
	if ls == nil {
		g.stateful.ServeHTTP(w, r)
		return
	}
	g.serveLive(w, r, ls, g.stateful.ServeHTTP)
}

// serveLive serves r, a POST of the live session ls: on the session fast
// path when it takes it, refused when it names the id of a call on the
// fast path in flight, and with slow (go-sdk's handler, through the
// writer shared sessions need) otherwise.
func (g *Gateway) serveLive(w http.ResponseWriter, r *http.Request, ls *liveSession, slow http.HandlerFunc) {
	body, ok := g.readBody(r)
	if !ok {
		slow(w, r) // go-sdk says why it cannot be read
		return
	}
	if g.live.calling(ls) {
		g.cancelSessionFast(r, ls, body)
	}
	if f := g.sessionFastRequestOf(r, ls, body); f != nil {
		ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
		defer cancel(nil)
		done, err := g.live.start(ls, f.msg.ID, cancel)
		switch {
		case err == nil:
			defer done()
			g.answerSessionFast(ctx, w, f, ls.ss)
			g.sessionFast.Add(1)
			return
		case errors.Is(err, errDuplicateID):
			writeDuplicateID(w, f.msg.ID)
			return
		}
		// Not live (go-sdk answers 404), or go-sdk's handler has a
		// request of the session (it checks the id against its own).
	}
	// Every id: one past requestIDs' bound would run a call twice.
	ids := allRequestIDs(body)
	release, dup := g.live.toSDK(ls, rpcIDs(ids))
	if dup.IsValid() {
		writeDuplicateID(w, dup)
		return
	}
	defer release()
	if len(ids) > 0 {
		// The event store keeps the stream until it carried their answers.
		r = r.WithContext(context.WithValue(r.Context(), callIDsKey{}, ids[:min(len(ids), maxStreamIDs)]))
	}
	slow(w, r)
}

// writeDuplicateID answers a request whose id is in flight in its session
// as go-sdk's handler does.
func writeDuplicateID(w http.ResponseWriter, id jsonrpc.ID) {
	resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw()),
	}}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	if data, err := jsonrpc.EncodeMessage(resp); err == nil {
		_, _ = w.Write(data)
	}
}

// rpcIDs returns the request ids of requestIDs as go-sdk reads them
// (an integer, a string); one it cannot read is left out (go-sdk refuses
// its request).
func rpcIDs(raws []json.RawMessage) []jsonrpc.ID {
	var ids []jsonrpc.ID
	for _, raw := range raws {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		if id, err := jsonrpc.MakeID(v); err == nil && id.IsValid() {
			ids = append(ids, id)
		}
	}
	return ids
}

// sessionFastRequestOf returns r, a POST of session ls with body, as a
// fastRequest whose call is direct, or nil when r does not take the
// session fast path (see the rule above).
func (g *Gateway) sessionFastRequestOf(r *http.Request, ls *liveSession, body []byte) *fastRequest {
	if g.opts.slowPathOnly {
		return nil
	}
	h := r.Header
	v := h.Get("Mcp-Protocol-Version")
	if !slices.Contains(sessionFastVersions, v) || len(h.Values("Last-Event-ID")) > 0 {
		return nil
	}
	if !isJSON(h.Get("Content-Type")) {
		return nil
	}
	if !acceptsBoth(h.Values("Accept")) {
		return nil
	}
	ip := ls.ss.InitializeParams()
	if ip == nil || (canBeAsked(ip.Capabilities) && !g.live.streaming(ls)) {
		return nil
	}
	f := parseFast(body)
	if f == nil || !f.plain || !g.cat.isRegistered(f.name) {
		return nil
	}
	for k := range f.meta {
		if strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return nil
		}
	}
	p, ok := f.metalessParams()
	if !ok {
		if p, ok = decodeAsSDK[mcp.CallToolParamsRaw](f.msg.Params); !ok || p.Name != f.name {
			return nil
		}
	}
	f.r, f.header, f.call = r, v, p
	return f
}

// answerSessionFast answers f's call on session ss in ctx, writing the
// answer to w as one SSE event. The receiving middleware ends the call
// when the gateway closes (route) and when the client ends its session
// (trackSession).
func (g *Gateway) answerSessionFast(ctx context.Context, w http.ResponseWriter, f *fastRequest, ss *mcp.ServerSession) {
	f.msg.Extra = &mcp.RequestExtra{
		TokenInfo:      auth.TokenInfoFromContext(f.r.Context()),
		Header:         f.r.Header,
		CloseSSEStream: func(mcp.CloseSSEStreamArgs) {}, // the answer is the stream's one event
	}
	// No session reads from c or closes it: it carries the call's
	// notifications (filterSent) and its answer.
	c := &fastConn{req: f.msg, direct: true, session: true, httpCtx: ctx, w: w}
	if p, _ := f.r.Context().Value(claimsKey{}).(*postClaims); p != nil {
		c.answering = p.releaseAll // the id is free once the client has the answer
	}
	one := &oneRequest{stream: c}
	ctx = context.WithValue(ctx, oneRequestKey{}, one)
	early := g.early.add(c)
	g.answerDirect(ctx, c, ss, f, one)
	// Once the handler returns, w is net/http's again: a header or a
	// notification being written (under c.mu) has been written when c.mu
	// is taken here, and none is written after (a header may be due now:
	// a call the gateway's Close ended writes no answer).
	g.early.remove(early)
	c.mu.Lock()
	c.writing = true
	c.mu.Unlock()
}

// cancelSessionFast cancels the calls on the session fast path in ls that
// r, a POST of that session with body, cancels (notifications/cancelled,
// alone, or in a batch when go-sdk's handler takes one: under a protocol
// version before 2025-06-18); r then goes on as it would.
func (g *Gateway) cancelSessionFast(r *http.Request, ls *liveSession, body []byte) {
	if !bytes.Contains(body, []byte("notifications/cancelled")) {
		return
	}
	batch := false
	type note struct {
		Method string `json:"method"`
		Params *struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	var notes []note
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		if json.Unmarshal(b, &notes) != nil {
			return
		}
		batch = true
	} else {
		var n note
		if json.Unmarshal(b, &n) != nil {
			return
		}
		notes = append(notes, n)
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); batch && v >= "2025-06-18" {
		return // go-sdk's handler refuses the batch: nothing in it is read
	}
	for _, n := range notes {
		if n.Method != "notifications/cancelled" || n.Params == nil {
			continue
		}
		if id, err := jsonrpc.MakeID(n.Params.RequestID); err == nil && id.IsValid() {
			g.live.cancel(ls, id)
		}
	}
}

// principalOfRequest returns the principal req came with (the UserID of
// its token), as go-sdk's handler records a session's.
func principalOfRequest(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
		return ex.TokenInfo.UserID
	}
	return ""
}
