package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A HandOff is the result of a tools/call the fast path made (RoundTrip)
// and hands over to go-sdk, so that go-sdk goes on from it instead of
// making the call again: an input_required result, from which go-sdk's
// multi-round-trip loop starts. The fast path makes go-sdk call the tool
// with a context carrying it (WithHandOff); the first tools/call go-sdk
// writes with that context is not written: its answer is the held result,
// under go-sdk's id. The server runs the tool once, as on go-sdk's path.
type HandOff struct {
	result json.RawMessage
	wake   func(buf []byte, id int64) []byte
	taken  atomic.Bool
}

// NewHandOff returns the hand-over of result. go-sdk's reading goroutine
// waits for a line from the server when the result is handed over; it is
// woken on this side of the pipe (wakeReader). Where that cannot be done,
// wake appends a request the server answers at once (a ping) with the id
// it is given, and the answer is that line.
func NewHandOff(result json.RawMessage, wake func(buf []byte, id int64) []byte) *HandOff {
	return &HandOff{result: result, wake: wake}
}

type handOffKey struct{}

// WithHandOff returns ctx carrying h, for Conn.Write.
func WithHandOff(ctx context.Context, h *HandOff) context.Context {
	return context.WithValue(ctx, handOffKey{}, h)
}

// handOver answers msg, go-sdk's tools/call, with the result held by the
// hand-over ctx carries, if msg is the first such call; it reports false
// for everything else, which Write writes.
func (c *Conn) handOver(ctx context.Context, msg jsonrpc.Message) bool {
	h, _ := ctx.Value(handOffKey{}).(*HandOff)
	if h == nil {
		return false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "tools/call" || !h.taken.CompareAndSwap(false, true) {
		return false
	}
	c.mu.Lock()
	c.pending = append(c.pending, &jsonrpc.Response{ID: req.ID, Result: h.result})
	c.mu.Unlock()
	// Read hands out pending messages before it reads the next line.
	if c.out != nil && c.out.wake() {
		return true
	}
	// The answer to wake is a line, and goes to this RoundTrip, not to
	// go-sdk. Whatever the server makes of it (an error is an answer too)
	// does not matter.
	_, _ = c.RoundTrip(ctx, "ping", h.wake)
	return true
}

// wakeReader is the server's stdout as Read reads it. Its wake ends a
// read that waits for the server (go-sdk's reading goroutine waits for a
// line while a handed-over answer is pending) without a word from the
// server, which may never answer a ping: the waiting read returns an
// empty line, which Read skips, and Read then hands out the pending
// answer. The empty line is returned only between two lines, never
// inside one; in the middle of a line the read goes on, as the rest of
// the line is on its way and wakes Read itself.
type wakeReader struct {
	f      *os.File
	atLine bool // the last byte returned ended a line (or none was)
}

// wake makes the waiting read, or the next one, return; false if the
// pipe has no deadlines.
func (w *wakeReader) wake() bool {
	return w.f.SetReadDeadline(time.Now()) == nil
}

// Read reads the pipe; only Read's goroutine calls it (through c.r).
func (w *wakeReader) Read(p []byte) (int, error) {
	for {
		n, err := w.f.Read(p)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			_ = w.f.SetReadDeadline(time.Time{})
			if n == 0 && w.atLine && len(p) > 0 {
				p[0] = '\n'
				return 1, nil
			}
			err = nil
			if n == 0 {
				continue
			}
		}
		if n > 0 {
			w.atLine = p[n-1] == '\n'
		}
		return n, err
	}
}
