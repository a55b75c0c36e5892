package stdio

import (
	"context"
	"fmt"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxMessageBytes is the limit on one message from the server when
// Transport.MaxMessageBytes is zero.
const DefaultMaxMessageBytes = 64 << 20

// DefaultStopGrace is how long a server gets at each step of stopping it
// when Transport.StopGrace is zero.
const DefaultStopGrace = 2 * time.Second

// DefaultStderrLines is how many stderr lines are kept when
// Transport.StderrLines is zero.
const DefaultStderrLines = 50

// Observer sees every JSON-RPC message of a connection, with its encoding.
type Observer interface {
	// Sent is called with each message before it is written. A request
	// Conn.RoundTrip writes comes without its Params (raw has them).
	Sent(msg jsonrpc.Message, raw []byte)
	// Received is called with each message read, before it is returned.
	Received(msg jsonrpc.Message, raw []byte)
}

// Transport is an mcp.Transport over a child process's stdin and stdout.
// Unlike go-sdk's CommandTransport it skips and reports lines that are not
// JSON (a server logging to stdout), bounds message size without killing the
// session, keeps the stderr tail and kills the whole process group. Each
// Connect starts a new process.
type Transport struct {
	// Path is the program to run, looked up in PATH if it has no slash.
	Path string
	// Args are the arguments, not including the program name.
	Args []string
	// Env holds "KEY=value" entries for the child's environment. The
	// child gets these, the variables of this process's environment that
	// SafeEnv names, and those InheritEnv matches; nothing else of this
	// process's environment (see Environ).
	Env []string
	// InheritEnv names more variables of this process's environment to
	// pass on: names, prefixes ending in "*", or "*" for all of them.
	InheritEnv []string
	// Dir is the working directory; empty means this process's.
	Dir string

	// StderrLines is how many of the last stderr lines are kept; zero means
	// DefaultStderrLines.
	StderrLines int
	// OnStderr, if set, sees each line the server writes to stderr.
	OnStderr func(line string)
	// MaxMessageBytes bounds one message from the server; zero means
	// DefaultMaxMessageBytes. A larger response fails its call with a clear
	// error; the connection stays usable.
	MaxMessageBytes int
	// StopGrace is how long the server gets to exit after its stdin is
	// closed, and again after SIGTERM, before its process group is killed;
	// zero means DefaultStopGrace.
	StopGrace time.Duration
	// OnSkip, if set, hears of the lines of stdout that are skipped: lines
	// that are not JSON-RPC messages, and responses that cannot be decoded
	// (their calls fail with the reason). It hears of the first ten of every
	// ten seconds one by one, then, at the end of those ten seconds (or of
	// the connection), of the number of the others in one summary, so that
	// a server printing a million lines makes a few reports.
	OnSkip func(Skip)
	// Observer, if set, sees every message sent and received.
	Observer Observer
	// OnStart, if set, is called with each new connection before Connect
	// returns it, so that the caller can ask it for diagnostics later.
	OnStart func(*Conn)
	// Marks, if set, are the connection's markers (internal/order): Read
	// passes one up before a response that follows a request or
	// notification read since the last, so that the caller can wait
	// until the notifications before an answer have been handled. The
	// client's receiving middleware must note them reached
	// (order.Marks.Reached) and handled (order.Marks.Handled).
	Marks *order.Marks
}

// Connect starts the process and returns its connection, a *Conn.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, err := startProcess(t.Path, t.Args, childEnv(t.InheritEnv, t.Env), t.Dir, t.StderrLines, t.OnStderr)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Path, err)
	}
	max := t.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	grace := t.StopGrace
	if grace <= 0 {
		grace = DefaultStopGrace
	}
	c := newConn(p, max, grace, t.Observer, t.OnSkip)
	c.marks = t.Marks
	t.Marks.InOrder()
	if t.OnStart != nil {
		t.OnStart(c)
	}
	return c, nil
}
