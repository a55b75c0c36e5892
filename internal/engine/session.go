package engine

import (
	"context"
	"errors"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/streamable"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Session is one established connection: go-sdk's session, and what the
// engine keeps beside it.
type Session struct {
	e        *Engine
	slot     *slot // the partition's connection it is
	cs       *mcp.ClientSession
	kind     Kind
	version  string      // the negotiated protocol version
	discover bool        // ... of the server/discover era
	stdio    *stdio.Conn // the process connection, for stdio targets
	done     chan struct{}
	err      error // why the session ended; valid after done is closed
	// life ends when the session is closed; calls in flight are cancelled.
	life context.Context
	kill context.CancelFunc
	// notices ends when closing the session stops waiting for its
	// requests: a cancellation notice of a call the close ended still
	// goes out within the close's grace.
	notices    context.Context
	endNotices context.CancelFunc
	// gone ends when the connection has ended (done is closed).
	gone     context.Context
	endGone  context.CancelFunc
	inflight atomic.Int64 // requests running in this session
	retired  atomic.Bool  // replaced; closes when its last request ends

	connectedAt time.Time
	connectTime time.Duration

	// Set while connecting.
	state       *dialState
	exitedAlone bool        // the stdio server exited during the handshake
	sawPOST     atomic.Bool // the first POST has been answered
	legacyHTTP  atomic.Bool // ... with a status a legacy SSE server gives

	firstAnswer atomic.Pointer[httpAnswer] // the first HTTP response (endpointHint)
	fast        fastState                  // the fast path's (call.go)
	// order keeps a call's answer behind the notifications read before
	// it (internal/order): the transport passes up its markers, the
	// receiving middleware reaches them, CallTool waits for them.
	order *order.Marks

	closeOnce sync.Once
	closeErr  error
}

// SDK returns go-sdk's session, for the requests the engine does not
// make itself.
func (s *Session) SDK() *mcp.ClientSession { return s.cs }

// Observer returns the observer of the session's partition: the tool
// schemas as its principal was last listed them.
func (s *Session) Observer() *wire.Observer { return s.slot.obs }

// ID returns the session's id ("" when it has none).
func (s *Session) ID() string { return s.cs.ID() }

// ProtocolVersion returns the negotiated protocol version.
func (s *Session) ProtocolVersion() string { return s.version }

// Discover reports whether the session speaks the server/discover era
// (2026-07-28 and later).
func (s *Session) Discover() bool { return s.discover }

// Transport names the transport: "stdio", "streamable-http", "sse" or
// "in-process".
func (s *Session) Transport() string { return string(s.kind) }

// ConnectedAt is when the connection was made, and ConnectTime how long it
// took (process start and handshake included).
func (s *Session) ConnectedAt() time.Time     { return s.connectedAt }
func (s *Session) ConnectTime() time.Duration { return s.connectTime }

// Life returns a context that ends when the session is closed.
func (s *Session) Life() context.Context { return s.life }

// Notices returns a context that ends when closing the session stops
// waiting for its requests: after Life, within the close's grace.
func (s *Session) Notices() context.Context { return s.notices }

// Hold counts a request of the session that closing it waits for; release
// ends it (the last request of a retired session closes it).
func (s *Session) Hold() (release func()) {
	s.inflight.Add(1)
	return s.doneRequest
}

var _ streamable.Session = (*Session)(nil)

func (s *Session) ended() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// doneRequest ends a request of s; the last request of a retired session
// closes it.
func (s *Session) doneRequest() {
	if s.inflight.Add(-1) == 0 && s.retired.Load() {
		go s.close(s.e.cfg.CloseGrace)
	}
}

// close cancels the requests in flight, lets them return, waits for the
// server to be told of each (go-sdk's notices, awaitNotice; the fast
// path's), and closes the connection. It waits at most about two grace
// periods: a server that is slow to end its session (an HTTP DELETE that
// does not return) finishes closing in the background, bounded by go-sdk's
// own timeout. A stdio server is different: go-sdk closes the connection
// only once every request has finished, and an answer or notice being
// written to a server that does not read its stdin never finishes; so
// after one grace period the process is ended here (at once when a
// request or notice was still being written after the first), and close
// returns only when it and its process group are gone.
func (s *Session) close(grace time.Duration) error {
	s.closeOnce.Do(func() {
		s.kill()
		deadline := time.Now().Add(grace)
		for s.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		wait := grace
		if s.stdio != nil && s.inflight.Load() > 0 {
			// Still writing to a server that does not read: go-sdk's
			// close would wait for the write.
			wait = 0
		}
		s.endNotices()
		closed := make(chan error, 1)
		go func() { closed <- s.cs.Close() }()
		select {
		case s.closeErr = <-closed:
			<-s.done
			return
		case <-time.After(wait):
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

// errClosedBeforeSend fails a request whose session was retired or
// closed after the request took it and before the request started.
var errClosedBeforeSend = errors.New("the connection was closed before the request was sent")

// run calls fn with a context that also ends when the session is closed.
// A session retired or closed since the request took it runs nothing:
// its close, which no request held back when it was decided, would
// cancel the request (counted in flight first, so that a retirement
// after this check waits for it). rec, if set, is the request's wire
// record, carried by ctx: a request go-sdk sent and its context ended
// before its answer holds the session until go-sdk's notice of it is
// written (awaitNotice).
func (s *Session) run(ctx context.Context, rec *wire.RequestStatus, fn func(context.Context, *Session) error) error {
	s.inflight.Add(1)
	defer s.doneRequest()
	if s.retired.Load() || s.life.Err() != nil {
		// Nothing was sent, and the request goes on a new session.
		return errClosedBeforeSend
	}
	ctx, cancel := context.WithCancel(wire.WithObserver(ctx, s.slot.obs))
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	err := fn(ctx, s)
	if ctx.Err() != nil && isContextErr(err) && rec.NoticeDue() {
		s.awaitNotice(rec)
	}
	return err
}

// isContextErr reports whether err says a context ended, as go-sdk's
// error of a call whose context ended does.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// noticeWait bounds how long a request whose context ended holds its
// session for go-sdk's notifications/cancelled of it: go-sdk bounds its
// write of the notice by 5 s, and writes none when its connection is
// closing; the write's end (done or failed) releases it sooner.
const noticeWait = 6 * time.Second

// awaitNotice holds s until go-sdk's notifications/cancelled of rec, a
// request go-sdk sent whose context ended, has been written (or its write
// failed), the connection ended, closing s stopped waiting for its
// requests, or noticeWait passed: go-sdk sends the notice on a goroutine
// of its own after the call returned, best-effort, and closing the
// connection before it is written would leave the server running the
// request. Closing s waits for it within its grace.
func (s *Session) awaitNotice(rec *wire.RequestStatus) {
	release := s.Hold()
	var (
		mu    sync.Mutex
		ended bool
		stops []func() bool
	)
	end := func() {
		mu.Lock()
		if ended {
			mu.Unlock()
			return
		}
		ended = true
		mu.Unlock()
		for _, stop := range stops { // set before end can get past mu
			stop()
		}
		release()
	}
	mu.Lock()
	stops = []func() bool{
		time.AfterFunc(noticeWait, end).Stop,
		context.AfterFunc(s.notices, end),
		context.AfterFunc(s.gone, end),
	}
	mu.Unlock()
	rec.OnNoticed(end)
}
