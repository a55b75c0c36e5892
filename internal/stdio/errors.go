package stdio

import "fmt"

// ExitError reports that the server process ended: it is the cause of the
// error that ends reading (Conn.ReadError).
type ExitError struct {
	// Command is the program that was run.
	Command string
	// ExitCode is the process's exit status, or -1 when it was ended by a
	// signal or its status is unknown.
	ExitCode int
	// Signal names the signal that ended it, if any.
	Signal string
	// StillRunning reports that the process closed its stdout but had not
	// exited; it has been killed.
	StillRunning bool
}

// Error says how the process ended.
func (e *ExitError) Error() string {
	switch {
	case e.StillRunning:
		return fmt.Sprintf("server process %s closed its stdout but kept running (it was killed)", e.Command)
	case e.Signal != "":
		return fmt.Sprintf("server process %s was killed by signal %s", e.Command, e.Signal)
	default:
		return fmt.Sprintf("server process %s exited with status %d", e.Command, e.ExitCode)
	}
}

// StrayOutputError reports that the server wrote something to stdout that
// is not a JSON-RPC message: usually a log line or a banner printed to
// stdout instead of stderr. Such lines are skipped; this error explains a
// connection that failed after them.
type StrayOutputError struct {
	// Lines are the offending lines (the last few), each cut to 200 bytes.
	Lines []string
}

// Error quotes the offending lines.
func (e *StrayOutputError) Error() string {
	return fmt.Sprintf("the server wrote non-JSON to stdout (logs must go to stderr): %q", e.Lines)
}

// WriteError reports that a message could not be written to the server's
// stdin: the server did not get it, so a request may be retried on a new
// connection.
type WriteError struct {
	// Err is the failed write's error.
	Err error
}

// Error returns the write's error text.
func (e *WriteError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *WriteError) Unwrap() error { return e.Err }

// MaxHeldRequests is how many requests from the server (ping, sampling,
// elicitation, roots) the client holds at once: a request is held from
// the moment it is read until its answer has been written. A server that
// sends more is either flooding the client or not reading the answers
// (they wait for room in its stdin pipe); either way the client would pile
// up work for it without end, so the connection is closed with an
// *OverloadError.
const MaxHeldRequests = 1024

// OverloadError reports that the server sent more requests than the
// client holds at once while it answers them (MaxHeldRequests); the
// connection was closed and the process stopped. It is the cause of the
// error that ends reading (Conn.ReadError).
type OverloadError struct {
	// Limit is the number of requests the client held.
	Limit int
}

// Error says what the server did and the likely reason.
func (e *OverloadError) Error() string {
	return fmt.Sprintf("the server sent more than %d requests that the client was still answering "+
		"(answers are written only as fast as the server reads its stdin: is it reading?); the connection was closed", e.Limit)
}

// CutOffError reports that a message to the server was cut off in the
// middle of its line (its call's deadline passed while the server was not
// reading its stdin, or the process went away): the server has half a
// line, so the connection was closed and the process stopped. It is the
// cause of the error that ends reading (Conn.ReadError).
type CutOffError struct {
	// Written and Size are the bytes of the line written, and its length.
	Written, Size int
	// Err is why the write stopped.
	Err error
}

// Error says how much was written and why it stopped.
func (e *CutOffError) Error() string {
	return fmt.Sprintf("a message to the server was cut off after %d of its %d bytes (%v): the server was not reading its stdin; the connection was closed",
		e.Written, e.Size, e.Err)
}

// Unwrap returns Err.
func (e *CutOffError) Unwrap() error { return e.Err }
