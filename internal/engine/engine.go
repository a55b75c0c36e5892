package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind names how a client reaches its server.
type Kind string

// The transports.
const (
	Stdio      Kind = "stdio"
	Streamable Kind = "streamable-http"
	SSE        Kind = "sse"
	InProcess  Kind = "in-process"
)

// Config is what the engine needs of a client: plain values, go-sdk's
// client (with the client's middleware and handlers installed), and a few
// functions from the client's features.
type Config struct {
	// Name names the server in errors and logs.
	Name string
	// Kind is the transport; URL the HTTP endpoint (Streamable, SSE);
	// FallbackSSE lets a Streamable endpoint fall back to SSE when the
	// server answers as a legacy SSE server does. Server is the
	// in-process server. Stdio is the stdio transport to copy for each
	// connection (the engine sets its OnStart).
	Kind        Kind
	URL         string
	FallbackSSE bool
	Server      *mcp.Server
	Stdio       stdio.Transport

	// SDK makes the sessions.
	SDK *mcp.Client
	// Observer sees every message (the trace, raw tool schemas).
	Observer *wire.Observer
	// Log receives the engine's records.
	Log *slog.Logger

	// ConnectTimeout bounds a connect, ProbeTimeout the wait for an
	// answer to server/discover (see HandshakeMiddleware), CloseGrace
	// how long a closing session's requests may take to end.
	ConnectTimeout, ProbeTimeout, CloseGrace time.Duration
	// MaxMessageBytes bounds one message from the server.
	MaxMessageBytes int
	// Version is the protocol version to ask for; "" means the newest.
	Version string

	// HTTPClient is the caller's base HTTP client, or nil (the engine's
	// own transport, which Close releases).
	HTTPClient *http.Client
	// WrapHTTP adds the client's layers (credentials, headers) above
	// tap, the Tap of one connection; sse says the connection is the
	// legacy SSE transport, whose go-sdk client does no OAuth. Nil adds
	// none.
	WrapHTTP func(tap http.RoundTripper, sse bool) http.RoundTripper
	// OAuth returns the OAuth handler go-sdk's streamable transport uses,
	// or nil.
	OAuth func() auth.OAuthHandler

	// StartConnect, if set, observes each connect: it is called when one
	// starts, and the function it returns when it ends.
	StartConnect func(context.Context) (context.Context, func(*Session, error))
	// OnLost, if set, is called before a connection that was lost (not
	// closed) is made again.
	OnLost func(context.Context)

	// FastPath lets the connections of a stdio or streamable HTTP server
	// take the fast path for plain calls (see Session.CallTool); Trace
	// says the protocol trace is on (it keeps the HTTP fast path off).
	FastPath, Trace bool
}

// An Engine is the connection to one server, made again when it is lost:
// it connects on first use, shares the connection among concurrent
// requests, and retries a request that never reached the server once on a
// new connection (Send).
type Engine struct {
	cfg Config

	mu       sync.Mutex
	cur      *Session        // the live session, or nil
	dialing  *dialCall       // the connect in progress, or nil
	lost     bool            // the last connection was lost: the next connect must reach the server
	gen      uint64          // incremented by Close
	retiring []*Session      // replaced sessions finishing their requests
	version  string          // protocol version to ask for; "" means the newest
	own      *http.Transport // used when Config.HTTPClient is nil
}

// New returns the engine cfg describes. It does not connect.
func New(cfg Config) *Engine {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Engine{cfg: cfg, version: cfg.Version}
}

// Pin makes later connections ask for version (a group pulled down to the
// handshake era).
func (e *Engine) Pin(version string) {
	e.mu.Lock()
	e.version = version
	e.mu.Unlock()
}

// Pinned returns the protocol version later connections ask for.
func (e *Engine) Pinned() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.version
}

// Current returns the live session, or nil; it does not connect.
func (e *Engine) Current() *Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur
}

// dialCall is a connect in progress; concurrent callers share its outcome.
type dialCall struct {
	done   chan struct{}
	cancel context.CancelFunc // Close ends a connect in progress
	lost   bool               // it replaces a lost connection
	s      *Session
	err    error
}

// Session returns the live session, connecting if there is none. The
// connect runs on its own, bounded by ConnectTimeout, and is shared by
// every caller that needs it; each caller waits only as long as its own
// context allows.
func (e *Engine) Session(ctx context.Context) (*Session, error) {
	e.mu.Lock()
	if s := e.cur; s != nil {
		if !s.ended() {
			e.mu.Unlock()
			return s, nil
		}
		e.cur = nil
		e.lost = true
		e.cfg.Log.Info("connection lost; reconnecting", "cause", wire.RedactURLSecrets(fmt.Sprint(s.err)))
	}
	d := e.dialing
	if d == nil {
		dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		d = &dialCall{done: make(chan struct{}), cancel: cancel, lost: e.lost}
		e.lost = false
		e.dialing = d
		go e.runDial(dctx, d, e.gen)
	}
	e.mu.Unlock()
	select {
	case <-d.done:
		return d.s, d.err
	case <-ctx.Done():
		return nil, e.TransportError(nil, "connect", "", context.Cause(ctx))
	}
}

// runDial makes the connection for d and installs it, unless Close was
// called meanwhile. It ends within ConnectTimeout (plus the time to stop a
// server that did not start).
func (e *Engine) runDial(ctx context.Context, d *dialCall, gen uint64) {
	defer d.cancel()
	if d.lost && e.cfg.OnLost != nil {
		// The reconnect must reach the server, not a cached discover.
		e.cfg.OnLost(ctx)
	}
	octx, end := ctx, func(*Session, error) {}
	if e.cfg.StartConnect != nil {
		octx, end = e.cfg.StartConnect(ctx)
	}
	s, err := e.dial(octx)
	end(s, err)
	e.mu.Lock()
	e.dialing = nil
	closed := e.gen != gen
	if err == nil && !closed {
		e.cur = s
	}
	e.mu.Unlock()
	if closed {
		if err == nil {
			_ = s.close(e.cfg.CloseGrace)
		}
		s, err = nil, e.TransportError(nil, "connect", "", errors.New("the client was closed while connecting"))
	}
	d.s, d.err = s, err
	close(d.done)
}

// Retire makes the next request connect anew, and lets the requests in
// flight on the current session finish before it is closed.
func (e *Engine) Retire() {
	e.mu.Lock()
	s := e.cur
	e.cur = nil
	if s != nil {
		s.retired.Store(true)
		s.grace = e.cfg.CloseGrace
		e.retiring = append(e.retiring, s)
	}
	e.mu.Unlock()
	if s != nil && s.inflight.Load() == 0 {
		go s.close(s.grace)
	}
}

// drop forgets s, a lost connection, if it is current, and closes it.
func (e *Engine) drop(s *Session) {
	e.mu.Lock()
	if e.cur == s {
		e.cur = nil
		e.lost = true
	}
	e.mu.Unlock()
	_ = s.close(e.cfg.CloseGrace)
}

// Close ends the live connection, if any, and a connect in progress: a
// stdio server and its process group are stopped. The engine stays
// usable: the next request reconnects. Requests in flight fail with a
// *TransportError.
func (e *Engine) Close() error {
	e.mu.Lock()
	s := e.cur
	e.cur = nil
	e.gen++
	if e.dialing != nil {
		e.dialing.cancel() // a connect in progress (a user signing in) ends too
	}
	own := e.own
	retiring := e.retiring
	e.retiring = nil
	e.mu.Unlock()
	var err error
	if s != nil {
		err = s.close(e.cfg.CloseGrace)
	}
	for _, r := range retiring {
		_ = r.close(e.cfg.CloseGrace)
	}
	if own != nil {
		own.CloseIdleConnections()
		// Responses still draining (wire.DrainGrace) leave their
		// connections idle a little later.
		time.AfterFunc(2*wire.DrainGrace, own.CloseIdleConnections)
	}
	return err
}

// Generation counts the calls of Close: a task that outlives a Close is
// told apart from one whose connection was lost.
func (e *Engine) Generation() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen
}
