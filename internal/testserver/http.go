package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SessionHeader is the HTTP header carrying the streamable session id.
const SessionHeader = "Mcp-Session-Id"

// A StreamableOption configures [ServeStreamable] and [StartStreamable].
type StreamableOption func(*mcp.StreamableHTTPOptions)

// Stateless makes the streamable handler stateless
// (mcp.StreamableHTTPOptions.Stateless). go-sdk only serves the 2026-07-28
// protocol over stateless handlers: a Modern server behind a stateful handler
// negotiates 2025-11-25.
func Stateless() StreamableOption {
	return func(o *mcp.StreamableHTTPOptions) { o.Stateless = true }
}

// SessionTimeout closes sessions idle for d
// (mcp.StreamableHTTPOptions.SessionTimeout). Later requests carrying their
// id get HTTP 404.
func SessionTimeout(d time.Duration) StreamableOption {
	return func(o *mcp.StreamableHTTPOptions) { o.SessionTimeout = d }
}

// JSONResponse makes the handler answer single requests with
// application/json instead of text/event-stream.
func JSONResponse() StreamableOption {
	return func(o *mcp.StreamableHTTPOptions) { o.JSONResponse = true }
}

// PropagateCancellation ties handler contexts to the HTTP request context
// for 2026-07-28 requests (mcp.StreamableHTTPOptions.PropagateRequestCancellation).
// Without it, a stateless server never sees a client's cancellation.
func PropagateCancellation() StreamableOption {
	return func(o *mcp.StreamableHTTPOptions) { o.PropagateRequestCancellation = true }
}

// HTTPServer is a test MCP endpoint served by an httptest server bound to
// 127.0.0.1. It records every HTTP request it receives and can expire
// sessions on demand. It is closed by the cleanup of the test that started it.
type HTTPServer struct {
	// URL is the MCP endpoint to give to clients.
	URL string

	mcpServer *mcp.Server
	httpSrv   *httptest.Server
	sessionOf func(*http.Request) string // session id carried by a request

	mu       sync.Mutex
	requests []RecordedRequest
	seen     []string        // session ids, in order of first appearance
	expired  map[string]bool // session ids answered with 404
	streams  map[int]func()  // cancel funcs of open GET streams
	nextID   int
}

// RecordedRequest is one HTTP request received by an [HTTPServer].
type RecordedRequest struct {
	// Method is the HTTP method.
	Method string
	// RPCMethod is the JSON-RPC method of the (first) message in a POST body,
	// or "" for responses, GETs and DELETEs.
	RPCMethod string
	// SessionID is the session id the request carried, if any.
	SessionID string
	// Header is a copy of the request header.
	Header http.Header
}

// ServeStreamable serves srv over streamable HTTP and returns the endpoint
// URL. See [StartStreamable].
func ServeStreamable(t testing.TB, srv *mcp.Server, opts ...StreamableOption) string {
	return StartStreamable(t, srv, opts...).URL
}

// StartStreamable serves srv with mcp.NewStreamableHTTPHandler on a new
// httptest server bound to 127.0.0.1, closed on t.Cleanup.
func StartStreamable(t testing.TB, srv *mcp.Server, opts ...StreamableOption) *HTTPServer {
	t.Helper()
	var o mcp.StreamableHTTPOptions
	for _, opt := range opts {
		opt(&o)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &o)
	sessionOf := func(r *http.Request) string { return r.Header.Get(SessionHeader) }
	return start(t, srv, h, "/mcp", sessionOf)
}

// ServeSSE serves srv over the legacy HTTP+SSE transport and returns the
// endpoint URL. See [StartSSE].
func ServeSSE(t testing.TB, srv *mcp.Server) string {
	return StartSSE(t, srv).URL
}

// StartSSE serves srv with mcp.NewSSEHandler on a new httptest server bound
// to 127.0.0.1, closed on t.Cleanup. go-sdk never offers 2026-07-28 over
// SSE, so every SSE session negotiates 2025-11-25 at most.
func StartSSE(t testing.TB, srv *mcp.Server) *HTTPServer {
	t.Helper()
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	sessionOf := func(r *http.Request) string { return r.URL.Query().Get("sessionid") }
	return start(t, srv, h, "/sse", sessionOf)
}

func start(t testing.TB, srv *mcp.Server, h http.Handler, path string, sessionOf func(*http.Request) string) *HTTPServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testserver: listen: %v", err)
	}
	s := &HTTPServer{
		mcpServer: srv,
		sessionOf: sessionOf,
		expired:   make(map[string]bool),
		streams:   make(map[int]func()),
	}
	s.httpSrv = httptest.NewUnstartedServer(s.wrap(h))
	s.httpSrv.Listener.Close()
	s.httpSrv.Listener = l
	s.httpSrv.Start()
	s.URL = s.httpSrv.URL + path
	t.Cleanup(s.close)
	return s
}

// wrap records requests, answers 404 for expired sessions, and makes GET
// streams cancellable.
func (s *HTTPServer) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := RecordedRequest{Method: r.Method, SessionID: s.sessionOf(r), Header: r.Header.Clone()}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec.RPCMethod = rpcMethod(body)
		}
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		id := rec.SessionID
		if id != "" && !slices.Contains(s.seen, id) {
			s.seen = append(s.seen, id)
		}
		expired := id != "" && s.expired[id]
		var streamID int
		if r.Method == http.MethodGet && !expired {
			ctx, cancel := context.WithCancel(r.Context())
			r = r.WithContext(ctx)
			s.nextID++
			streamID = s.nextID
			s.streams[streamID] = cancel
		}
		s.mu.Unlock()
		if expired {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		if streamID != 0 {
			defer func() {
				s.mu.Lock()
				cancel := s.streams[streamID]
				delete(s.streams, streamID)
				s.mu.Unlock()
				cancel()
			}()
		}
		h.ServeHTTP(w, r)
	})
}

// rpcMethod returns the method of the JSON-RPC message (or of the first
// message of a batch) in body.
func rpcMethod(body []byte) string {
	var msg struct {
		Method string `json:"method"`
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			return ""
		}
		body = batch[0]
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	return msg.Method
}

// Requests returns a copy of the HTTP requests received so far, in order.
func (s *HTTPServer) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.requests)
	for i := range out {
		out[i].Header = out[i].Header.Clone()
	}
	return out
}

// SessionIDs returns the session ids clients have sent so far, in order of
// first appearance. Stateless servers have none.
func (s *HTTPServer) SessionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// ExpireSession makes every later request carrying session id get HTTP 404
// "session not found" (which go-sdk clients report as mcp.ErrSessionMissing),
// and closes the server side of that session.
func (s *HTTPServer) ExpireSession(id string) {
	s.mu.Lock()
	s.expired[id] = true
	s.mu.Unlock()
	s.closeServerSessions(func(ss *mcp.ServerSession) bool { return ss.ID() == id })
}

// ExpireSessions expires every session seen so far, as [HTTPServer.ExpireSession]
// does, and ends every open GET stream (for SSE this closes the sessions).
// It has no effect on stateless servers, which have no sessions.
func (s *HTTPServer) ExpireSessions() {
	s.mu.Lock()
	ids := slices.Clone(s.seen)
	for _, id := range ids {
		s.expired[id] = true
	}
	s.mu.Unlock()
	s.closeServerSessions(func(ss *mcp.ServerSession) bool { return ss.ID() != "" && slices.Contains(ids, ss.ID()) })
	s.cancelStreams()
}

func (s *HTTPServer) closeServerSessions(match func(*mcp.ServerSession) bool) {
	if s.mcpServer == nil {
		return // a server per session (ServePerUser): the HTTP server's close ends them
	}
	var victims []*mcp.ServerSession
	for ss := range s.mcpServer.Sessions() {
		if match(ss) {
			victims = append(victims, ss)
		}
	}
	for _, ss := range victims {
		_ = ss.Close()
	}
}

func (s *HTTPServer) cancelStreams() {
	s.mu.Lock()
	var cancels []func()
	for _, c := range s.streams {
		cancels = append(cancels, c)
	}
	s.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// close shuts everything down without waiting for hanging streams.
func (s *HTTPServer) close() {
	s.mu.Lock()
	ids := slices.Clone(s.seen)
	s.mu.Unlock()
	s.closeServerSessions(func(ss *mcp.ServerSession) bool { return ss.ID() != "" && slices.Contains(ids, ss.ID()) })
	s.cancelStreams()
	s.httpSrv.CloseClientConnections()
	s.httpSrv.Close()
}
