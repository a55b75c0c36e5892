package streamable

import (
	"bytes"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// LateAnswers is an http.RoundTripper that makes readable the answer a
// go-sdk v1.8.0 server of 2026-07-28 writes too late on a POST's event
// stream. Such a server gives some JSON-RPC errors an HTTP status of
// their own (-32601: 404; -32602, an unsupported protocol version, missing
// client capabilities: 400) and writes them as a JSON body with that
// status; when the call's stream had begun (status 200, an event stream,
// a progress report or a log message written), it writes the error's
// JSON after the events anyway, bare, where an SSE reader skips it (go-sdk
// then ends the call with "request terminated without response").
//
// On the event stream answering a POST of one JSON-RPC request, of
// 2026-07-28 or later (lateFrom), LateAnswers frames as an SSE event
// (event: message) the first line that is no SSE field and comes between
// events, after at least one: when it is, whole (at most Limit bytes), a
// JSON-RPC response with the request's id, as go-sdk's decoder reads both. Every other byte, that line
// included when it is anything else (another id, no response, junk, too
// long), goes through as it came; nothing after the first such line is
// looked at (a second answer stays as the server wrote it). go-sdk's
// transport, the fast path and the Tap above read the stream as ever.
type LateAnswers struct {
	// Next makes the requests.
	Next http.RoundTripper
	// Limit bounds the line LateAnswers holds to look at: a longer one
	// goes through as it came.
	Limit int
}

// lateFrom is the first protocol version go-sdk writes late answers at:
// it gives errors a status of their own only for a request whose
// MCP-Protocol-Version header is this version or later (compared as
// strings, as go-sdk does). The event stream of any other POST is handed
// on as it came, not wrapped.
const lateFrom = "2026-07-28"

// RoundTrip implements http.RoundTripper.
func (t LateAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.Next.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost || req.GetBody == nil ||
		req.Header.Get("Mcp-Protocol-Version") < lateFrom || resp.StatusCode != http.StatusOK ||
		resp.Body == nil || resp.Body == http.NoBody || mediaTypeOf(resp) != "text/event-stream" {
		return resp, err
	}
	resp.Body = &lateBody{rc: resp.Body, req: req, limit: t.Limit, boundary: true}
	return resp, nil
}

// lateBody is the body of a POST's event stream, its late answer framed
// (see LateAnswers).
type lateBody struct {
	rc    io.ReadCloser
	req   *http.Request
	limit int

	// The reading of the stream up to the first line that is no field.
	boundary bool // the line being read begins an event (the stream's start, or after a blank line)
	midLine  bool // the next byte continues a line
	content  bool // the line being read holds a byte other than '\r'
	inEvent  bool // a field line came since the last blank line
	events   bool // an event came whole
	done     bool // the first line that is no field was taken: no more to look at

	out  []byte // to hand out before anything else
	rest []byte // read from rc, past out, not yet looked at
	err  error  // the error of rc's read, after rest
}

// Read implements io.Reader.
func (b *lateBody) Read(p []byte) (int, error) {
	if len(b.out) > 0 {
		n := copy(p, b.out)
		b.out = b.out[n:]
		return n, nil
	}
	var n int
	var err error
	switch {
	case len(b.rest) > 0:
		n = copy(p, b.rest)
		b.rest = b.rest[n:]
	case b.err != nil:
		return 0, b.err
	default:
		n, err = b.rc.Read(p)
	}
	if b.done {
		return n, err
	}
	for i := 0; i < n; i++ {
		if b.content {
			// The rest of a line that holds a byte other than '\r' counts
			// for nothing but its end.
			j := bytes.IndexByte(p[i:n], '\n')
			if j < 0 {
				break
			}
			i += j
		}
		c := p[i]
		if c == '{' && !b.midLine && b.boundary && b.events {
			// A line that is no SSE field (a field's name has no '{'),
			// between events.
			if err != nil {
				b.err = err
			}
			b.take(p[i:n])
			k := copy(p[i:], b.out)
			b.out = b.out[k:]
			return i + k, nil
		}
		b.see(c)
	}
	return n, err
}

// see follows the stream's lines by one byte c of it. A line ends at
// '\n' and is blank when it holds nothing but '\r's, as go-sdk reads
// them.
func (b *lateBody) see(c byte) {
	switch c {
	case '\n':
		if b.content {
			b.inEvent, b.boundary = true, false
		} else {
			b.events = b.events || b.inEvent
			b.inEvent, b.boundary = false, true
		}
		b.content, b.midLine = false, false
	case '\r':
		b.midLine = true
	default:
		b.content, b.midLine = true, true
	}
}

// take reads the line that begins with head, to its end (or the stream's,
// or past limit bytes), and puts in out the line framed as an SSE event
// when it is the request's answer, as it came otherwise. What comes past
// it goes back to rest.
func (b *lateBody) take(head []byte) {
	b.done = true
	line := make([]byte, 0, max(len(head)+len(b.rest), 512))
	line = append(append(line, head...), b.rest...)
	b.rest = nil
	end := bytes.IndexByte(line, '\n')
	for end < 0 && b.err == nil && len(line) <= b.limit {
		if len(line) == cap(line) {
			line = append(line, 0)[:len(line)]
		}
		k, err := b.rc.Read(line[len(line):cap(line)])
		end = bytes.IndexByte(line[len(line):len(line)+k], '\n')
		if end >= 0 {
			end += len(line)
		}
		line = line[:len(line)+k]
		b.err = err
	}
	msg := line
	if end >= 0 {
		msg, b.rest = line[:end], line[end+1:]
	}
	if (end >= 0 || b.err == io.EOF) && len(msg) <= b.limit && b.answers(bytes.TrimRight(msg, "\r")) {
		msg = bytes.TrimRight(msg, "\r")
		out := make([]byte, 0, len("event: message\ndata: \n\n")+len(msg))
		out = append(out, "event: message\ndata: "...)
		out = append(out, msg...)
		b.out = append(out, "\n\n"...)
		return
	}
	b.out, b.rest = line, nil
}

// answers reports whether msg is a JSON-RPC response with the id of the
// request, one JSON-RPC request, as go-sdk's decoder reads them.
func (b *lateBody) answers(msg []byte) bool {
	m, err := jsonrpc.DecodeMessage(msg)
	resp, ok := m.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return false
	}
	body, err := b.req.GetBody()
	if err != nil {
		return false
	}
	data, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil {
		return false
	}
	m, err = jsonrpc.DecodeMessage(data)
	req, ok := m.(*jsonrpc.Request)
	return err == nil && ok && req.ID.IsValid() && req.ID == resp.ID
}

// Close implements io.Closer.
func (b *lateBody) Close() error { return b.rc.Close() }
