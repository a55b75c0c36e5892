package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one established connection.
type session struct {
	cs    *mcp.ClientSession
	info  ServerInfo
	stdio *stdio.Conn // the process connection, for stdio targets
	done  chan struct{}
	err   error // why the session ended; valid after done is closed
	// life ends when the session is closed; calls in flight are cancelled.
	life     context.Context
	kill     context.CancelFunc
	inflight atomic.Int64 // requests running in this session
	retired  atomic.Bool  // replaced; closes when its last request ends
	grace    time.Duration

	// Set while connecting.
	state       *dialState
	exitedAlone bool        // the stdio server exited during the handshake
	sawPOST     atomic.Bool // the first POST has been answered
	legacyHTTP  atomic.Bool // ... with a status a legacy SSE server gives

	firstAnswer atomic.Pointer[httpAnswer] // the first HTTP response (endpointHint)
	fast        fastState                  // the fast path's (fastcall.go)

	closeOnce sync.Once
	closeErr  error
}

func (s *session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// close cancels the requests in flight (go-sdk tells the server), lets them
// return, and closes the connection. It waits at most about two grace
// periods: a server that is slow to end its session (an HTTP DELETE that
// does not return) finishes closing in the background, bounded by go-sdk's
// own timeout. A stdio server is different: go-sdk closes the connection
// only once every request has finished, and an answer being written to a
// server that does not read its stdin never finishes; so after one grace
// period the process is ended here, and close returns only when it and its
// process group are gone.
func (s *session) close(grace time.Duration) error {
	s.closeOnce.Do(func() {
		s.kill()
		deadline := time.Now().Add(grace)
		for s.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		closed := make(chan error, 1)
		go func() { closed <- s.cs.Close() }()
		select {
		case s.closeErr = <-closed:
			<-s.done
			return
		case <-time.After(grace):
		}
		if s.stdio != nil {
			_ = s.stdio.Close()
			select {
			case s.closeErr = <-closed:
			case <-time.After(grace):
			}
		}
	})
	return s.closeErr
}

// dialCall is a connect in progress; concurrent callers share its outcome.
type dialCall struct {
	done   chan struct{}
	cancel context.CancelFunc // Close ends a connect in progress
	lost   bool               // it replaces a lost connection
	s      *session
	err    error
}

// session returns the live session, connecting if there is none. The
// connect runs on its own, bounded by ConnectTimeout, and is shared by
// every caller that needs it; each caller waits only as long as its own
// context allows.
func (c *Client) session(ctx context.Context) (*session, error) {
	c.mu.Lock()
	if s := c.cur; s != nil {
		if !s.ended() {
			c.mu.Unlock()
			return s, nil
		}
		c.cur = nil
		c.lost = true
		c.log.Info("connection lost; reconnecting", "cause", wire.RedactURLSecrets(fmt.Sprint(s.err)))
	}
	d := c.dialing
	if d == nil {
		dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		d = &dialCall{done: make(chan struct{}), cancel: cancel, lost: c.lost}
		c.lost = false
		c.dialing = d
		go c.runDial(dctx, d, c.gen)
	}
	c.mu.Unlock()
	select {
	case <-d.done:
		return d.s, d.err
	case <-ctx.Done():
		return nil, c.transportError(nil, "connect", "", context.Cause(ctx))
	}
}

// runDial makes the connection for d and installs it, unless Close was
// called meanwhile. It ends within ConnectTimeout (plus the time to stop a
// server that did not start).
func (c *Client) runDial(ctx context.Context, d *dialCall, gen uint64) {
	defer d.cancel()
	if d.lost {
		// The reconnect must reach the server, not a cached discover.
		c.cache.ForgetDiscover(ctx)
	}
	octx, end := c.startOp(ctx, "connect", "")
	s, err := c.dial(octx)
	if c.opts.Telemetry != nil {
		r := OperationResult{Err: err, ErrorType: ErrorType(err)}
		if s != nil {
			r.SessionID, r.ProtocolVersion = s.cs.ID(), s.info.ProtocolVersion
		}
		end(r)
	}
	c.mu.Lock()
	c.dialing = nil
	closed := c.gen != gen
	if err == nil && !closed {
		c.cur = s
	}
	c.mu.Unlock()
	if closed {
		if err == nil {
			_ = s.close(c.opts.closeGrace())
		}
		s, err = nil, c.transportError(nil, "connect", "", errors.New("the client was closed while connecting"))
	}
	d.s, d.err = s, err
	close(d.done)
}

// doneRequest ends a request of s; the last request of a retired session
// closes it.
func (s *session) doneRequest() {
	if s.inflight.Add(-1) == 0 && s.retired.Load() {
		go s.close(s.grace)
	}
}

// retire makes the next request connect anew, and lets the requests in
// flight on the current session finish before it is closed.
func (c *Client) retire() {
	c.mu.Lock()
	s := c.cur
	c.cur = nil
	if s != nil {
		s.retired.Store(true)
		s.grace = c.opts.closeGrace()
		c.retiring = append(c.retiring, s)
	}
	c.mu.Unlock()
	if s != nil && s.inflight.Load() == 0 {
		go s.close(s.grace)
	}
}

// drop forgets s, a lost connection, if it is current, and closes it.
func (c *Client) drop(s *session) {
	c.mu.Lock()
	if c.cur == s {
		c.cur = nil
		c.lost = true
	}
	c.mu.Unlock()
	_ = s.close(c.opts.closeGrace())
}

// dialState follows one connect attempt through the handshake, so that a
// timeout can say which step hung.
type dialState struct {
	step     atomic.Value                    // string: the request awaiting an answer
	deadline *connectDeadline                // the connect timeout, paused while a user signs in
	probe    atomic.Pointer[connectDeadline] // the server/discover probe's, likewise
	authErr  atomic.Pointer[error]           // a failed sign-in, not to be asked again
	refused  atomic.Pointer[error]           // server/discover refused authorization: no fallback
	session  *session                        // the attempt's session (its stdio connection)
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
// go-sdk (which passes only the context on), to handshakeMiddleware (the
// OAuth handler gets it through oauthflow.WithAttempt). Only values that must cross go-sdk ride on the
// context; what this package's own code passes to itself is a parameter.
type dialKey struct{}

// handshakeMiddleware bounds the server/discover probe and records the
// handshake step in progress. A probe the server refused authorization
// (HTTP 401 or 403) ends the connect: the initialize handshake go-sdk
// falls back to is not sent (see connect_auth.go).
func (c *Client) handshakeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
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
		probe := newConnectDeadline(c.opts.probeTimeout(), func() { cancel(errProbeTimeout) })
		defer probe.stop()
		st.probe.Store(probe)
		defer st.probe.Store(nil)
		pctx, rec := wire.TrackRequest(pctx)
		res, err := next(pctx, method, req)
		rec.Done()
		if refused := authRefusal(rec, err); refused != nil && ctx.Err() == nil {
			c.log.Info("server refused authorization for server/discover; not falling back to older protocols", "status", rec.Status())
			st.refused.Store(&refused)
			return nil, refused
		}
		if err != nil && pctx.Err() != nil && ctx.Err() == nil {
			c.log.Info("server did not answer server/discover; using the initialize handshake", "after", c.opts.probeTimeout())
			// A process or an in-process server is one session: start a
			// new one. (Over HTTP each request stands alone.)
			st.late.Store(c.ep.kind == kindStdio || c.ep.kind == kindInProcess)
		}
		return res, err
	}
}

// dial establishes a new session.
func (c *Client) dial(ctx context.Context) (*session, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := newConnectDeadline(c.opts.connectTimeout(), func() { cancel(errConnectTimeout) })
	defer deadline.stop()
	start := time.Now()

	s, err := c.dialOnce(ctx, deadline, c.ep, c.pinned())
	first := s
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(err, errProbeUnanswered):
		// The server may still act on the probe: a new process (or
		// in-process session) speaks only the initialize handshake.
		s, err = c.dialOnce(ctx, deadline, c.ep, handshakeVersion)
	case err != nil && c.ep.kind == kindStdio && ctx.Err() == nil && s.exitedAlone:
		// Some handshake-era servers exit when they see server/discover.
		// Start the server again and speak only the initialize handshake.
		c.log.Info("server exited during the protocol probe; restarting it with the initialize handshake", "cause", err)
		s, err = c.dialOnce(ctx, deadline, c.ep, handshakeVersion)
	case err != nil && c.ep.kind == kindStreamable && c.ep.fallbackSSE && s.legacyHTTP.Load() && ctx.Err() == nil:
		c.log.Info("server answered as a legacy SSE server; using the SSE transport")
		sse := *c.ep
		sse.kind = kindSSE
		s, err = c.dialOnce(ctx, deadline, &sse, c.pinned())
	}
	if err != nil {
		return nil, c.connectError(ctx, s, c.endpointHint(first, err))
	}
	s.info.ConnectedAt = start
	s.info.ConnectTime = time.Since(start)
	s.life, s.kill = context.WithCancel(context.Background())
	go func() {
		s.err = s.cs.Wait()
		close(s.done)
	}()
	return s, nil
}

// dialOnce makes one connect attempt. On failure it still returns the
// attempt's session value, for diagnostics.
func (c *Client) dialOnce(ctx context.Context, deadline *connectDeadline, ep *endpoint, pinVersion string) (*session, error) {
	s := &session{done: make(chan struct{})}
	st := &dialState{deadline: deadline, session: s}
	st.step.Store("connect")
	s.state = st
	ctx = context.WithValue(ctx, dialKey{}, st)
	ctx = oauthflow.WithAttempt(ctx, st)

	t, cleanup, err := c.transport(ctx, ep, s)
	if err != nil {
		return s, err
	}
	var opts *mcp.ClientSessionOptions
	if pinVersion != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: pinVersion}
	}
	cs, err := c.sdk.Connect(ctx, t, opts)
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
	res := cs.InitializeResult()
	s.info = ServerInfo{
		Name:            c.name,
		Transport:       string(ep.kind),
		ProtocolVersion: res.ProtocolVersion,
		Era:             eraOf(res.ProtocolVersion),
		Implementation:  res.ServerInfo,
		Capabilities:    res.Capabilities,
		Instructions:    res.Instructions,
	}
	return s, nil
}

// transport builds the mcp.Transport for one connect attempt.
func (c *Client) transport(ctx context.Context, ep *endpoint, s *session) (mcp.Transport, func(), error) {
	switch ep.kind {
	case kindStdio:
		// The stdio connection reports to the observer itself; the
		// wrapper only hands calls their results as sent.
		return &wire.ObservedTransport{Inner: c.stdioTransport(ep.command, s)}, nil, nil
	case kindInProcess:
		ct, st := mcp.NewInMemoryTransports()
		ss, err := ep.server.Connect(ctx, st, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("starting the in-process server: %w", err)
		}
		return &wire.ObservedTransport{Inner: ct, Observer: c.obs}, func() { _ = ss.Close() }, nil
	case kindStreamable:
		hc := c.httpClient(true, s)
		s.fast.http = &fastHTTP{client: hc, url: ep.url, oauth: c.oauth() != nil, limit: c.opts.maxMessageBytes()}
		return &mcp.StreamableClientTransport{
			Endpoint:     ep.url,
			HTTPClient:   hc,
			OAuthHandler: c.oauth(),
			MaxEventSize: sdkMaxEventSize(c.opts.maxMessageBytes()),
		}, nil, nil
	case kindSSE:
		inner := &mcp.SSEClientTransport{Endpoint: ep.url, HTTPClient: c.httpClient(false, s),
			MaxEventSize: sdkMaxEventSize(c.opts.maxMessageBytes())}
		return &wire.ObservedTransport{Inner: &detachedTransport{inner: inner}, Observer: c.obs}, nil, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q", ep.kind)
}

// httpClient returns the HTTP client for one connection: the caller's
// client with headers, auth and the tap added around its transport.
func (c *Client) httpClient(observe bool, s *session) *http.Client {
	hc := &http.Client{}
	if c.opts.HTTPClient != nil {
		*hc = *c.opts.HTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = c.ownTransport()
	}
	tap := &wire.Tap{Base: handoffTransport{next: &firstAnswer{next: base, s: s}}, Observer: c.obs, Observe: observe, MaxMessageBytes: c.opts.maxMessageBytes()}
	tap.OnOversized = func(size int64, failedCall bool) {
		if failedCall {
			c.log.Warn("a response was over the message size limit; its call failed", "bytes", size, "limit", c.opts.maxMessageBytes())
		} else {
			c.log.Warn("dropped a message over the message size limit", "bytes", size, "limit", c.opts.maxMessageBytes())
		}
	}
	tap.OnStatus = func(method string, status int) {
		// A legacy SSE server answers the first POST of the streamable
		// transport with 404, 405 or 400.
		// (A 401 or 403 is the server asking for authorization first.)
		if method == http.MethodPost && status != 401 && status != 403 && !s.sawPOST.Swap(true) && (status == 400 || status == 404 || status == 405) {
			s.legacyHTTP.Store(true)
		}
	}
	var rt http.RoundTripper = tap
	if c.oauthFlow != nil && c.oauthFlow.dpop != nil {
		// Below go-sdk's and oauthflow's "Bearer": a bound token goes as DPoP.
		rt = c.oauthFlow.dpop.ResourceTransport(rt)
	}
	if h := c.oauth(); h != nil && !observe {
		// go-sdk's SSE client has no OAuth: do it here. (Its streamable
		// client does it itself, with the same handler.)
		rt = oauthflow.NewTransport(h, rt)
	}
	if c.opts.Auth != nil {
		rt = c.opts.Auth.wrap(rt)
	}
	// Inside the static headers, so a CallIdentity's win; outside Auth,
	// which has the last word on credentials.
	rt = identityTransport{next: rt}
	if len(c.opts.Headers) > 0 {
		rt = headerTransport{next: rt, set: c.opts.Headers}
	}
	strip := []string{"Authorization", "Cookie"}
	for k := range c.opts.Headers {
		strip = append(strip, k)
	}
	if u, err := url.Parse(c.ep.url); err == nil {
		rt = originGate{origin: originOf(u), authed: rt, plain: tap, strip: strip}
	}
	hc.Transport = rt
	return hc
}

// sdkMaxEventSize is the cap on one server-sent event given to go-sdk,
// which fails the whole connection over it: the Tap replaces an event over
// the limit first, so go-sdk's cap is only a backstop above it.
func sdkMaxEventSize(limit int) int {
	return limit + 64<<10
}

// ownTransport returns the HTTP transport the client uses when the caller
// gave none. It is the client's own, so Close can release its connections.
func (c *Client) ownTransport() *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.httpTransport == nil {
		c.httpTransport = http.DefaultTransport.(*http.Transport).Clone()
		// One server, many calls in flight: keep their connections (the
		// default keeps 2 per host, so every burst of parallel calls dialled
		// anew; TestHTTPConnectionsReusedConcurrent).
		c.httpTransport.MaxIdleConnsPerHost = maxIdleConnsPerServer
	}
	return c.httpTransport
}

// maxIdleConnsPerServer is how many idle keep-alive connections the
// client's own HTTP transport keeps to its server.
const maxIdleConnsPerServer = 64

// detachedTransport connects its inner transport with a context that lives
// as long as the connection: go-sdk's SSE client ties its event stream to
// the context given to Connect, which for us has a deadline.
type detachedTransport struct{ inner mcp.Transport }

func (t *detachedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended while connecting.
		if conn != nil {
			_ = conn.Close()
		}
		cancel()
		return nil, context.Cause(ctx)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelingConn{Connection: conn, cancel: cancel}, nil
}

type cancelingConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelingConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
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
func (c *Client) connectError(ctx context.Context, s *session, err error) error {
	op := "connect"
	if s != nil && s.state != nil {
		if step, _ := s.state.step.Load().(string); step != "" {
			op = step
		}
	}
	if errors.Is(context.Cause(ctx), errConnectTimeout) {
		err = fmt.Errorf("no answer to %s within %v (ClientOptions.ConnectTimeout; the server is running but did not answer: is it an MCP server on this transport?): %w",
			op, c.opts.connectTimeout(), context.DeadlineExceeded)
	}
	return c.transportError(s, op, "", err)
}

// transportError wraps err with the server's name and, for a stdio server,
// the last lines of its stderr and any stray stdout lines.
func (c *Client) transportError(s *session, op, tool string, err error) error {
	var te *TransportError
	if errors.As(err, &te) {
		return err
	}
	te = &TransportError{Server: c.name, Tool: tool, Op: op, Err: err}
	if s != nil && s.stdio != nil {
		te.Stderr = s.stdio.Stderr()
		stray := s.stdio.StrayLines()
		var se *StdoutError
		if len(stray) > 0 && !errors.As(err, &se) {
			te.Err = errors.Join(err, &StdoutError{Lines: stray})
		}
	}
	return te
}
