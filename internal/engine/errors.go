package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// TransportError reports that a request could not be completed because the
// connection to a server failed: it could not be established, it closed, the
// server process died, or the server did not answer in time. The model cannot
// act on such a failure, so tools return it as a Go error.
type TransportError struct {
	// Server names the server, as in ServerInfo.Name.
	Server string
	// Tool is the tool being called, or "" when the failure is not a tool call.
	Tool string
	// Op is the step that failed: "connect", "initialize", "server/discover",
	// "tools/list", "tools/call", ...
	Op string
	// Stderr holds the last lines the server process wrote to stderr, when it
	// is a local process, as it wrote them: they may hold secrets, so show
	// RedactedStderr instead (Error does).
	Stderr []string
	// Err is the underlying cause.
	Err error
}

func (e *TransportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcpadapter: server %q", e.Server)
	if e.Tool != "" {
		fmt.Fprintf(&b, ", tool %q", e.Tool)
	}
	if e.Op != "" {
		fmt.Fprintf(&b, ": %s", e.Op)
	}
	fmt.Fprintf(&b, ": %s", wire.RedactURLSecrets(e.Err.Error()))
	if len(e.Stderr) > 0 {
		fmt.Fprintf(&b, "\nlast %d lines of the server's stderr:", len(e.Stderr))
		for _, line := range e.RedactedStderr() {
			fmt.Fprintf(&b, "\n  %s", line)
		}
	}
	return b.String()
}

func (e *TransportError) Unwrap() error { return e.Err }

// RedactedStderr returns Stderr with credentials hidden, as Error shows
// it: the lines are redacted as one text, since a secret can follow its
// name on the next line (a folded header, a YAML block, a PEM key), and
// split again (a secret spanning lines leaves one line for them).
func (e *TransportError) RedactedStderr() []string {
	if len(e.Stderr) == 0 {
		return nil
	}
	return strings.Split(wire.RedactURLSecrets(strings.Join(e.Stderr, "\n")), "\n")
}

// TransportError wraps err with the server's name and, for a stdio server
// (s, which may be nil), the last lines of its stderr and any stray stdout
// lines. An error that is a *TransportError already is returned as it is.
func (e *Engine) TransportError(s *Session, op, tool string, err error) error {
	var te *TransportError
	if errors.As(err, &te) {
		return err
	}
	name := e.cfg.Name
	if e.cfg.NameOf != nil {
		name = e.cfg.NameOf()
	}
	te = &TransportError{Server: name, Tool: tool, Op: op, Err: err}
	if s != nil && s.stdio != nil {
		te.Stderr = s.stdio.Stderr()
		stray := s.stdio.StrayLines()
		var se *stdio.StrayOutputError
		if len(stray) > 0 && !errors.As(err, &se) {
			te.Err = errors.Join(err, &stdio.StrayOutputError{Lines: stray})
		}
	}
	return te
}
