package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	segjson "github.com/segmentio/encoding/json"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type httpHandler = *mcp.StreamableHTTPHandler

// statelessJSON is the stateless handler's JSONResponse: false, answers
// are SSE events. The fast path (fastpath.go) writes its answers as the
// handler does by it.
const statelessJSON = false

// newHTTPHandlers returns go-sdk's two streamable HTTP handlers over the
// gateway's server: one with sessions for handshake-era clients (with an
// event store, so a client can resume a stream), one stateless for
// 2026-07-28 clients. ServeHTTP picks one per request.
func (g *Gateway) newHTTPHandlers() (stateful, stateless httpHandler) {
	get := func(*http.Request) *mcp.Server { return g.server }
	logger := g.log.With("component", "go-sdk http")
	g.events = newEventStore()
	var events mcp.EventStore = &sessionEvents{EventStore: g.events, closed: g.sessionClosed}
	// g.live ends idle sessions, not go-sdk's handler (it is given no
	// SessionTimeout): a POST on the session fast path never reaches the
	// handler, whose idle timer would run under the call.
	g.live.timeout = g.opts.SessionTimeout
	if g.shared != nil {
		events = g.shared.events
		g.events = g.shared.events.eventStore
		g.live.endIdle = g.shared.endIdle
		g.shared.endRequests = g.endCopyRequests
		if g.live.timeout <= 0 {
			// A replica's copy of a shared session that gets no request
			// for its TTL ends here (it ended everywhere, or is served
			// elsewhere and is made again here when it comes back).
			g.live.timeout = g.shared.ttl
		}
	}
	stateful = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		// Event streams: with shared sessions, askIDWriter rewrites the
		// ids of a session's questions in its events (sessions_asks.go).
		JSONResponse:               false,
		Logger:                     logger,
		EventStore:                 events,
		MaxRequestBodyBytes:        g.opts.maxRequestBytes(),
		DisableLocalhostProtection: true, // ServeHTTP checks Host and Origin itself
	})
	stateless = mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		JSONResponse:                 statelessJSON,
		Logger:                       logger,
		MaxRequestBodyBytes:          g.opts.maxRequestBytes(),
		DisableLocalhostProtection:   true,
		PropagateRequestCancellation: true,
	})
	return stateful, stateless
}

// ServeHTTP serves the gateway over streamable HTTP, every protocol
// version on one endpoint: a request of a 2026-07-28 client (its
// Mcp-Protocol-Version header says so), or a POST without a session that
// is not an initialize request, goes to the stateless handler; the rest
// (initialize, and everything of a session) to the handler with sessions.
//
// It refuses a Host that is not a loopback name or listed in
// Options.AllowedHosts, and an Origin that is neither the gateway's own nor
// listed in Options.AllowedOrigins (403); while shutting down it answers
// a request for a new session with 503 and a JSON-RPC error. At
// Options.MaxSessions or MaxSessionsPerPrincipal a new session ends the
// session idle longest (takeSlot), and with none idle is refused (503,
// 429) with CodeTooManySessions.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not a loopback name or an allowed host (DNS rebinding protection)", r.Host), http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originAllowed(r, o) {
		http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed", o), http.StatusForbidden)
		return
	}
	r.Header.Del(replayHeader) // the gateway's own, on the requests it replays
	if g.serveStreamConn(w, r) {
		return // served from a goroutine of its own, as a GET with w a streamConn
	}
	defer g.writes.add(w)()
	if r.Method == http.MethodPost {
		g.posts.Add(1)
		defer g.posts.Add(-1)
	}
	if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" && endsSession(r) {
		// go-sdk ends a session only when its requests have ended.
		g.live.drop(id, principalOf(r))
		g.endSession(id, principalOf(r))
	}
	modern, err := g.isStateless(w, r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if g.draining.Load() && !modern && r.Header.Get("Mcp-Session-Id") == "" {
		// No new session; the requests of sessions (a client's answer to
		// a server's question, say) and of 2026-07-28 clients go on: the
		// gateway refuses new calls among them with a JSON-RPC error.
		writeRPCError(w, http.StatusServiceUnavailable, errShuttingDown())
		return
	}
	var slot *sessionSlot // the request's place under Options.MaxSessions, if it makes a session
	if !modern && r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
		// go-sdk's handler makes a session for it: refused past a cap
		// before anything is made, unless a session idle longest is
		// claimed to make room. A POST without an initialize (its body
		// read whole first) takes no slot: the session go-sdk makes for
		// it ends with it.
		init, err := g.holdsInitialize(w, r)
		if err != nil {
			writeBodyError(w, err)
			return
		}
		if init {
			var ok bool
			if slot, ok = g.takeSlot(w, r, principalOf(r)); !ok {
				return
			}
		}
	}
	g.liftTask(r)
	defer g.withHTTPContext(r)()
	switch {
	case modern:
		if !g.serveFast(w, r) {
			g.stateless.ServeHTTP(&sseErrorWriter{ResponseWriter: w}, r)
		}
	case g.shared == nil:
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			switch r.Method {
			case http.MethodGet:
				defer g.live.stream(id, principalOf(r))()
			case http.MethodPost:
				defer g.live.post(id, principalOf(r))()
			}
		}
		// The session made, if one was, keeps the slot until it ends
		// (go-sdk names it in the answer to its initialize).
		defer func() { g.endEvicted(r.Context(), g.live.keep(w.Header().Get("Mcp-Session-Id"), slot)) }()
		g.serveSession(w, r)
	case r.Header.Get("Mcp-Session-Id") != "":
		g.serveShared(w, r, r.Header.Get("Mcp-Session-Id"))
	case r.Method == http.MethodPost:
		id := rand.Text()
		defer func() { g.endEvicted(r.Context(), g.shared.keep(id, slot)) }()
		g.makeSession(w, r, id)
		// A session whose initialize was refused (its record could not
		// be saved) is not held: it ends here.
		g.dropUnheld(id)
	default:
		g.stateful.ServeHTTP(w, r) // go-sdk says what is missing
	}
}

// isStateless says which handler r goes to; it may read (and put back)
// the body of a POST without a session.
func (g *Gateway) isStateless(w http.ResponseWriter, r *http.Request) (bool, error) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= modernVersion, nil
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return false, nil
	}
	init, err := g.holdsInitialize(w, r)
	return !init, err
}

// holdsInitialize reads the body of r, a POST without a session, whole
// (once; it puts it back) and reports whether it holds an initialize
// request.
func (g *Gateway) holdsInitialize(w http.ResponseWriter, r *http.Request) (bool, error) {
	if rb, ok := r.Body.(*readBody); ok {
		return rb.init, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.maxRequestBytes()))
	r.Body.Close()
	if err != nil {
		return false, err
	}
	rb := &readBody{Reader: bytes.NewReader(body), init: hasInitialize(body)}
	r.Body = rb
	return rb.init, nil
}

// readBody is a request body read whole, put back.
type readBody struct {
	*bytes.Reader
	init bool // it holds an initialize request
}

func (*readBody) Close() error { return nil }

// writeBodyError answers a request whose body could not be read.
func writeBodyError(w http.ResponseWriter, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
}

// endsSession reports whether go-sdk's handler ends the session a
// DELETE names (when it knows the session): its Mcp-Protocol-Version
// header is absent or a handshake-era version. go-sdk refuses a DELETE
// with another version, and the 2026-07-28 handler knows no session; the
// session then goes on, its calls with it.
func endsSession(r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	return v == "" || (v < modernVersion && knownVersion(v))
}

// hasInitialize reports whether a JSON-RPC message or batch holds an
// initialize request, read as go-sdk's handler reads a POST: a batch
// when the body starts with an array (segmentio's decoder, data after
// it ignored), each message with jsonrpc.DecodeMessage (keys matched
// exactly, data after it ignored). A message go-sdk cannot read is no
// initialize (the handler then says what is wrong with it).
func hasInitialize(body []byte) bool {
	var raws []json.RawMessage
	if segjson.NewDecoder(bytes.NewReader(body)).Decode(&raws) != nil {
		raws = []json.RawMessage{body}
	}
	return slices.ContainsFunc(raws, func(raw json.RawMessage) bool {
		msg, err := jsonrpc.DecodeMessage(raw)
		req, ok := msg.(*jsonrpc.Request)
		return err == nil && ok && req.Method == "initialize"
	})
}

// hostAllowed reports whether a Host header names this machine's loopback
// interface or an allowed host.
func (g *Gateway) hostAllowed(host string) bool {
	if slices.Contains(g.opts.AllowedHosts, host) {
		return true
	}
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if slices.Contains(g.opts.AllowedHosts, h) {
		return true
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// originAllowed reports whether a browser Origin may use the gateway: the
// gateway's own origin (the request's Host), or a listed one.
func (g *Gateway) originAllowed(r *http.Request, origin string) bool {
	if slices.Contains(g.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host) && g.hostAllowed(u.Host)
}

func writeRPCError(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	b, _ := json.Marshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", nil, e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// runningReq is a client request being handled in a session, in the list
// of its session's requests (Gateway.running).
type runningReq struct {
	principal  string
	cancel     context.CancelCauseFunc
	prev, next *runningReq
	tracked    bool // in the list
}

var errSessionEnded = errors.New("the client ended its session")

// errSessionEndedElsewhere ends the requests of a shared session's copy
// whose record is gone from the store (endCopy).
var errSessionEndedElsewhere = errors.New("the session ended: deleted through another replica of the gateway, or expired")

// errCopyEndedAtCap ends the requests of a shared session's copy ended
// to make room for another session at a cap (Options.MaxSessions,
// MaxSessionsPerPrincipal) while they were being handled; the session goes on, its next request served by a copy
// made again.
var errCopyEndedAtCap = errors.New("the request ended: this replica of the gateway ended its copy of the session to make room for another session at its cap of sessions; the session goes on, and its next request is served")

// trackSession records a request of the session id being handled (or a
// server's question put to the session: sessionQuestion), until the
// returned function is called.
func (g *Gateway) trackSession(id, principal string, cancel context.CancelCauseFunc) (untrack func()) {
	rr := &runningReq{principal: principal, cancel: cancel, tracked: true}
	g.sessMu.Lock()
	if first := g.running[id]; first != nil {
		rr.next, first.prev = first, rr
	}
	g.running[id] = rr
	g.sessMu.Unlock()
	return func() {
		g.sessMu.Lock()
		defer g.sessMu.Unlock()
		if !rr.tracked {
			return
		}
		switch {
		case rr.prev != nil:
			rr.prev.next = rr.next
		case rr.next != nil:
			g.running[id] = rr.next
		default:
			delete(g.running, id)
		}
		if rr.next != nil {
			rr.next.prev = rr.prev
		}
		rr.prev, rr.next, rr.tracked = nil, nil, false
	}
}

// endSession cancels the requests of the session id that principal made,
// and the questions put to it (a client ending its session: DELETE).
func (g *Gateway) endSession(id, principal string) {
	g.sessMu.Lock()
	defer g.sessMu.Unlock()
	for rr := g.running[id]; rr != nil; rr = rr.next {
		if rr.principal == principal {
			rr.cancel(errSessionEnded)
		}
	}
}

// principalOf returns the principal of an HTTP request (the UserID of its
// go-sdk auth.TokenInfo), or "".
func principalOf(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}
