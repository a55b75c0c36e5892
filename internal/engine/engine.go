package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
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
	// NameOf, if set, is called for the name each time one is needed,
	// instead of Name (a name the first connection settles).
	NameOf func() string
	// OnDial, if set, is called when each connect ends, with its session
	// or its error, before any caller gets them.
	OnDial func(*Session, error)
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
	// starts, with the context of the caller that caused it (for the
	// caller's trace only: the connection is made with conn, and the
	// context StartConnect returns must derive from conn), and the
	// function it returns when it ends.
	StartConnect func(caller, conn context.Context) (context.Context, func(*Session, error))
	// OnLost, if set, is called before a connection that was lost (not
	// closed) is made again.
	OnLost func(context.Context)

	// Partition, if set, names the partition of a request's context: the
	// principal it is made for (and its identity headers). An HTTP server
	// gets one connection per partition, made with Detach's context for
	// it, so that its handshake, its event stream and the server's
	// session state belong to that principal; "" is the partition of
	// requests made for no one. A stdio or in-process server has one
	// connection (it carries no identity but the _meta of calls).
	Partition func(context.Context) string
	// Detach returns the context a connection of partition is made with
	// and lives in (go-sdk's handlers of server messages see it): it
	// carries none of ctx's values but what the partition's connection
	// needs (its identity). Nil means context.Background().
	Detach func(ctx context.Context, partition string) context.Context
	// MaxSessions bounds the partitions with a connection at once: the
	// connection of the one unused longest, with no request in flight,
	// is closed to make room; when every one is busy, a new partition's
	// request fails with a *TransportError. Zero means no bound.
	MaxSessions int
	// IdleTimeout closes a partition's connection (not the partition of
	// no one) unused for this long; zero means never. Idle connections
	// are found when a request needs a connection.
	IdleTimeout time.Duration

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
	slots    map[string]*slot // by partition
	gen      uint64           // incremented by Close
	retiring []*Session       // replaced sessions finishing their requests
	closing  []*Session       // sessions a Close is closing: a Close beside it waits for them too
	version  string           // protocol version to ask for; "" means the newest
	own      *http.Transport  // used when Config.HTTPClient is nil
	learned  sync.Map         // protocol version → *learnedMeta: go-sdk's _meta of a call (Session.learn)
	paths    pathCounts       // tools/calls by the path they took (Paths)
	bySDK    sync.Map         // *mcp.ClientSession → its live *Session (Settle)
}

// A slot is the connection of one partition (Config.Partition), made
// again when it is lost.
type slot struct {
	key     string
	cur     *Session  // the live session, or nil
	dialing *dialCall // the connect in progress, or nil
	lost    bool      // the last connection was lost: the next connect must reach the server
	used    time.Time // when a request last asked for it
	obs     *wire.Observer
}

// New returns the engine cfg describes. It does not connect.
func New(cfg Config) *Engine {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Engine{cfg: cfg, version: cfg.Version, slots: make(map[string]*slot)}
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

// Current returns the live session of ctx's partition, or nil; it does
// not connect.
func (e *Engine) Current(ctx context.Context) *Session {
	key := e.partition(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if sl := e.slots[key]; sl != nil {
		return sl.cur
	}
	return nil
}

// Observer returns the observer of ctx's partition: the tool schemas as
// its principal's connection last listed them. It is nil for a principal
// with no connection now.
func (e *Engine) Observer(ctx context.Context) *wire.Observer {
	key := e.partition(ctx)
	if key == "" {
		return e.cfg.Observer
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if sl := e.slots[key]; sl != nil {
		return sl.obs
	}
	return nil
}

// partition returns the partition of ctx: "" unless the server is
// reached over HTTP and Config.Partition names one.
func (e *Engine) partition(ctx context.Context) string {
	if e.cfg.Partition == nil || (e.cfg.Kind != Streamable && e.cfg.Kind != SSE) {
		return ""
	}
	return e.cfg.Partition(ctx)
}

// detach returns the context a connection of partition key is made with.
func (e *Engine) detach(ctx context.Context, key string) context.Context {
	if e.cfg.Detach == nil {
		return context.Background()
	}
	return e.cfg.Detach(ctx, key)
}

// dialCall is a connect in progress; concurrent callers share its outcome.
type dialCall struct {
	done   chan struct{}
	cancel context.CancelFunc // Close ends a connect in progress
	lost   bool               // it replaces a lost connection
	s      *Session
	err    error
}

// Session returns the live session of ctx's partition (see
// Config.Partition), connecting if there is none. The connect runs on its
// own, with a context of the partition's (Config.Detach) bounded by
// ConnectTimeout, and is shared by every caller of the partition that
// needs it; each caller waits only as long as its own context allows.
func (e *Engine) Session(ctx context.Context) (*Session, error) {
	key := e.partition(ctx)
	e.mu.Lock()
	sl, err := e.slotLocked(key)
	if err != nil {
		e.mu.Unlock()
		return nil, e.TransportError(nil, "connect", "", err)
	}
	if s := sl.cur; s != nil {
		if !s.ended() {
			e.mu.Unlock()
			return s, nil
		}
		sl.cur = nil
		sl.lost = true
		e.cfg.Log.Info("connection lost; reconnecting", "cause", wire.RedactURLSecrets(fmt.Sprint(s.err)))
		e.retireEndedLocked(s)
	}
	d := sl.dialing
	if d == nil && ctx.Err() != nil {
		// A caller that no longer waits starts no connect: made anyway
		// (after Close, say, by a caller whose context Close's owner
		// ended first), nobody would close it. Checked under e.mu, so a
		// Close after this sees any connect started before it.
		if sl.key != "" {
			delete(e.slots, sl.key) // a principal with no connection keeps no slot
		}
		e.mu.Unlock()
		return nil, e.TransportError(nil, "connect", "", context.Cause(ctx))
	}
	if d == nil {
		dctx, cancel := context.WithCancel(e.detach(ctx, key))
		d = &dialCall{done: make(chan struct{}), cancel: cancel, lost: sl.lost}
		sl.lost = false
		sl.dialing = d
		go e.runDial(dctx, ctx, sl, d, e.gen)
	}
	e.mu.Unlock()
	select {
	case <-d.done:
		return d.s, d.err
	case <-ctx.Done():
		return nil, e.TransportError(nil, "connect", "", context.Cause(ctx))
	}
}

// TooManySessionsError is the cause of a request refused because every
// one of Config.MaxSessions connections has requests in flight.
type TooManySessionsError struct{ Max int }

func (e *TooManySessionsError) Error() string {
	return fmt.Sprintf("%d principals have connections with requests in flight (ClientOptions.MaxSessions); none can be closed for another", e.Max)
}

// slotLocked returns the slot of key, made if there is none: idle
// connections are closed first, and the least recently used one when the
// bound is reached. e.mu is held.
func (e *Engine) slotLocked(key string) (*slot, error) {
	now := time.Now()
	sl := e.slots[key]
	if sl != nil {
		sl.used = now
		return sl, nil
	}
	if e.cfg.IdleTimeout > 0 {
		for k, o := range e.slots {
			if k != "" && now.Sub(o.used) > e.cfg.IdleTimeout && o.idle() {
				e.evictLocked(o)
			}
		}
	}
	if max := e.cfg.MaxSessions; max > 0 && len(e.slots) >= max {
		var lru *slot
		for _, o := range e.slots {
			if o.idle() && (lru == nil || o.used.Before(lru.used)) {
				lru = o
			}
		}
		if lru == nil {
			return nil, &TooManySessionsError{Max: max}
		}
		e.evictLocked(lru)
	}
	obs := e.cfg.Observer
	if key != "" {
		obs = obs.Partition()
	}
	sl = &slot{key: key, used: now, obs: obs}
	e.slots[key] = sl
	return sl, nil
}

// idle reports whether sl has no connect in progress and no request in
// flight.
func (sl *slot) idle() bool {
	return sl.dialing == nil && (sl.cur == nil || sl.cur.inflight.Load() == 0)
}

// evictLocked forgets sl and closes its connection. e.mu is held.
func (e *Engine) evictLocked(sl *slot) {
	delete(e.slots, sl.key)
	if s := sl.cur; s != nil {
		sl.cur = nil
		e.cfg.Log.Debug("closing an idle principal's connection")
		go s.close(e.cfg.CloseGrace)
	}
}

// runDial makes the connection for d and installs it in sl, unless Close
// was called meanwhile. It ends within ConnectTimeout (plus the time to
// stop a server that did not start).
func (e *Engine) runDial(ctx, caller context.Context, sl *slot, d *dialCall, gen uint64) {
	defer d.cancel()
	if d.lost && e.cfg.OnLost != nil {
		// The reconnect must reach the server, not a cached discover.
		e.cfg.OnLost(ctx)
	}
	octx, end := ctx, func(*Session, error) {}
	if e.cfg.StartConnect != nil {
		octx, end = e.cfg.StartConnect(caller, ctx)
	}
	s, err := e.dial(octx, sl)
	if e.cfg.OnDial != nil {
		e.cfg.OnDial(s, err)
	}
	end(s, err)
	e.mu.Lock()
	sl.dialing = nil
	closed := e.gen != gen || e.slots[sl.key] != sl
	if err == nil && !closed {
		sl.cur = s
	}
	if err != nil && sl.cur == nil && e.slots[sl.key] == sl && sl.key != "" {
		// A principal whose connect failed keeps no slot.
		delete(e.slots, sl.key)
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

// Retire makes the next request of every partition connect anew, and
// lets the requests in flight on the current sessions finish before they
// are closed.
func (e *Engine) Retire() {
	e.mu.Lock()
	var idle []*Session
	for _, sl := range e.slots {
		s := sl.cur
		sl.cur = nil
		if s == nil {
			continue
		}
		s.retired.Store(true)
		e.retiring = append(e.retiring, s)
		if s.inflight.Load() == 0 {
			idle = append(idle, s)
		}
	}
	e.mu.Unlock()
	for _, s := range idle {
		go s.close(e.cfg.CloseGrace)
	}
}

// retireEndedLocked closes s, a session found ended, once its requests in
// flight have ended: go-sdk ends what it keeps open for a session it
// closes, not for one that failed (the subscriptions/listen stream of a
// 2026-07-28 session, which would stay open until the server ends it).
// e.mu is held.
func (e *Engine) retireEndedLocked(s *Session) {
	if s.retired.Swap(true) {
		return
	}
	e.retiring = slices.DeleteFunc(e.retiring, (*Session).ended)
	e.retiring = append(e.retiring, s)
	if s.inflight.Load() == 0 {
		go s.close(e.cfg.CloseGrace)
	}
}

// expire forgets s, an HTTP session that was lost (the server ended it,
// or go-sdk's connection failed), if it is current, and closes it once
// its requests in flight have ended (at most CloseGrace after the last
// one was cancelled by Close, as Retire does).
func (e *Engine) expire(s *Session) {
	e.mu.Lock()
	if sl := s.slot; sl != nil && sl.cur == s {
		sl.cur = nil
		sl.lost = true
	}
	if s.retired.Swap(true) {
		e.mu.Unlock()
		return
	}
	e.retiring = slices.DeleteFunc(e.retiring, (*Session).ended)
	e.retiring = append(e.retiring, s)
	idle := s.inflight.Load() == 0
	e.mu.Unlock()
	if idle {
		go s.close(e.cfg.CloseGrace)
	}
}

// drop forgets s, a lost connection, if it is current, and closes it.
func (e *Engine) drop(s *Session) {
	e.mu.Lock()
	if sl := s.slot; sl != nil && sl.cur == s {
		sl.cur = nil
		sl.lost = true
	}
	e.mu.Unlock()
	_ = s.close(e.cfg.CloseGrace)
}

// Close ends the live connections, if any, and the connects in progress:
// a stdio server and its process group are stopped. The engine stays
// usable: the next request reconnects. Requests in flight fail with a
// *TransportError. A Close called while another is closing returns only
// once the other's sessions are closed too.
func (e *Engine) Close() error {
	e.mu.Lock()
	var live []*Session
	for _, sl := range e.slots {
		if sl.cur != nil {
			live = append(live, sl.cur)
		}
		if sl.dialing != nil {
			sl.dialing.cancel() // a connect in progress (a user signing in) ends too
		}
	}
	e.slots = make(map[string]*slot)
	e.gen++
	own := e.own
	retiring := e.retiring
	e.retiring = nil
	// A Close beside this one is still closing its sessions: this one
	// returns only once they are closed too (their close is shared).
	retiring = append(retiring, e.closing...)
	mine := append(slices.Clip(live), retiring...)
	e.closing = append(e.closing, mine...)
	e.mu.Unlock()
	defer e.closed(mine)
	var (
		mu  sync.Mutex
		err error
		wg  sync.WaitGroup
	)
	for _, s := range live {
		wg.Go(func() {
			if cerr := s.close(e.cfg.CloseGrace); cerr != nil {
				mu.Lock()
				err = errors.Join(err, cerr)
				mu.Unlock()
			}
		})
	}
	for _, r := range retiring {
		wg.Go(func() { _ = r.close(e.cfg.CloseGrace) })
	}
	wg.Wait()
	if own != nil {
		own.CloseIdleConnections()
		// Responses still draining (wire.DrainGrace) leave their
		// connections idle a little later.
		time.AfterFunc(2*wire.DrainGrace, own.CloseIdleConnections)
	}
	return err
}

// closed forgets sessions that a Close has closed.
func (e *Engine) closed(sessions []*Session) {
	done := make(map[*Session]bool, len(sessions))
	for _, s := range sessions {
		done[s] = true
	}
	e.mu.Lock()
	e.closing = slices.DeleteFunc(e.closing, func(s *Session) bool { return done[s] })
	e.mu.Unlock()
}

// Generation counts the calls of Close: a task that outlives a Close is
// told apart from one whose connection was lost.
func (e *Engine) Generation() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen
}
