package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dial establishes a new session.
func (e *Engine) dial(ctx context.Context, sl *slot) (*Session, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := newConnectDeadline(e.cfg.ConnectTimeout, func() { cancel(errConnectTimeout) })
	defer deadline.stop()
	start := time.Now()

	s, err := e.dialOnce(ctx, sl, deadline, e.cfg.Kind, e.Pinned())
	first := s
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, errProbeUnanswered):
		// The server may still act on the probe: a new process (or
		// in-process session) speaks only the initialize handshake.
		s, err = e.dialOnce(ctx, sl, deadline, e.cfg.Kind, wire.HandshakeVersion)
	case err != nil && e.cfg.Kind == Stdio && ctx.Err() == nil && s.exitedAlone:
		// Some handshake-era servers exit when they see server/discover.
		// Start the server again and speak only the initialize handshake.
		e.cfg.Log.Info("server exited during the protocol probe; restarting it with the initialize handshake", "cause", err)
		s, err = e.dialOnce(ctx, sl, deadline, e.cfg.Kind, wire.HandshakeVersion)
	case err != nil && e.cfg.Kind == Streamable && e.cfg.FallbackSSE && s.legacyHTTP.Load() && ctx.Err() == nil:
		e.cfg.Log.Info("server answered as a legacy SSE server; using the SSE transport")
		s, err = e.dialOnce(ctx, sl, deadline, SSE, e.Pinned())
	}
	if err != nil {
		return nil, e.connectError(ctx, s, e.endpointHint(first, err))
	}
	s.connectedAt = start
	s.connectTime = time.Since(start)
	s.life, s.kill = context.WithCancel(context.Background())
	s.notices, s.endNotices = context.WithCancel(context.Background())
	s.gone, s.endGone = context.WithCancel(context.Background())
	e.bySDK.Store(s.cs, s)
	go func() {
		s.err = s.cs.Wait()
		e.bySDK.Delete(s.cs)
		s.order.End()
		close(s.done)
		s.endGone()
	}()
	return s, nil
}

// dialOnce makes one connect attempt over kind. On failure it still
// returns the attempt's session value, for diagnostics.
func (e *Engine) dialOnce(ctx context.Context, sl *slot, deadline *connectDeadline, kind Kind, pinVersion string) (*Session, error) {
	s := &Session{e: e, slot: sl, kind: kind, done: make(chan struct{}), order: order.New()}
	st := &dialState{deadline: deadline, session: s}
	st.step.Store("connect")
	s.state = st
	ctx = context.WithValue(ctx, dialKey{}, st)
	ctx = order.WithMarks(ctx, s.order) // for the notifications' handlers (order.HandlingFrom)
	ctx = oauthflow.WithAttempt(ctx, st)

	t, cleanup, err := e.transport(ctx, kind, s)
	if err != nil {
		return s, err
	}
	var opts *mcp.ClientSessionOptions
	if pinVersion != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: pinVersion}
	}
	cs, err := e.cfg.SDK.Connect(ctx, t, opts)
	if err != nil {
		if cleanup != nil {
			cleanup()
		}
		if s.stdio != nil {
			// Did it exit by itself, before go-sdk or we closed it?
			s.exitedAlone = s.stdio.ExitedAlone()
			_ = s.stdio.Close()
		}
		return s, err
	}
	s.cs = cs
	s.version = cs.InitializeResult().ProtocolVersion
	s.discover = wire.DiscoverEra(s.version)
	s.chooseFastPath()
	if m, ok := e.learned.Load(s.version); ok && s.discover {
		s.fast.meta.Store(m.(*learnedMeta))
	}
	return s, nil
}

// dialState follows one connect attempt through the handshake, so that a
// timeout can say which step hung.
type dialState struct {
	step     atomic.Value                    // string: the request awaiting an answer
	deadline *connectDeadline                // the connect timeout, paused while a user signs in
	probe    atomic.Pointer[connectDeadline] // the server/discover probe's, likewise
	authErr  atomic.Pointer[error]           // a failed sign-in, not to be asked again
	refused  atomic.Pointer[error]           // server/discover refused authorization: no fallback
	session  *Session                        // the attempt's session (its stdio connection)
	late     atomic.Bool                     // the probe got no answer in time
}

// Pause stops the connect and probe clocks until resume is called
// (oauthflow.Attempt: while a user signs in).
func (st *dialState) Pause() (resume func()) {
	var resumes []func()
	if st.deadline != nil {
		resumes = append(resumes, st.deadline.pause())
	}
	if p := st.probe.Load(); p != nil {
		resumes = append(resumes, p.pause())
	}
	return func() {
		for _, r := range resumes {
			r()
		}
	}
}

// FailedSignIn returns the error of a sign-in that failed in this attempt,
// or nil (oauthflow.Attempt).
func (st *dialState) FailedSignIn() error {
	if p := st.authErr.Load(); p != nil {
		return *p
	}
	return nil
}

// SetFailedSignIn records a failed sign-in, not to be asked again in this
// attempt (oauthflow.Attempt).
func (st *dialState) SetFailedSignIn(err error) {
	st.authErr.Store(&err)
}

// dialKey carries a connect attempt's *dialState from Connect, through
// go-sdk (which passes only the context on), to HandshakeMiddleware and
// BacklogMiddleware (the OAuth handler gets it through
// oauthflow.WithAttempt). Only values that must cross go-sdk ride on the
// context; what this package's own code passes to itself is a parameter.
type dialKey struct{}

// Handshake configures HandshakeMiddleware.
type Handshake struct {
	// Probe bounds the wait for an answer to server/discover.
	Probe time.Duration
	// OneSession says a connection is one server session (stdio,
	// in-process): a probe answered late is then followed by a new
	// connection, not by initialize on the same one.
	OneSession bool
	// Keep reports whether the error of a probe the server refused
	// authorization is the caller's own (a failed sign-in, or one to
	// make), returned as it is, not as the refusal (AuthRefusal); nil
	// keeps none.
	Keep func(error) bool
	// Log receives the fallbacks.
	Log *slog.Logger
}

// HandshakeMiddleware is go-sdk sending middleware that bounds the
// server/discover probe and records the handshake step in progress, for
// the connect attempts of an Engine. A probe the server refused
// authorization ends the connect: the initialize handshake go-sdk falls
// back to is not sent.
func HandshakeMiddleware(h Handshake) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return h.handle(next)
	}
}

func (h Handshake) handle(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		st, _ := ctx.Value(dialKey{}).(*dialState)
		if st == nil {
			return next(ctx, method, req)
		}
		if refused := st.refused.Load(); refused != nil && method == "initialize" {
			return nil, *refused
		}
		st.step.Store(method)
		if method == "initialize" && st.late.Load() {
			// go-sdk falls back to initialize on the same connection, but
			// the server may have taken the discover late (and then
			// refuses initialize as a duplicate): connect again.
			return nil, errProbeUnanswered
		}
		if method != "server/discover" {
			return next(ctx, method, req)
		}
		pctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		probe := newConnectDeadline(h.Probe, func() { cancel(errProbeTimeout) })
		defer probe.stop()
		st.probe.Store(probe)
		defer st.probe.Store(nil)
		pctx, rec := wire.TrackRequest(pctx)
		res, err := next(pctx, method, req)
		rec.Done()
		refused := AuthRefusal(rec, err, h.Keep)
		if refused != nil && ctx.Err() == nil {
			h.Log.Info("server refused authorization for server/discover; not falling back to older protocols", "status", rec.Status())
			st.refused.Store(&refused)
			return nil, refused
		}
		if err != nil && pctx.Err() != nil && ctx.Err() == nil {
			h.Log.Info("server did not answer server/discover; using the initialize handshake", "after", h.Probe)
			// A process or an in-process server is one session: start a
			// new one. (Over HTTP each request stands alone.)
			st.late.Store(h.OneSession)
		}
		return res, err
	}
}

// connectDeadline ends a connect attempt that takes longer than
// ConnectTimeout. The time a user spends signing in (OAuth) does not count:
// the OAuth redirect server pauses it.
type connectDeadline struct {
	mu      sync.Mutex
	timer   *time.Timer
	left    time.Duration // when paused: what remains
	started time.Time     // when the current run began
	paused  int
	done    bool // fired or stopped
}

func newConnectDeadline(d time.Duration, expire func()) *connectDeadline {
	return &connectDeadline{timer: time.AfterFunc(d, expire), left: d, started: time.Now()}
}

// pause stops the clock until resume is called.
func (d *connectDeadline) pause() (resume func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused == 0 && !d.done {
		if !d.timer.Stop() {
			d.done = true // it fired already
		}
		d.left -= time.Since(d.started)
	}
	d.paused++
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.paused--
			if d.paused == 0 && !d.done {
				d.started = time.Now()
				d.timer.Reset(max(d.left, 0))
			}
		})
	}
}

// stop ends the deadline for good.
func (d *connectDeadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	d.timer.Stop()
}

// errConnectTimeout is the cause of a connect that took too long.
var errConnectTimeout = errors.New("connect timeout")

// errProbeTimeout is the cause of a server/discover probe that got no
// answer in time.
var errProbeTimeout = errors.New("no answer to server/discover within ProbeTimeout")

// errProbeUnanswered ends a connect attempt whose server/discover probe
// got no answer within ProbeTimeout, on a connection that is one server
// session (stdio, in-process): the next attempt is pinned to the
// initialize handshake.
var errProbeUnanswered = errors.New("no answer to server/discover within ProbeTimeout; connecting again with the initialize handshake")

// connectError explains a failed connect.
func (e *Engine) connectError(ctx context.Context, s *Session, err error) error {
	op := "connect"
	if s != nil && s.state != nil {
		if step, _ := s.state.step.Load().(string); step != "" {
			op = step
		}
	}
	if errors.Is(context.Cause(ctx), errConnectTimeout) {
		err = fmt.Errorf("no answer to %s within %v (ClientOptions.ConnectTimeout; the server is running but did not answer: is it an MCP server on this transport?): %w",
			op, e.cfg.ConnectTimeout, context.DeadlineExceeded)
	}
	return e.TransportError(s, op, "", err)
}
