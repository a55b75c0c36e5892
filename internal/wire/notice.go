package wire

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notice is what the wire layer learns of a request's cancellation: the
// id the request last went out with (whatever its method) and whether
// go-sdk's notifications/cancelled of it has been written. go-sdk sends
// the notice on a goroutine of its own, with a context that carries the
// request's values (and so its RequestStatus), after the call returned;
// closing a session must wait for it, or the connection may end first.
// It is guarded by RequestStatus.mu.
type notice struct {
	id      jsonrpc.ID // the request's id; invalid until it went out
	settled bool       // go-sdk's call of id returned with its context live: no notice of it comes
	done    bool       // the notice of id was written, or its write failed
	onDone  func()     // called once when done, if set (OnNoticed)
}

// NoticeDue reports whether go-sdk may send a notifications/cancelled of
// the request: it went out (was written, or its POST made) through a
// connection or Tap that records it, and go-sdk's call of it did not
// return with its context live (SettleMiddleware), as it does with the
// server's answer (a round answered with a question, say, whose asking
// the context's end cut short).
func (r *RequestStatus) NoticeDue() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.notice.id.IsValid() && !r.notice.settled
}

// SettleMiddleware is go-sdk sending middleware, added first (innermost):
// a request of go-sdk's that returns while its context is live records,
// for the RequestStatus that context carries, that go-sdk sends no
// notifications/cancelled of it (go-sdk sends one only when the context
// had ended as its call returned).
func SettleMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if ctx.Err() == nil && !strings.HasPrefix(method, "notifications/") {
			if rs := requestStatus(ctx); rs != nil {
				rs.mu.Lock()
				rs.notice.settled = true
				rs.mu.Unlock()
			}
		}
		return res, err
	}
}

// OnNoticed calls f once go-sdk's notifications/cancelled of the request
// (of the id it last went out with) has been written, or its write has
// failed: at once if that happened already. f is called at most once; a
// later call of OnNoticed replaces an f not yet called. f must not block.
func (r *RequestStatus) OnNoticed(f func()) {
	r.mu.Lock()
	if !r.notice.done {
		r.notice.onDone = f
		f = nil
	}
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

// wentOut records that the request goes out with id: a notice of an
// earlier id (a multi-round-trip call sends the request again) no longer
// counts.
func (r *RequestStatus) wentOut(id jsonrpc.ID) {
	r.mu.Lock()
	r.notice.id, r.notice.done, r.notice.settled = id, false, false
	r.mu.Unlock()
}

// noticed records that a notifications/cancelled of the request with the
// id whose JSON text is raw was written, or its write failed.
func (r *RequestStatus) noticed(raw []byte) {
	r.mu.Lock()
	var f func()
	if !r.notice.done && r.notice.id.IsValid() && SameID(raw, r.notice.id) {
		r.notice.done = true
		f, r.notice.onDone = r.notice.onDone, nil
	}
	r.mu.Unlock()
	if f != nil {
		f()
	}
}

// cancelledIDOf returns the JSON text of the requestId of the
// notifications/cancelled whose params are params, or nil.
func cancelledIDOf(params []byte) []byte {
	id, ok := Member(params, "requestId")
	if !ok {
		return nil
	}
	return id
}

// watchMessage records, for the RequestStatus ctx carries, a request
// written with ctx (its id) or go-sdk's notifications/cancelled of it;
// the returned function, called once the write returned, records the
// notice (nil for any other message).
func watchMessage(ctx context.Context, msg jsonrpc.Message) (written func()) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return nil
	}
	rs := requestStatus(ctx)
	if rs == nil {
		return nil
	}
	if req.IsCall() {
		rs.wentOut(req.ID)
		return nil
	}
	if req.Method != notificationCancelled {
		return nil
	}
	id := cancelledIDOf(req.Params)
	if id == nil {
		return nil
	}
	return func() { rs.noticed(id) }
}

// watchPOST is watchMessage for the JSON text data of a POST made with
// ctx (by go-sdk's HTTP transports, through a Tap).
func watchPOST(rs *RequestStatus, data []byte) (written func()) {
	method, rawID := callOf(data)
	switch {
	case method == nil: // a response
		return nil
	case rawID != nil:
		if id := parseID(rawID); id.IsValid() {
			rs.wentOut(id)
		}
		return nil
	case string(method) != `"`+notificationCancelled+`"`:
		return nil
	}
	params, ok := Member(data, "params")
	if !ok {
		return nil
	}
	id := cancelledIDOf(params)
	if id == nil {
		return nil
	}
	return func() { rs.noticed(id) }
}

// notificationCancelled is the method of a cancellation notice.
const notificationCancelled = "notifications/cancelled"
