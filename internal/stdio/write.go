package stdio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Write sends one message as a line of JSON. It waits for its turn and
// writes within ctx: a server that does not read its stdin fills the pipe,
// and a write then returns when ctx ends, wrapping ctx.Err() and saying
// why ctx ended (context.Cause, such as the call's Timeout). If that cut
// a line in the middle, the server has half a message: the connection
// ends and the process is stopped, and the error is a *CutOffError (which
// wraps ctx's). A message that could
// not be written otherwise fails with a *WriteError.
//
// The answers go-sdk writes to the server's requests have no deadline;
// they are held (MaxHeldRequests) until written, and Close ends them.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.handOver(ctx, msg) {
		return nil // answered with the fast path's result (handoff.go)
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		defer c.held.answered(resp.ID)
	}
	if c.obs != nil {
		c.obs.Sent(msg, data)
	}
	return c.writeData(ctx, append(data, '\n'))
}

// writeData writes data, one message and its newline, as Write does.
func (c *Conn) writeData(ctx context.Context, data []byte) error {
	select {
	case c.writing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting to write to the server's stdin (it is not reading it): %w", ctxError(ctx))
	case <-c.dead:
		return c.deadError()
	}
	defer func() { <-c.writing }()
	select {
	case <-c.dead:
		return c.deadError()
	default:
	}
	n, err := c.writeLine(ctx, data)
	switch {
	case err == nil:
		return nil
	case n > 0:
		cause := err
		if ctx.Err() != nil {
			cause = ctxError(ctx)
		}
		co := &CutOffError{Written: n, Size: len(data), Err: cause}
		c.abortLater(co)
		if ctx.Err() != nil {
			return fmt.Errorf("writing to the server's stdin: %w", co)
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("writing to the server's stdin (it is not reading it; %d of %d bytes written): %w", n, len(data), ctxError(ctx))
	}
	return &WriteError{Err: fmt.Errorf("writing to the server's stdin: %w", err)}
}

// ctxError returns why ctx ended, nil if it has not: its cause
// (context.Cause: a call's Timeout says so), matching ctx.Err() under
// errors.Is as ctx.Err() itself does.
func ctxError(ctx context.Context) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	cause := context.Cause(ctx)
	switch {
	case cause == nil || cause == err:
		return err
	case errors.Is(cause, err):
		return cause
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// writeLine writes data to the server's stdin, stopping when ctx ends. It
// returns how many bytes were written.
//
// A line usually fits in the pipe at once: a first try that cannot wait
// writes it without setting a deadline or watching ctx (which cost more
// than the write); whatever it leaves is written the waiting way.
func (c *Conn) writeLine(ctx context.Context, data []byte) (int, error) {
	n := 0
	if ctx.Err() == nil {
		if n = c.stdin.try(data); n == len(data) {
			return n, nil
		}
	}
	m, err := c.writeWaiting(ctx, data[n:])
	return n + m, err
}

// writeWaiting writes data to the server's stdin, waiting while the pipe
// is full, until ctx ends. It returns how many bytes were written.
func (c *Conn) writeWaiting(ctx context.Context, data []byte) (int, error) {
	f := c.proc.stdin
	// The try of the next write needs no deadline: none is left behind.
	defer func() { _ = f.SetWriteDeadline(time.Time{}) }()
	deadline, _ := ctx.Deadline() // the zero time: none
	_ = f.SetWriteDeadline(deadline)
	if ctx.Done() == nil {
		return f.Write(data)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		_ = f.SetWriteDeadline(time.Unix(1, 0)) // in the past: the write returns now
	})
	n, err := f.Write(data)
	if !stop() {
		<-fired // its deadline must not reach the next writer
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The poller may see ctx's deadline a moment before ctx does: wait
		// for ctx, so that the caller (and go-sdk, which otherwise takes
		// the error for a broken pipe) sees a write that ran out of time.
		<-ctx.Done()
	}
	return n, err
}

// deadError is what a write gets once the connection has ended.
func (c *Conn) deadError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		return &WriteError{Err: fmt.Errorf("writing to the server's stdin: %w", c.broken)}
	}
	return &WriteError{Err: errors.New("writing to the server's stdin: the connection is closed")}
}
