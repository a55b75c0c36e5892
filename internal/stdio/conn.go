package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conn is the connection to one server process, an mcp.Connection. Besides
// reading and writing messages it says how the process went away: its
// stderr tail, the stray lines it wrote to stdout, the error that ended
// reading and whether it exited by itself.
type Conn struct {
	proc    *process
	stdin   *stdinWriter  // the first try of every write (writeLine)
	r       *bufio.Reader // used only by Read, which go-sdk calls from one goroutine
	out     *wakeReader   // what r reads: the server's stdout (handoff.go)
	max     int
	obs     Observer // nil: none
	skipped *skipLog
	grace   time.Duration

	writing  chan struct{} // holds one token: the right to write
	dead     chan struct{} // closed when the connection is ended: writers stop waiting
	deadOnce sync.Once
	aborting sync.WaitGroup // abort in progress (a cut-off write)
	backlog  *backlog
	held     heldRequests

	marks  *order.Marks    // nil: no markers (Transport.Marks)
	marked jsonrpc.Message // a response read, passed up after its marker; Read's goroutine only
	since  bool            // a request or notification was passed up since the last marker; Read's goroutine only

	direct direct       // requests written by RoundTrip
	notes  NoticeHolder // set by HoldNotices; nil: none

	closeOnce   sync.Once
	exitedFirst bool // set by closeOnce

	mu      sync.Mutex
	stray   []string // last non-JSON stdout lines
	pending []jsonrpc.Message
	readErr error
	broken  error // why the connection ended itself (*CutOffError, *OverloadError)
	closing bool  // Close was called: no abort starts any more
}

// newConn returns the connection to p.
func newConn(p *process, max int, grace time.Duration, obs Observer, onSkip func(Skip)) *Conn {
	out := &wakeReader{f: p.stdout, atLine: true}
	return &Conn{
		proc:    p,
		stdin:   newStdinWriter(p.stdin),
		r:       bufio.NewReaderSize(out, 64*1024),
		out:     out,
		max:     max,
		obs:     obs,
		skipped: newSkipLog(onSkip),
		grace:   grace,
		writing: make(chan struct{}, 1),
		dead:    make(chan struct{}),
		backlog: newBacklog(),
	}
}

// SessionID returns "": a process connection has no session id.
func (c *Conn) SessionID() string { return "" }

// Read returns the next JSON-RPC message, skipping lines that are not JSON.
// A response that cannot be decoded fails its call at once (a JSON-RPC
// error that says why) when its id can be read; a server that makes the
// client hold more than MaxHeldRequests requests ends the connection.
// With Transport.Marks, a response read after a request or notification
// passed up since the last marker comes after a marker of its own.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if m := c.popPending(); m != nil {
			if c.direct.deliver(m) {
				continue
			}
			return m, nil
		}
		msg := c.marked
		c.marked = nil
		if msg == nil {
			var err error
			if msg, err = c.readMessage(); err != nil {
				return nil, c.failRead(err)
			}
			if msg == nil {
				continue // skipped
			}
			if marker := c.mark(msg); marker != nil {
				c.backlog.passUp(ctx, marker) // the middleware reports it handled
				return marker, nil
			}
		}
		if c.direct.deliver(msg) {
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && c.held.add(req.ID) > MaxHeldRequests {
			c.abort(&OverloadError{Limit: MaxHeldRequests})
			return nil, c.failRead(io.EOF)
		}
		c.backlog.passUp(ctx, msg)
		return msg, nil
	}
}

// readMessage reads the next line and returns its message, or nil for a
// line it skipped (blank, not JSON, undecodable).
func (c *Conn) readMessage() (jsonrpc.Message, error) {
	line, owned, err := c.readLine()
	if err != nil {
		return nil, err
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if line[0] != '{' {
		c.noteStray(line)
		return nil, nil
	}
	msg, err := decodeLine(line, owned)
	if err != nil {
		c.undecodable(line, err)
		return nil, nil
	}
	if c.obs != nil {
		c.obs.Received(msg, line)
	}
	return msg, nil
}

// mark returns the marker to pass up before msg, a message just read,
// keeping msg for the next Read, when msg is a response read after a
// request or notification passed up since the last marker, or a request
// or notification when a request of the client's asked for one
// (order.Marks.Boundary); else nil.
func (c *Conn) mark(msg jsonrpc.Message) jsonrpc.Message {
	if c.marks == nil {
		return nil
	}
	switch msg.(type) {
	case *jsonrpc.Request:
		c.since = true
		if marker := c.marks.Boundary(); marker != nil {
			// A request of the client's was sent since the message
			// before msg was read: msg comes after a marker of its own.
			c.marked = msg
			return marker
		}
	case *jsonrpc.Response:
		if c.since {
			c.since = false
			c.marked = msg
			return c.marks.Issue()
		}
	}
	return nil
}

func (c *Conn) popPending() jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	m := c.pending[0]
	c.pending = c.pending[1:]
	return m
}

// noteStray keeps line (cut to 200 bytes) among the last five stray lines
// and reports it.
func (c *Conn) noteStray(line []byte) {
	s := cut(line)
	c.mu.Lock()
	if len(c.stray) == 5 {
		c.stray = c.stray[1:]
	}
	c.stray = append(c.stray, s)
	c.mu.Unlock()
	c.skipped.add(Skip{Line: s})
}

// cut returns line as a string of at most 200 bytes.
func cut(line []byte) string {
	if len(line) > 200 {
		return string(line[:200]) + "…"
	}
	return string(line)
}

// StrayLines returns the last lines (up to five, each cut to 200 bytes)
// the server wrote to stdout that were not JSON-RPC messages.
func (c *Conn) StrayLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stray...)
}

// failRead turns the end of stdout into an error that says how the process
// ended, with what it printed, or why the connection ended itself.
func (c *Conn) failRead(err error) error {
	defer c.skipped.flush()
	rerr := c.readFailure(err)
	c.direct.fail(rerr)
	return rerr
}

// readFailure returns (and records, once) the error that ends reading.
func (c *Conn) readFailure(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return c.readErr
	}
	if c.broken != nil {
		// abort is stopping the process: let it finish, so that the
		// process is gone when the caller hears of it.
		c.proc.close(min(c.grace, closedStdoutGrace))
		c.readErr = fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, c.broken)
		return c.readErr
	}
	var cause error
	if err == io.EOF || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		e := c.proc.exitError(2 * time.Second)
		if e.StillRunning {
			// Nothing can be read from it any more: stop it now (the
			// error says it was killed), which also drains its stderr
			// into the tail the error shows. It did not exit by itself.
			c.closeOnce.Do(c.noteExited)
			c.proc.close(min(c.grace, closedStdoutGrace))
		}
		cause = e
	} else {
		cause = fmt.Errorf("reading the server's stdout: %w", err)
	}
	if len(c.stray) > 0 {
		cause = errors.Join(cause, &StrayOutputError{Lines: append([]string(nil), c.stray...)})
	}
	c.readErr = fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, cause)
	return c.readErr
}

// Close ends the process and its whole process group, whatever its pipes
// do: it closes stdin (which also ends a write blocked on a full pipe),
// waits StopGrace, sends SIGTERM, waits StopGrace again, then kills the
// group. It returns when the process has been reaped and no process of the
// group is left running, and may be called more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(c.noteExited)
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.end()
	c.direct.fail(fmt.Errorf("%w: the connection is closed", mcp.ErrConnectionClosed))
	c.proc.close(c.grace)
	c.aborting.Wait()
	c.direct.notes.Wait()
	c.skipped.flush()
	return nil
}

// end makes writers waiting for their turn give up.
func (c *Conn) end() { c.deadOnce.Do(func() { close(c.dead) }) }

// abortLater ends the connection for cause: at once, writes fail, so that
// nothing follows a line cut off in the middle (the caller still has the
// turn to write), even while Close is under way and has not yet made
// writers give up. Unless Close was called (then the connection is ending
// anyway), writes fail with cause and the process is stopped by
// abort(cause) on a goroutine of its own, which Close waits for.
func (c *Conn) abortLater(cause error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		c.end()
		return
	}
	if c.broken == nil {
		c.broken = cause
	}
	c.end()
	c.aborting.Add(1)
	go func() {
		defer c.aborting.Done()
		c.abort(cause)
	}()
}

// abort ends the connection from the inside, for cause: writers give up,
// and the process is stopped without the usual grace (stdin closed, then
// SIGTERM, then SIGKILL, closedStdoutGrace apart). Read then fails with
// cause.
func (c *Conn) abort(cause error) {
	c.mu.Lock()
	if c.broken == nil {
		c.broken = cause
	}
	c.mu.Unlock()
	c.end()
	c.direct.fail(fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, cause))
	c.closeOnce.Do(c.noteExited)
	c.proc.close(min(c.grace, closedStdoutGrace))
}

// noteExited records, once, whether the process ended before the client
// ended it.
func (c *Conn) noteExited() { c.exitedFirst = c.proc.exitedNow() }

// ExitedAlone reports whether the process had ended before anyone closed
// the connection (Close, or the end of stdout with the process still
// running). The answer is fixed by the first call to ExitedAlone or Close.
func (c *Conn) ExitedAlone() bool {
	c.closeOnce.Do(c.noteExited)
	return c.exitedFirst
}

// ReadError returns the error that ended reading, if any. It wraps
// mcp.ErrConnectionClosed and says how the process ended (an *ExitError)
// and what it wrote to stdout that was not JSON (a *StrayOutputError), or
// why the connection ended itself (a *CutOffError or an *OverloadError,
// reported as soon as it happens, before reading has stopped).
func (c *Conn) ReadError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr == nil && c.broken != nil {
		return fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, c.broken)
	}
	return c.readErr
}

// Stderr returns the last lines the server wrote to stderr, oldest first.
func (c *Conn) Stderr() []string {
	return c.proc.tail.snapshot()
}

// MessageHandled tells the connection that a notification from the server
// has been handled (its handler returned) or that a request from it reached
// its handler. Read holds back a server that floods the client: it stops
// reading while too many messages wait for their handlers, but never for
// long, so a client that does not report handled messages is slowed down,
// not stalled.
func (c *Conn) MessageHandled() {
	c.backlog.handledOne()
}
