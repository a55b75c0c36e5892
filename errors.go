package mcpadapter

import (
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
)

// TransportError reports that a request could not be completed because the
// connection to a server failed: it could not be established, it closed, the
// server process died, or the server did not answer in time. The model cannot
// act on such a failure, so tools return it as a Go error. Its fields:
// Server, the server's name (as in ServerInfo.Name); Tool, the tool being
// called, or "" when the failure is not a tool call; Op, the step that
// failed ("connect", "initialize", "server/discover", "tools/list",
// "tools/call", ...); Stderr, the last lines the server process wrote to
// stderr, when it is a local process; Err, the underlying cause.
type TransportError = engine.TransportError

// ProcessExitError reports that a stdio server process ended. It appears as
// the Err of a TransportError. Its fields: Command, the program that was
// run; ExitCode, the process's exit status, or -1 when it was ended by a
// signal or its status is unknown; Signal, the signal that ended it, if
// any; StillRunning, that the process closed its stdout but had not
// exited (it has been killed).
type ProcessExitError = stdio.ExitError

// StdoutError reports that a stdio server wrote something to stdout that is
// not a JSON-RPC message: usually a log line or a banner printed to stdout
// instead of stderr. Such lines are skipped and logged; this error explains
// a connection that failed after them. Lines are the offending lines (the
// last few), each cut to 200 bytes.
type StdoutError = stdio.StrayOutputError

// ContentError reports a tool result that cannot be turned into Content.
type ContentError struct {
	Server string
	Tool   string
	// Index is the position of the offending block in the result's content,
	// or -1 when the result as a whole is malformed.
	Index int
	Err   error
}

func (e *ContentError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("mcpadapter: server %q, tool %q: malformed result: %v", e.Server, e.Tool, e.Err)
	}
	return fmt.Sprintf("mcpadapter: server %q, tool %q: content[%d]: %v", e.Server, e.Tool, e.Index, e.Err)
}

func (e *ContentError) Unwrap() error { return e.Err }

// TargetError reports a target New or NewClient cannot use.
type TargetError struct {
	// Target is the value that was passed, as text.
	Target string
	// Reason says what is wrong and what to do instead.
	Reason string
}

func (e *TargetError) Error() string {
	return fmt.Sprintf("mcpadapter: target %s: %s", e.Target, e.Reason)
}

// ServerError reports that the server answered a request (other than a
// tool call, whose refusals are error results) with a JSON-RPC error, such
// as an unknown prompt or resource. Err is the *jsonrpc.Error.
type ServerError struct {
	Server string
	Op     string
	Err    error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("mcpadapter: server %q: %s: %v", e.Server, e.Op, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }
