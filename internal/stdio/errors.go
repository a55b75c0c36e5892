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
