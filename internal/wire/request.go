package wire

import (
	"context"
	"sync/atomic"
)

// RequestStatus is what a Tap learns about one request's own HTTP POST:
// whether the server answered this very request with, say, 404 (an
// expired session), which proves the server did not run it.
type RequestStatus struct {
	status atomic.Int32
}

// Status returns the HTTP status of the latest POST made for the request,
// or 0 if none was answered.
func (r *RequestStatus) Status() int {
	return int(r.status.Load())
}

type requestStatusKey struct{}

// TrackRequest returns a context carrying a new RequestStatus, which a Tap
// fills in for the POSTs made with that context. It rides on the context
// because go-sdk stands between the caller and the HTTP request and
// carries nothing else of the caller's down to it.
func TrackRequest(ctx context.Context) (context.Context, *RequestStatus) {
	rs := &RequestStatus{}
	return context.WithValue(ctx, requestStatusKey{}, rs), rs
}

// requestStatus returns the RequestStatus that ctx carries, or nil.
func requestStatus(ctx context.Context) *RequestStatus {
	rs, _ := ctx.Value(requestStatusKey{}).(*RequestStatus)
	return rs
}
