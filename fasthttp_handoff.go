package mcpadapter

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Handing a fast-path call over to go-sdk (see fasthttp.go).
//
// go-sdk's streamable client connection cannot be wrapped (go-sdk relies
// on an unexported method of it), so messages cannot be handed to it at
// the connection. Instead the fast path asks go-sdk to make the call, with
// a context that carries the response the fast path holds: go-sdk's POST
// of the call reaches handoffTransport, below the Tap, which answers it
// with that response instead of sending it, its body replayed from the
// start. The server knows the call by the fast path's id: in what it
// sends afterwards, on that body and on a stream go-sdk resumes with the
// call's context, that id is replaced by go-sdk's, and in go-sdk's
// cancellation of the call go-sdk's id by the fast path's.

// handoffKey is the context key of a *handoff.
type handoffKey struct{}

// handoff is a response the fast path hands over to go-sdk.
type handoff struct {
	ours  string // the fast path's id of the call, as JSON
	limit int    // the biggest message whose id is translated wherever it is

	mu   sync.Mutex
	resp *http.Response // nil once taken
	sdk  string         // go-sdk's id of the call, as JSON, once taken
	sent bool           // go-sdk sent the call itself too (after a 401)
}

// handOff makes the call params through go-sdk, whose POST is answered
// with resp, of which a has read what it holds.
func (c *Client) handOff(ctx context.Context, s *session, params *mcp.CallToolParams, resp *http.Response, a *fastAnswer) (*mcp.CallToolResult, error) {
	end := a.readErr
	if a.eof {
		end = io.EOF
	}
	resp.Body = &replayBody{prefix: a.buf, rest: resp.Body, err: end, stop: a.stop}
	h := &handoff{ours: strconv.FormatInt(a.id, 10), limit: s.fast.http.limit, resp: resp}
	res, err := s.cs.CallTool(context.WithValue(ctx, handoffKey{}, h), params)
	h.mu.Lock()
	left := h.resp
	h.resp = nil
	h.mu.Unlock()
	if left != nil {
		// go-sdk never sent the call.
		_ = left.Body.Close()
	}
	return res, err
}

// replayBody reads prefix, then rest (or, if err is set, fails with it);
// closing it ends its request's context (stop).
type replayBody struct {
	prefix []byte
	rest   io.ReadCloser
	err    error
	stop   func()
}

func (b *replayBody) Read(p []byte) (int, error) {
	if len(b.prefix) > 0 {
		n := copy(p, b.prefix)
		b.prefix = b.prefix[n:]
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.rest.Read(p)
}

func (b *replayBody) Close() error {
	err := b.rest.Close()
	if b.stop != nil {
		b.stop()
	}
	return err
}

// handoffTransport answers go-sdk's POST of a call handed over to it (see
// handoff) and translates the call's id; it passes every other request
// on to next.
type handoffTransport struct{ next http.RoundTripper }

func (t handoffTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	h, _ := req.Context().Value(handoffKey{}).(*handoff)
	if h == nil {
		return t.next.RoundTrip(req)
	}
	if req.Method == http.MethodPost && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return t.next.RoundTrip(req)
		}
		data, err := io.ReadAll(body)
		_ = body.Close()
		if err != nil {
			return t.next.RoundTrip(req)
		}
		method, id := methodAndID(data)
		switch method {
		case "tools/call":
			resp := h.take(id)
			if resp != nil {
				closeBody(req)
				out := *resp
				out.Request = req
				out.Body = h.translating(resp.Body, mediaTypeOf(resp) == "text/event-stream")
				return &out, nil
			}
		case "notifications/cancelled":
			h.mu.Lock()
			sdk, sent := h.sdk, h.sent
			h.mu.Unlock()
			if sdk != "" && !sent {
				data = bytes.Replace(data, []byte(`"requestId":`+sdk), []byte(`"requestId":`+h.ours), 1)
				req = withBody(req, data)
			}
		}
		return t.next.RoundTrip(req)
	}
	resp, err := t.next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.Body != nil {
		// go-sdk resuming the call's stream.
		resp.Body = h.translating(resp.Body, true)
	}
	return resp, err
}

// take returns the response held for go-sdk's POST of the call, which has
// the id sdk (as JSON), once.
func (h *handoff) take(sdk string) *http.Response {
	h.mu.Lock()
	defer h.mu.Unlock()
	resp := h.resp
	if resp != nil && sdk != "" {
		h.resp, h.sdk = nil, sdk
		return resp
	}
	if h.sdk != "" && sdk == h.sdk {
		// go-sdk sends the call again (having authorized): the server
		// now knows it by go-sdk's id.
		h.sent = true
	}
	return nil
}

// withBody returns a copy of req with body data.
func withBody(req *http.Request, data []byte) *http.Request {
	closeBody(req)
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	r.ContentLength = int64(len(data))
	return r
}

// methodAndID returns the method and the id (as JSON) of the message
// data, or "".
func methodAndID(data []byte) (method, id string) {
	eachMember(data, func(key, v []byte) bool {
		switch string(key) {
		case "method":
			method, _ = jsonString(v)
		case "id":
			id = string(v)
		}
		return true
	})
	return method, id
}

// translating returns body with the id of the call changed from the fast
// path's to go-sdk's in the message that has it: each line of an event
// stream, or the whole body. A message of up to limit bytes is read whole
// first, since its id may come after its result (the TypeScript SDK
// writes {"result":…,"jsonrpc":"2.0","id":…}); of a bigger one (which the
// Tap above replaces with an error to go-sdk's request) only the first
// translateWindow bytes are looked at.
func (h *handoff) translating(body io.ReadCloser, stream bool) io.ReadCloser {
	h.mu.Lock()
	sdk := h.sdk
	h.mu.Unlock()
	return &idTranslator{src: bufio.NewReaderSize(body, translateWindow), body: body, stream: stream, start: true, from: h.ours, to: sdk, limit: h.limit}
}

// translateWindow is the size of the translator's read buffer, and how
// much of a message over the limit is looked at for the id.
const translateWindow = 64 << 10

// idTranslator is a body whose messages with the id from get the id to.
// It holds at most one message of limit bytes (plus a line's "data:" and
// end), or translateWindow bytes.
type idTranslator struct {
	src      *bufio.Reader
	body     io.Closer
	stream   bool
	start    bool // the next bytes start a line (or the body)
	from, to string
	limit    int
	out      []byte // translated, not yet read
	err      error
}

func (t *idTranslator) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		switch {
		case !t.stream && !t.start:
			return t.src.Read(p)
		case !t.start: // the rest of a line over the limit
			t.out, t.err = t.src.ReadSlice('\n')
		case t.stream:
			t.out, t.err = t.line()
		default:
			t.out, t.err = t.whole()
		}
		if t.err == bufio.ErrBufferFull {
			t.err = nil
		}
		t.start = t.stream && len(t.out) > 0 && t.out[len(t.out)-1] == '\n'
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// line reads the next line of an event stream, with its id translated
// when it is at most limit bytes long (and otherwise its first
// translateWindow bytes, the rest of it left to be read).
func (t *idTranslator) line() ([]byte, error) {
	chunk, err := t.src.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return translateID(chunk, t.from, t.to), err
	}
	l := append([]byte(nil), chunk...)
	for err == bufio.ErrBufferFull && len(l) <= t.bound()+len("data: \r\n") {
		chunk, err = t.src.ReadSlice('\n')
		l = append(l, chunk...)
	}
	return translateID(l, t.from, t.to), err
}

// whole reads a JSON body, with its id translated when it is at most
// limit bytes long (and otherwise its first translateWindow bytes, the
// rest of it left to be read).
func (t *idTranslator) whole() ([]byte, error) {
	b, err := t.src.Peek(translateWindow)
	if err == nil { // the body may go on
		b, err = io.ReadAll(io.LimitReader(t.src, int64(t.bound())+1))
		if err == nil && len(b) <= t.bound() {
			err = io.EOF
		}
		return translateID(b, t.from, t.to), err
	}
	_, _ = t.src.Discard(len(b))
	return translateID(b, t.from, t.to), err
}

// bound is the size of the biggest message read whole.
func (t *idTranslator) bound() int { return max(t.limit, translateWindow) }

func (t *idTranslator) Close() error { return t.body.Close() }

// translateID returns b, the start of a message or of an event stream's
// line, with its top-level "id" member changed from from to to when it is
// from. b itself is never changed.
func translateID(b []byte, from, to string) []byte {
	msg := b
	if bytes.HasPrefix(msg, []byte("data:")) {
		msg = msg[len("data:"):]
	}
	if to == "" || !bytes.Contains(msg, []byte(from)) {
		return b
	}
	at := idAt(msg, from)
	if at < 0 {
		return b
	}
	at += len(b) - len(msg)
	out := make([]byte, 0, len(b)-len(from)+len(to))
	out = append(out, b[:at]...)
	out = append(out, to...)
	return append(out, b[at+len(from):]...)
}

// idAt returns where, in b (a message or its start), the value of the
// top-level "id" member starts when it is from, and -1 otherwise or when
// b ends before it is known.
func idAt(b []byte, from string) int {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return -1
	}
	i = jsonscan.Space(b, i+1)
	for i < len(b) && b[i] == '"' {
		kend := jsonscan.String(b, i)
		if kend < 0 {
			return -1
		}
		key := b[i+1 : kend-1]
		i = jsonscan.Space(b, kend)
		if i >= len(b) || b[i] != ':' {
			return -1
		}
		i = jsonscan.Space(b, i+1)
		vend := jsonscan.Value(b, i, 0)
		if vend < 0 || vend >= len(b) {
			return -1 // the value may go on past b
		}
		if string(key) == "id" {
			if string(b[i:vend]) == from {
				return i
			}
			return -1
		}
		i = jsonscan.Space(b, vend)
		if i >= len(b) || b[i] != ',' {
			return -1
		}
		i = jsonscan.Space(b, i+1)
	}
	return -1
}
