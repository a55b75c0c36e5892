package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioTransport is an mcp.Transport over a child process's stdin/stdout.
// Unlike go-sdk's CommandTransport it skips and reports lines that are not
// JSON (a server logging to stdout), bounds message size without killing the
// session, keeps the stderr tail and kills the whole process group.
type stdioTransport struct {
	cmd      Command
	server   string
	opts     *ClientOptions
	obs      *wire.Observer
	onStart  func(*stdioConn) // records the connection for diagnostics
	logStray func(server, line string)
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	var onStderr func(string)
	if t.opts.StderrHandler != nil {
		h, server := t.opts.StderrHandler, t.server
		onStderr = func(line string) { h(server, line) }
	}
	p, err := startProcess(t.cmd, t.opts.StderrLines, onStderr)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.cmd.Path, err)
	}
	max := t.opts.MaxMessageBytes
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	c := &stdioConn{
		backlog:  newBacklog(),
		proc:     p,
		server:   t.server,
		r:        bufio.NewReaderSize(p.stdout, 64*1024),
		max:      max,
		obs:      t.obs,
		logStray: t.logStray,
		grace:    t.opts.closeGrace(),
	}
	if t.onStart != nil {
		t.onStart(c)
	}
	return c, nil
}

// DefaultMaxMessageBytes is the default limit on one message from a stdio
// server (ClientOptions.MaxMessageBytes).
const DefaultMaxMessageBytes = 64 << 20

type stdioConn struct {
	proc     *stdioProcess
	server   string
	r        *bufio.Reader // used only by Read, which go-sdk calls from one goroutine
	max      int
	obs      *wire.Observer
	logStray func(server, line string)
	grace    time.Duration

	writeMu sync.Mutex
	backlog *backlog

	closeOnce   sync.Once
	exitedFirst bool // set by closeOnce

	mu      sync.Mutex
	stray   []string // last non-JSON stdout lines
	pending []jsonrpc.Message
	readErr error
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next JSON-RPC message, skipping lines that are not JSON.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if m := c.popPending(); m != nil {
			return m, nil
		}
		line, owned, err := c.readLine()
		if err != nil {
			return nil, c.failRead(err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || !json.Valid(line) {
			c.noteStray(line)
			continue
		}
		msg, err := decodeMessage(line, owned)
		if err != nil {
			c.noteStray(line)
			continue
		}
		c.obs.Received(msg, line)
		c.backlog.passUp(ctx, msg)
		return msg, nil
	}
}

func (c *stdioConn) popPending() jsonrpc.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	m := c.pending[0]
	c.pending = c.pending[1:]
	return m
}

// readLine reads one line of at most c.max bytes, with its newline. A line
// that fits the reader's buffer (64 KiB) is returned in place: it is valid
// until the next call and owned is false. A longer line is gathered in
// blocks and copied once into a slice of its exact size, which the caller
// owns: reading an n-byte line allocates at most 2n bytes + 1 MiB (growing
// one slice by append allocated about 6n).
func (c *stdioConn) readLine() (line []byte, owned bool, err error) {
	chunk, err := c.r.ReadSlice('\n')
	if len(chunk) > c.max {
		return nil, false, c.skipLongLine(nil, chunk, err)
	}
	switch {
	case err == nil, err == io.EOF && len(chunk) > 0:
		return chunk, false, nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, false, err
	}
	var lb lineBlocks
	for {
		lb.add(chunk)
		chunk, err = c.r.ReadSlice('\n')
		if lb.size+len(chunk) > c.max {
			return nil, false, c.skipLongLine(&lb, chunk, err)
		}
		switch {
		case err == nil, err == io.EOF:
			return lb.join(chunk), true, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, false, err
		}
	}
}

// lineBlocks holds the start of a long line while it is read: copies of the
// reader's chunks in blocks that grow from 64 KiB to 1 MiB (the most a last
// block can leave unused), so that no byte is copied twice before the final
// join.
type lineBlocks struct {
	blocks [][]byte // full blocks
	cur    []byte   // the block being filled
	size   int      // bytes held
}

func (lb *lineBlocks) add(p []byte) {
	lb.size += len(p)
	for len(p) > 0 {
		if len(lb.cur) == cap(lb.cur) {
			if lb.cur != nil {
				lb.blocks = append(lb.blocks, lb.cur)
			}
			lb.cur = make([]byte, 0, min(max(lb.size, 64<<10), 1<<20))
		}
		n := copy(lb.cur[len(lb.cur):cap(lb.cur)], p)
		lb.cur = lb.cur[:len(lb.cur)+n]
		p = p[n:]
	}
}

// join returns the bytes held followed by last, in one new slice.
func (lb *lineBlocks) join(last []byte) []byte {
	out := make([]byte, 0, lb.size+len(last))
	for _, b := range lb.blocks {
		out = append(out, b...)
	}
	out = append(out, lb.cur...)
	return append(out, last...)
}

// head returns up to n bytes from the start of what is held, then of last.
func (lb *lineBlocks) head(n int, last []byte) []byte {
	var out []byte
	if lb != nil {
		for _, b := range lb.blocks {
			out = append(out, b[:min(len(b), n-len(out))]...)
		}
		out = append(out, lb.cur[:min(len(lb.cur), n-len(out))]...)
	}
	return append(out, last[:min(len(last), n-len(out))]...)
}

// tail returns up to n bytes from the end of what is held, then last.
func (lb *lineBlocks) tail(n int, last []byte) []byte {
	if len(last) >= n || lb == nil {
		return append([]byte(nil), last[max(0, len(last)-n):]...)
	}
	var out []byte
	need := n - len(last)
	for i := len(lb.blocks); i >= 0 && need > 0; i-- {
		b := lb.cur
		if i < len(lb.blocks) {
			b = lb.blocks[i]
		}
		take := b[max(0, len(b)-need):]
		out = append(append([]byte(nil), take...), out...)
		need -= len(take)
	}
	return append(out, last...)
}

// skipLongLine discards the rest of an oversized line, of which lb (nil
// when none) holds the start and last is the chunk just read, with err the
// error that read returned. If the line is a response, the call it answers
// fails with a clear error instead of waiting forever, and the connection
// stays usable. It returns a read error only.
func (c *stdioConn) skipLongLine(lb *lineBlocks, last []byte, err error) error {
	head := lb.head(256, last)
	tail := lb.tail(256, last)
	size := len(last)
	if lb != nil {
		size += lb.size
		*lb = lineBlocks{} // let the blocks go while the rest is skipped
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = c.r.ReadSlice('\n')
		size += len(chunk)
		if len(chunk) >= 256 {
			tail = append(tail[:0], chunk[len(chunk)-256:]...)
		} else {
			tail = append(tail, chunk...)
			tail = tail[max(0, len(tail)-256):]
		}
	}
	if err != nil && err != io.EOF {
		return err
	}
	id, ok := responseID(head, tail)
	if ok && bytes.Contains(tail, []byte(`"method"`)) {
		ok = false // a request or notification from the server, not a response
	}
	if !ok {
		c.noteStray([]byte(fmt.Sprintf("<dropped a %d-byte message over the %d-byte limit>", size, c.max)))
		return nil
	}
	resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the tool's result was too large (%d bytes; the limit is %d bytes): ask for less data", size, c.max),
	}}
	c.mu.Lock()
	c.pending = append(c.pending, resp)
	c.mu.Unlock()
	return nil
}

// tailID finds a top-level "id" member at the end of a JSON object.
var tailID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)

// responseID extracts the id of an oversized response from its first or
// last bytes, if it is a response at all.
func responseID(head, tail []byte) (jsonrpc.ID, bool) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		switch k {
		case "method":
			return jsonrpc.ID{}, false // a request or notification
		case "id":
			var raw any
			if dec.Decode(&raw) != nil {
				return jsonrpc.ID{}, false
			}
			return makeID(raw)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	m := tailID.FindSubmatch(tail)
	if m == nil {
		return jsonrpc.ID{}, false
	}
	d := json.NewDecoder(bytes.NewReader(m[1]))
	d.UseNumber()
	var raw any
	if d.Decode(&raw) != nil {
		return jsonrpc.ID{}, false
	}
	return makeID(raw)
}

func makeID(raw any) (jsonrpc.ID, bool) {
	if n, ok := raw.(json.Number); ok {
		f, err := n.Float64()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		raw = f // jsonrpc.MakeID takes numbers as float64
	}
	id, err := jsonrpc.MakeID(raw)
	return id, err == nil
}

func (c *stdioConn) noteStray(line []byte) {
	s := string(line)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	c.mu.Lock()
	if len(c.stray) == 5 {
		c.stray = c.stray[1:]
	}
	c.stray = append(c.stray, s)
	c.mu.Unlock()
	if c.logStray != nil {
		c.logStray(c.server, s)
	}
}

// strayLines returns the last non-JSON lines seen on stdout.
func (c *stdioConn) strayLines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.stray...)
}

// failRead turns the end of stdout into an error that says how the process
// ended, with what it printed.
func (c *stdioConn) failRead(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr != nil {
		return c.readErr
	}
	var cause error
	if err == io.EOF || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		e := c.proc.exitError(2 * time.Second)
		if e.StillRunning {
			// Nothing can be read from it any more: stop it now (the
			// error says it was killed), which also drains its stderr
			// into the tail the error shows. It did not exit by itself.
			c.closeOnce.Do(c.noteExited)
			c.proc.close(min(c.grace, closedStdoutGrace))
		}
		cause = e
	} else {
		cause = fmt.Errorf("reading the server's stdout: %w", err)
	}
	if len(c.stray) > 0 {
		cause = errors.Join(cause, &StdoutError{Lines: append([]string(nil), c.stray...)})
	}
	c.readErr = fmt.Errorf("%w: %w", mcp.ErrConnectionClosed, cause)
	return c.readErr
}

// Write sends one message as a line of JSON.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.obs.Sent(msg, data)
	data = append(data, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.proc.stdin.Write(data); err != nil {
		return &notSentError{fmt.Errorf("writing to the server's stdin: %w", err)}
	}
	return nil
}

// Close ends the process and its group.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(c.noteExited)
	c.proc.close(c.grace)
	return nil
}

// noteExited records, once, whether the process ended before the client
// ended it.
func (c *stdioConn) noteExited() { c.exitedFirst = c.proc.exitedNow() }

// exitedAlone reports whether the process had ended before anyone closed
// the connection.
func (c *stdioConn) exitedAlone() bool {
	c.closeOnce.Do(c.noteExited)
	return c.exitedFirst
}

// readError returns the error that ended reading, if any.
func (c *stdioConn) readError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// diagnostics returns what is known about why the process went away.
func (c *stdioConn) diagnostics() (stderr []string, stray []string) {
	return c.proc.tail.snapshot(), c.strayLines()
}
