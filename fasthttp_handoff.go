package mcpadapter

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"

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
	ours string // the fast path's id of the call, as JSON

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
	h := &handoff{ours: strconv.FormatInt(a.id, 10), resp: resp}
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
// stream, or the whole body. The top-level "id" member is found wherever
// it stands (the TypeScript SDK writes {"result":…,"jsonrpc":"2.0","id":…})
// by scanning the bytes as they pass, holding only the id's value.
func (h *handoff) translating(body io.ReadCloser, stream bool) io.ReadCloser {
	h.mu.Lock()
	sdk := h.sdk
	h.mu.Unlock()
	return &idTranslator{src: body, body: body, scan: idScan{stream: stream, from: h.ours, to: sdk}}
}

// translateWindow is how much is read from the body at a time.
const translateWindow = 32 << 10

// idTranslator is a body whose messages with the id from get the id to.
type idTranslator struct {
	src  io.Reader
	body io.Closer
	scan idScan
	in   []byte // read from src
	buf  []byte // in, translated
	out  []byte // what of buf is not yet read
	err  error
}

func (t *idTranslator) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		if t.in == nil {
			t.in = make([]byte, translateWindow)
		}
		var n int
		n, t.err = t.src.Read(t.in)
		t.buf = t.scan.feed(t.buf[:0], t.in[:n])
		if t.err != nil {
			t.buf = t.scan.flush(t.buf)
		}
		t.out = t.buf
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

func (t *idTranslator) Close() error { return t.body.Close() }

// idScan follows the JSON of a message (or of each line of an event
// stream) byte by byte, to find its top-level "id" member.
type idScan struct {
	stream   bool
	from, to string
	depth    int
	inStr    bool
	esc      bool
	inKey    bool
	key      []byte
	expect   bool // a key may come next (depth 1)
	inID     bool // in the id's value, held
	held     []byte
	done     bool // nothing more to look for (until the next line)
}

// feed appends b, translated, to out.
func (s *idScan) feed(out, b []byte) []byte {
	for _, c := range b {
		if s.stream && c == '\n' {
			out = s.flush(out)
			*s = idScan{stream: true, from: s.from, to: s.to, key: s.key[:0], held: s.held[:0]}
			out = append(out, c)
			continue
		}
		if s.done || s.to == "" {
			out = append(out, c)
			continue
		}
		if s.inID {
			if !s.inStr && (c == ',' || c == '}') {
				out = s.endID(out)
			} else {
				s.held = append(s.held, c)
				s.string(c)
				if len(s.held) > 64 {
					out = s.flush(out)
				}
				continue
			}
		}
		out = append(out, c)
		if s.inStr {
			if s.string(c) && s.inKey {
				s.inKey = false
			} else if s.inKey && len(s.key) < 3 {
				s.key = append(s.key, c)
			}
			continue
		}
		switch c {
		case '{', '[':
			s.depth++
			s.expect = s.depth == 1 && c == '{'
		case '}', ']':
			s.depth--
			if s.depth <= 0 {
				s.done = true
			}
		case '"':
			s.inStr = true
			if s.depth == 1 && s.expect {
				s.inKey, s.key = true, s.key[:0]
			}
		case ':':
			if s.depth == 1 {
				s.expect = false
				s.inID = string(s.key) == "id"
				s.held = s.held[:0]
			}
		case ',':
			s.expect = s.depth == 1
		}
	}
	return out
}

// string follows c inside a string; it reports whether c ended it.
func (s *idScan) string(c byte) bool {
	switch {
	case !s.inStr:
		s.inStr = c == '"'
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.inStr = false
		return true
	}
	return false
}

// endID appends the id's value held, changed when it is from; the scan
// of the message is done.
func (s *idScan) endID(out []byte) []byte {
	v := bytes.TrimSpace(s.held)
	if string(v) == s.from {
		at := bytes.Index(s.held, v)
		out = append(out, s.held[:at]...)
		out = append(out, s.to...)
		out = append(out, s.held[at+len(v):]...)
	} else {
		out = append(out, s.held...)
	}
	s.held, s.inID, s.done, s.inStr = s.held[:0], false, true, false
	return out
}

// flush appends what is held, as it is, and ends the scan.
func (s *idScan) flush(out []byte) []byte {
	out = append(out, s.held...)
	s.held, s.inID, s.done = s.held[:0], false, true
	return out
}
