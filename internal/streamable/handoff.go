package streamable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Handing a fast-path call over to go-sdk.
//
// go-sdk's streamable client connection cannot be wrapped (go-sdk relies
// on an unexported method of it), so messages cannot be handed to it at
// the connection. Instead the caller asks go-sdk to make the call, with a
// context that carries the response the fast path holds (WithHandOff):
// go-sdk's POST of the call reaches Transport, below the Tap, which
// answers it with that response instead of sending it, its body replayed
// from the start. The server knows the call by the fast path's id: in what
// it sends afterwards, on that body and on a stream go-sdk resumes with the
// call's context, that id is replaced by go-sdk's, and in go-sdk's
// cancellation of the call go-sdk's id by the fast path's.

// handOffKey is the context key of a *HandOff.
type handOffKey struct{}

// A HandOff is a response the fast path hands over to go-sdk (see
// RoundTrip).
type HandOff struct {
	ours   string // the fast path's id of the call, as JSON
	status int    // the status of the fast path's POST of the call
	conn   *Conn  // the fast path that made the POST
	id     int64  // ours, as a number

	mu   sync.Mutex
	resp *http.Response // nil once taken, or when none is held
	sdk  string         // go-sdk's id of the call, as JSON, once taken
	sent bool           // go-sdk sent the call itself too (after a 401)
}

// newHandOff returns the hand-over of resp, of which a has read what it
// holds.
func newHandOff(resp *http.Response, a *fastAnswer) *HandOff {
	end := a.readErr
	if a.eof {
		end = io.EOF
	}
	resp.Body = &replayBody{prefix: a.buf, rest: resp.Body, err: end, stop: a.stop}
	return &HandOff{ours: strconv.FormatInt(a.id, 10), status: resp.StatusCode, resp: resp, id: a.id}
}

// WithHandOff returns a context for go-sdk's call that h hands over.
func WithHandOff(ctx context.Context, h *HandOff) context.Context {
	return context.WithValue(ctx, handOffKey{}, h)
}

// Sent reports whether the server may have the call: the fast path sent
// it (h holds its response) and the answer was not 404 (the server's word
// that it does not know the session or endpoint: it ran nothing), whatever
// go-sdk's call returns.
func (h *HandOff) Sent() bool { return h.ours != "" && h.status != http.StatusNotFound }

// Close releases the response if go-sdk never took it (it never sent the
// call). Call it once go-sdk's call, made with ctx, has returned. When ctx
// ended before go-sdk took the response, go-sdk tells the server nothing
// (it never sent the call): the server, which has the fast path's POST,
// is told here that the call is cancelled.
func (h *HandOff) Close(ctx context.Context) {
	h.mu.Lock()
	left := h.resp
	h.resp = nil
	h.mu.Unlock()
	if left != nil {
		_ = left.Body.Close()
		if ctx.Err() != nil && h.conn != nil && h.Sent() {
			h.conn.cancel(ctx, h.id)
		}
	}
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

// Transport answers go-sdk's POST of a call handed over to it (see
// HandOff) and translates the call's id; it passes every other request on
// to Next. It goes below the session's Tap.
type Transport struct{ Next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	h, _ := req.Context().Value(handOffKey{}).(*HandOff)
	if h == nil {
		return t.Next.RoundTrip(req)
	}
	if req.Method == http.MethodPost && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return t.Next.RoundTrip(req)
		}
		data, err := io.ReadAll(body)
		_ = body.Close()
		if err != nil {
			return t.Next.RoundTrip(req)
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
				if at, end, ok := cancelledID(data, sdk); ok {
					data = append(append(append([]byte(nil), data[:at]...), h.ours...), data[end:]...)
					req = withBody(req, data)
				}
			}
		}
		return t.Next.RoundTrip(req)
	}
	resp, err := t.Next.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.Body != nil {
		// go-sdk resuming the call's stream.
		resp.Body = h.translating(resp.Body, true)
	}
	return resp, err
}

// take returns the response held for go-sdk's POST of the call, which has
// the id sdk (as JSON), once.
func (h *HandOff) take(sdk string) *http.Response {
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

// cancelledID returns where, in data, a notifications/cancelled, is the
// requestId it cancels when that is the request sdk (as JSON) in go-sdk's
// reading: the top-level "params" member's "requestId" member, keys read
// as go-sdk's decoder reads them (the last of a repeated key wins).
func cancelledID(data []byte, sdk string) (at, end int, ok bool) {
	var method string
	pAt, pEnd := -1, -1
	if !eachMemberAt(data, 0, func(key string, vAt, vEnd int) {
		switch key {
		case "method":
			method, _ = plaincall.String(data[vAt:vEnd])
		case "params":
			pAt, pEnd = vAt, vEnd
		}
	}) || method != "notifications/cancelled" || pAt < 0 {
		return 0, 0, false
	}
	at = -1
	if !eachMemberAt(data[:pEnd], pAt, func(key string, vAt, vEnd int) {
		if key == "requestId" {
			at, end = vAt, vEnd
		}
	}) || at < 0 {
		return 0, 0, false
	}
	v := data[at:end]
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) || !sameID(v, sdk) {
		return 0, 0, false
	}
	return at, end, true
}

// eachMemberAt calls fn with each member of the JSON object that starts
// at b[i] and ends b: its key as go-sdk's decoder reads it (escapes undone)
// and where its value is in b. It reports false if b from i is not such
// an object.
func eachMemberAt(b []byte, i int, fn func(key string, at, end int)) bool {
	return jsonscan.Members(b, i, func(k, kend, v, vend int) bool {
		var key string
		if json.Unmarshal(b[k:kend], &key) != nil {
			return false
		}
		fn(key, v, vend)
		return true
	})
}

// methodAndID returns the method and the id (as JSON) of the message
// data, or "".
func methodAndID(data []byte) (method, id string) {
	plaincall.EachMember(data, func(key, v []byte) bool {
		switch string(key) {
		case "method":
			method, _ = plaincall.String(v)
		case "id":
			id = string(v)
		}
		return true
	})
	return method, id
}

// translating returns body with the id of the call changed from the fast
// path's to go-sdk's in the messages that have it (idscan.go):
// each event of an event stream, or the whole body.
func (h *HandOff) translating(body io.ReadCloser, stream bool) io.ReadCloser {
	h.mu.Lock()
	sdk := h.sdk
	h.mu.Unlock()
	return &idTranslator{src: bufio.NewReaderSize(body, translateWindow), body: body, stream: stream, start: true, scan: idScanner{from: h.ours, to: sdk}}
}

// sameID reports whether v, a JSON value, is the id from (an integer, as
// JSON) in go-sdk's reading (wire.SameID: 7.0 and 7e0 are 7).
func sameID(v []byte, from string) bool {
	if string(v) == from {
		return true
	}
	n, err := strconv.ParseInt(from, 10, 64)
	if err != nil {
		return false
	}
	id, _ := jsonrpc.MakeID(float64(n))
	return wire.SameID(v, id)
}

// closeBody closes req's body, as a RoundTripper must, also on error.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
