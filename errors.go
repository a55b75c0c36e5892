package mcpadapter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
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
// as an unknown prompt or resource. Err is the *jsonrpc.Error. Error shows
// the server's text with credentials redacted (a server may echo what it
// was sent).
type ServerError struct {
	Server string
	Op     string
	Err    error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("mcpadapter: server %q: %s: %s", e.Server, e.Op, wire.RedactURLSecrets(fmt.Sprint(e.Err)))
}

func (e *ServerError) Unwrap() error { return e.Err }

// TransportErrorResult returns the result that stands for te, a failure to
// reach a server, so that a model can read it and the run go on: IsError
// set, Content saying which server is unavailable and why (one line, URL
// secrets redacted, without the server's stderr), and Failure set to te
// for the application. Bindings use it for their "transport errors as
// results" setting; see Options.TransportErrorsAsResults.
func TransportErrorResult(te *TransportError) *Result {
	msg := fmt.Sprintf("The %q server is unavailable: %s. Tell the user that this tool cannot be used now, or go on without it.", te.Server, failureCause(te))
	res := errorResult(msg)
	res.Failure = te
	return res
}

// failureCause is the first line of te's cause, URL secrets redacted, cut
// to about 300 bytes, without a final period.
func failureCause(te *TransportError) string {
	if te.Err == nil {
		return "the connection failed"
	}
	cause, _, _ := strings.Cut(wire.RedactURLSecrets(te.Err.Error()), "\n")
	if len(cause) > 300 {
		cause = strings.ToValidUTF8(cause[:300], "") + "…"
	}
	return strings.TrimSuffix(cause, ".")
}

// softened turns a call's transport failure into a result when the tool
// was listed with Options.TransportErrorsAsResults. A call whose own
// context ended keeps its error: the run is being stopped, not the server.
func (t *Tool) softened(ctx context.Context, res *Result, err error) (*Result, error) {
	if err == nil || !t.soft || ctx.Err() != nil {
		return res, err
	}
	var te *TransportError
	if !errors.As(err, &te) {
		return res, err
	}
	t.client.log.Warn("server unavailable; the model is told so", "tool", t.Name, "op", te.Op, "cause", failureCause(te))
	return TransportErrorResult(te), nil
}
