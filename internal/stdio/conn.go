package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	proc     *process
	r        *bufio.Reader // used only by Read, which go-sdk calls from one goroutine
	max      int
	obs      Observer // nil: none
	logStray func(line string)
	grace    time.Duration

	writeMu sync.Mutex
	backlog *backlog
	held    jsonrpc.Message // a result passed up after its barrier; Read's goroutine only

	closeOnce   sync.Once
	exitedFirst bool // set by closeOnce

	mu      sync.Mutex
	stray   []string // last non-JSON stdout lines
	pending []jsonrpc.Message
	readErr error
}

// SessionID returns "": a process connection has no session id.
func (c *Conn) SessionID() string { return "" }

// Read returns the next JSON-RPC message, skipping lines that are not JSON.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if m := c.held; m != nil {
		c.held = nil
		c.backlog.awaitBarrier(ctx)
		return m, nil
	}
	for {
		if m := c.popPending(); m != nil {
			return m, nil
		}
		line, owned, err := c.readLine()
		if err != nil {
			return nil, c.failRead(err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !json.Valid(line) {
			c.noteStray(line)
			continue
		}
		msg, err := decodeMessage(line, owned)
		if err != nil {
			c.noteStray(line)
			continue
		}
		if c.obs != nil {
			c.obs.Received(msg, line)
		}
		c.backlog.passUp(ctx, msg)
		if barrier := c.backlog.barrierFor(msg); barrier != nil {
			c.held = msg
			return barrier, nil
		}
		return msg, nil
	}
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
	s := string(line)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	c.mu.Lock()
	if len(c.stray) == 5 {
		c.stray = c.stray[1:]
	}
	c.stray = append(c.stray, s)
	c.mu.Unlock()
	if c.logStray != nil {
		c.logStray(s)
	}
}

// StrayLines returns the last lines (up to five, each cut to 200 bytes)
// the server wrote to stdout that were not JSON-RPC messages.
func (c *Conn) StrayLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stray...)
}

// failRead turns the end of stdout into an error that says how the process
// ended, with what it printed.
func (c *Conn) failRead(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
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

// Write sends one message as a line of JSON. A message that could not be
// written fails with a *WriteError.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if c.obs != nil {
		c.obs.Sent(msg, data)
	}
	c.backlog.sent(msg)
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.proc.stdin.Write(data); err != nil {
		return &WriteError{Err: fmt.Errorf("writing to the server's stdin: %w", err)}
	}
	return nil
}

// Close ends the process and its whole process group: it closes stdin,
// waits StopGrace, sends SIGTERM, waits StopGrace again, then kills the
// group. It waits for the process to be reaped and may be called more than
// once.
func (c *Conn) Close() error {
	c.closeOnce.Do(c.noteExited)
	c.proc.close(c.grace)
	return nil
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
// and what it wrote to stdout that was not JSON (a *StrayOutputError).
func (c *Conn) ReadError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
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

// Barrier reports whether token, the progress token of a
// notifications/progress the client is about to handle, is a barrier of
// this connection (Transport.HoldResults), and notes it reached. The
// client's receiving middleware must call it for every progress
// notification, and must not hand a barrier on to the client's handlers.
func (c *Conn) Barrier(token any) bool {
	return c.backlog.barrier(token)
}
