package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC error codes of the gateway's own errors (the servers' errors
// pass with their own codes).
const (
	// CodeServerUnavailable: the server that owns the item is down or
	// could not be reached; the message names it. Also sent when the task
	// store (TaskOptions.Store) fails a request about a task.
	CodeServerUnavailable = -32010
	// CodeTimeout: the server neither answered nor reported progress
	// within Options.CallTimeout, or a time limit of the server's own (a
	// config entry's "timeout", "maxTotalTimeout", a tool's "timeout")
	// ended the call; the message names it.
	CodeTimeout = -32011
	// CodeTooManyCalls: the client session has MaxCallsPerSession calls
	// in flight.
	CodeTooManyCalls = -32012
	// CodeShuttingDown: the gateway is shutting down.
	CodeShuttingDown = -32013
	// CodeTooManySessions: the gateway holds Options.MaxSessions client
	// sessions, or the request's principal MaxSessionsPerPrincipal, none
	// of them idle (one idle is ended to make room instead); the request
	// that would make one more (an initialize, or with shared sessions a
	// request of a session this replica holds no copy of) is refused.
	CodeTooManySessions = -32018
)

// unavailableError is a server that cannot be used now.
type unavailableError struct {
	server string
	err    error
}

func (e *unavailableError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("server %q is unavailable", e.server)
	}
	return fmt.Sprintf("server %q is unavailable: %v", e.server, firstLine(e.err.Error()))
}

func (e *unavailableError) Unwrap() error { return e.err }

// timeoutError is a call ended by a time limit: Options.CallTimeout
// (setting empty) or one of the server's own (limits.go), named by
// setting.
type timeoutError struct {
	server, tool string
	after        time.Duration
	setting      string
	// total: the limit bounds the call overall; absolute: it does not
	// restart on progress.
	total, absolute bool
}

func (e *timeoutError) Error() string {
	switch {
	case e.total:
		return fmt.Sprintf("tool %q of server %q ran longer than %s (the server's %s)", e.tool, e.server, e.after, e.setting)
	case e.absolute:
		return fmt.Sprintf("tool %q of server %q did not answer within %s (%s)", e.tool, e.server, e.after, e.setting)
	case e.setting != "":
		return fmt.Sprintf("tool %q of server %q neither answered nor reported progress within %s (%s)", e.tool, e.server, e.after, e.setting)
	}
	return fmt.Sprintf("tool %q of server %q neither answered nor reported progress within %s", e.tool, e.server, e.after)
}

func (e *timeoutError) rpc() error {
	return &jsonrpc.Error{Code: CodeTimeout, Message: e.Error()}
}

// isWireError reports whether err is a JSON-RPC error a server answered.
func isWireError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// rpcError returns err as the JSON-RPC error a client gets: a server's own
// error unchanged, the gateway's with a code of its own, anything else as
// an internal error whose message says what went wrong.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	var ue *unavailableError
	if errors.As(err, &ue) {
		return &jsonrpc.Error{Code: CodeServerUnavailable, Message: ue.Error()}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: firstLine(err.Error())}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// unknownTool is the error for a tool name the client may not call: it
// names the tools the client can call (the first 50), or the server that
// owned the tool when that server is down.
func (g *Gateway) unknownTool(ctx context.Context, name string) error {
	if server := g.cat.wasServerOf(name); server != "" {
		if u := g.upstream(server); u != nil {
			if up, _, err := u.status(); !up {
				return &jsonrpc.Error{Code: CodeServerUnavailable, Message: (&unavailableError{server: server, err: err}).Error() + fmt.Sprintf(" (tool %q is its)", name)}
			}
		}
	}
	known := g.visibleTools(ctx)
	msg := fmt.Sprintf("unknown tool %q", name)
	switch {
	case len(known) == 0:
		msg += "; the gateway has no tools now"
	case len(known) > 50:
		msg += fmt.Sprintf("; known tools (50 of %d): %s, ...", len(known), strings.Join(known[:50], ", "))
	default:
		msg += "; known tools: " + strings.Join(known, ", ")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}
