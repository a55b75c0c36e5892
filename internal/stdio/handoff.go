package stdio

import (
	"context"
	"encoding/json"
	"sync/atomic"

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

// NewHandOff returns the hand-over of result. wake appends a request the
// server answers at once (a ping) with the id it is given: go-sdk's
// reading goroutine waits for a line from the server, and the answer to
// wake is that line.
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
	// Read hands out pending messages before it reads the next line; the
	// answer to wake is a line, and goes to this RoundTrip, not to go-sdk.
	// Whatever the server makes of it (an error is an answer too) does not
	// matter.
	_, _ = c.RoundTrip(ctx, "ping", h.wake)
	return true
}
