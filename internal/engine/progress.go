package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressLinger is how long a call's progress token stays routed after
// the call ends, for notifications that arrive after the result.
const progressLinger = time.Second

// A Router hands each progress notification to the call whose token it
// carries (go-sdk has one handler for all of them), and to a handler for
// every notification.
type Router struct {
	all func(context.Context, *mcp.ProgressNotificationClientRequest)
	seq atomic.Uint64

	mu    sync.Mutex
	calls map[string]route
}

// route is where a call's progress goes: its own handler, and the
// context the handler for all sees it with (the call's identity).
type route struct {
	fn    func(*mcp.ProgressNotificationParams)
	label func(context.Context) context.Context
}

// NewRouter returns a Router that also gives every notification to all,
// if it is not nil.
func NewRouter(all func(context.Context, *mcp.ProgressNotificationClientRequest)) *Router {
	return &Router{all: all, calls: make(map[string]route)}
}

// Listening reports whether a notification without a call's own handler
// has a handler (the one for all).
func (r *Router) Listening() bool { return r.all != nil }

// Token registers fn for a new progress token, which the caller must
// release when its call ends; the token stays routed a second longer.
// label, if set, gives the handler for all the context it sees the
// call's notifications with: the connection's context with what belongs
// to the call (its identity), not to whoever opened the connection.
func (r *Router) Token(fn func(*mcp.ProgressNotificationParams), label func(context.Context) context.Context) (token string, release func()) {
	token = fmt.Sprintf("mcpadapter-%d", r.seq.Add(1))
	r.mu.Lock()
	r.calls[token] = route{fn: fn, label: label}
	r.mu.Unlock()
	return token, func() {
		time.AfterFunc(progressLinger, func() {
			r.mu.Lock()
			delete(r.calls, token)
			r.mu.Unlock()
		})
	}
}

// Route is go-sdk's ProgressNotificationHandler: it hands a notification
// to the call it belongs to, then to the handler for all.
func (r *Router) Route(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	if tok, ok := req.Params.ProgressToken.(string); ok {
		r.mu.Lock()
		rt := r.calls[tok]
		r.mu.Unlock()
		if rt.fn != nil {
			rt.fn(req.Params)
		}
		if rt.label != nil {
			ctx = rt.label(ctx)
		}
	}
	if r.all != nil {
		r.all(ctx, req)
	}
}
