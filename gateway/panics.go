package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the caller gives the gateway runs inside its handling of requests
// and of servers' messages: Options.Policy, AuditPayload, ToolFilter,
// OnEvent, Telemetry, and the stores (Limits, Sessions, Tasks). Much of
// it runs on goroutines net/http does not recover: go-sdk's jsonrpc2
// goroutines (a request on go-sdk's handler, a server's notification), a
// parked call's, a task's, a server's connection's. A panic there would
// end the process; the gateway recovers it where those goroutines enter
// its code, logs it at Error with its stack, and goes on: a request gets
// errInternal (its message says nothing of the panic, which may hold
// what the caller's code held), a notification is dropped, an event or a
// tool filter is taken as not given, and a background loop's step is
// taken as failed (recovered).

// errInternal answers a request whose handling panicked.
var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the gateway failed while handling the request; it is logged"}

// logPanic logs p, a panic recovered where, with the stack; p's text is
// redacted as an error's is (wire.RedactURLSecrets): the caller's code
// may have panicked with what it held, a URL with a token, a header.
func (g *Gateway) logPanic(p any, where string) { logPanic(g.log, p, where) }

// logPanic logs p, recovered where, on log: Gateway.logPanic for a part
// of the gateway with a logger of its own.
func logPanic(log *slog.Logger, p any, where string) {
	log.Error("the gateway recovered from a panic", "where", where, "panic", wire.RedactURLSecrets(fmt.Sprint(p)), "stack", string(debug.Stack()))
}

// recoverRequests makes a panic while next handles a request an
// internal error answering it.
func (g *Gateway) recoverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				g.logPanic(p, "handling a client's "+method)
				res, err = nil, errInternal
			}
		}()
		return next(ctx, method, req)
	}
}

// recoverCall is call, a tool call run on a goroutine of its own, with a
// panic made an internal error.
func (g *Gateway) recoverCall(call func(context.Context) (*mcp.CallToolResult, error)) func(context.Context) (*mcp.CallToolResult, error) {
	return func(ctx context.Context) (res *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				g.logPanic(p, "running a tool call")
				res, err = nil, errInternal
			}
		}()
		return call(ctx)
	}
}

// safeToolFilter returns Options.ToolFilter with a panic taken as the
// tool left out; nil when none is set.
func (g *Gateway) safeToolFilter() func(string, *mcpadapter.Tool) bool {
	f := g.opts.ToolFilter
	if f == nil {
		return nil
	}
	return func(server string, tool *mcpadapter.Tool) (keep bool) {
		defer func() {
			if p := recover(); p != nil {
				g.logPanic(p, "Options.ToolFilter")
				keep = false
			}
		}()
		return f(server, tool)
	}
}

// recovered runs step, a step of the gateway's own goroutines (the poll
// of shared sessions, the subscription to their notices, the task
// store's beats, a session's end told to Options.Telemetry) that calls
// what the caller gives: a panic in it is logged, and the goroutine goes
// on as after a failure of that step.
func (g *Gateway) recovered(where string, step func()) {
	defer func() {
		if p := recover(); p != nil {
			g.logPanic(p, where)
		}
	}()
	step()
}

// onEvent tells Options.OnEvent of e; a panic in it is logged.
func (g *Gateway) onEvent(e Event) {
	defer func() {
		if p := recover(); p != nil {
			g.logPanic(p, "Options.OnEvent")
		}
	}()
	g.opts.OnEvent(e)
}
