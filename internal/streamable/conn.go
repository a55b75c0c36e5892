package streamable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/mcpadapter/mcpadapter/internal/stdio"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// Session is what the fast path needs of the go-sdk session whose HTTP
// client it shares.
type Session interface {
	// ID is the session's Mcp-Session-Id, "" when it has none.
	ID() string
	// ProtocolVersion is the negotiated protocol version.
	ProtocolVersion() string
	// Life ends when the session is closed.
	Life() context.Context
	// Notices ends when closing the session stops waiting for its
	// requests (after Life): a cancellation notice of a call the close
	// ended still goes out until then.
	Notices() context.Context
	// Hold counts a request that closing the session waits for (a
	// cancellation notice sent in the background); release ends it.
	Hold() (release func())
}

// Conn is the fast path of one streamable HTTP session.
type Conn struct {
	// Client is the session's go-sdk transport's HTTP client.
	Client *http.Client
	// URL is the MCP endpoint.
	URL string
	// OAuth is go-sdk's transport's OAuth handler, or nil.
	OAuth auth.OAuthHandler
	// Limit is the size limit of one message (ClientOptions.MaxMessageBytes).
	Limit int
	// Log receives the debug records of hand-overs; nil discards them.
	Log *slog.Logger
	// Session is the go-sdk session, set once it is connected and before
	// the first RoundTrip.
	Session Session

	seq atomic.Int64 // the last id used, after stdio.FirstDirectID
	// drained is closed when the last stream read behind its answer
	// (drainRest) has been read: the next call waits for it before it
	// POSTs, so that it finds that connection free again instead of
	// opening another (a wait of at most wire.DrainGrace).
	drained atomic.Pointer[chan struct{}]
	// lingered is set when the last stream drained had to be given up
	// (the server kept it open for wire.DrainGrace): the next calls do
	// not wait for the streams before them, as go-sdk does not, until one
	// ends by itself again.
	lingered atomic.Bool
}

// maxFastMessage bounds the answer the fast path reads: a bigger one (or
// one over Conn.Limit) is handed over to go-sdk, whose cost per call is
// then small beside the answer's, and the Tap bounds it there, so that the
// client never holds much more than the limit.
const maxFastMessage = 1 << 20

// cancelNotifyTimeout bounds a cancellation notice (go-sdk's
// notifyCancellationTimeout).
const cancelNotifyTimeout = 5 * time.Second

// RoundTrip POSTs the plain call of the tool name with args, one JSON
// object, and meta, its _meta (nil for none), and returns the result as
// sent. When the answer is not plain (see the package doc) it returns a
// HandOff instead: the caller makes the call through go-sdk with
// WithHandOff(ctx, h) and then calls h.Close. A HandOff may hold no
// response (the request could not be made here): go-sdk then sends the
// call itself. Otherwise the error is what go-sdk's CallTool would return.
func (c *Conn) RoundTrip(ctx context.Context, name string, args, meta []byte) (json.RawMessage, *HandOff, error) {
	n := stdio.FirstDirectID + c.seq.Add(1)
	body := plaincall.AppendCall(make([]byte, 0, 128+len(args)+len(meta)+len(name)), n, name, args, meta)
	// The request's context ends with ctx until the answer is read (the
	// rest of an event stream is then read behind it: drainRest), when its
	// body is closed, or when that rest takes too long.
	rctx, stop := context.WithCancel(context.WithoutCancel(wire.CallerReads(ctx)))
	unhook := context.AfterFunc(ctx, stop)
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err == nil {
		err = c.headers(req.Header, "tools/call", name)
	}
	if err != nil {
		unhook()
		stop()
		// go-sdk's path fails the same way, or does not.
		return nil, &HandOff{}, nil
	}
	if d := c.drained.Load(); d != nil && !c.lingered.Load() {
		select {
		case <-*d:
		case <-ctx.Done():
		}
	}
	if ctx.Err() != nil {
		// Nothing was sent, so there is nothing to cancel: go-sdk's path
		// tells the server of no request it never wrote.
		unhook()
		stop()
		return nil, nil, ctx.Err()
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		unhook()
		stop()
		if ctx.Err() != nil {
			c.cancel(ctx, n)
			return nil, nil, ctx.Err()
		}
		// What go-sdk's call returns for a failed POST.
		return nil, nil, fmt.Errorf("calling %q: sending %q: %w: %w", "tools/call", "tools/call", sdkerr.NewRejected(), err)
	}
	a := fastAnswer{id: n, body: resp.Body, limit: min(c.Limit, maxFastMessage), stop: stop}
	if resp.StatusCode == http.StatusOK && c.sameSession(resp) {
		switch mediaTypeOf(resp) {
		case "application/json":
			a.readJSON(resp.ContentLength, a.limit)
		case "text/event-stream":
			a.readSSE(a.limit)
		}
	}
	switch {
	case a.result != nil && plaincall.AsksInput(a.result):
		// The client's multi-round-trip loop answers the input requests
		// and retries, in go-sdk's call: it starts from this answer,
		// handed over below.
		a.result = nil
	case a.result != nil || a.err != nil:
		unhook()
		if a.eof {
			_ = resp.Body.Close()
			stop()
		} else {
			// The rest of the stream is read behind the answer, as
			// go-sdk does: a server may keep it open.
			done := make(chan struct{})
			c.drained.Store(&done)
			go c.drainRest(resp.Body, stop, c.Session.Hold(), done)
		}
		return a.result, nil, a.err
	case a.readErr != nil && ctx.Err() != nil:
		_ = resp.Body.Close()
		stop()
		c.cancel(ctx, n)
		return nil, nil, ctx.Err()
	}
	if c.Log != nil {
		c.Log.Debug("the server's answer is not plain; handing the call over to go-sdk", "tool", name, "status", resp.StatusCode)
	}
	h := newHandOff(resp, &a)
	h.conn = c
	return nil, h, nil
}

// headers sets the headers go-sdk v1.8.0's streamable client sets on a
// request for method (its Write, setMCPHeaders and setStandardHeaders);
// name is the tool's, for a tools/call.
func (c *Conn) headers(h http.Header, method, name string) error {
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if c.OAuth != nil {
		// go-sdk asks the handler's token source for every request.
		ts, err := c.OAuth.TokenSource(c.Session.Life())
		if err != nil {
			return err
		}
		if ts != nil {
			tok, err := ts.Token()
			var re *oauth2.RetrieveError
			switch {
			case err == nil && tok != nil:
				h["Authorization"] = []string{"Bearer " + tok.AccessToken}
			case err != nil && (!errors.As(err, &re) || re.ErrorCode != "invalid_grant"):
				return err
			}
		}
	}
	v := c.Session.ProtocolVersion()
	h["Mcp-Protocol-Version"] = []string{v}
	if id := c.Session.ID(); id != "" {
		h["Mcp-Session-Id"] = []string{id}
	}
	if wire.DiscoverEra(v) {
		h["Mcp-Method"] = []string{method}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
	}
	return nil
}

// sameSession reports whether resp carries no session id or the
// session's: go-sdk takes a first session id, or fails on another.
func (c *Conn) sameSession(resp *http.Response) bool {
	id := resp.Header.Get("Mcp-Session-Id")
	return id == "" || id == c.Session.ID()
}

// mediaTypeOf returns resp's media type, without parameters.
func mediaTypeOf(resp *http.Response) string {
	ct := resp.Header.Get("Content-Type")
	switch ct {
	case "application/json", "text/event-stream":
		return ct
	}
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}

// cancel tells the server, in the background, that the call with id n is
// no longer awaited, as go-sdk does for its own calls in both eras. The
// notice is held by the session (Session.Hold), whose closing waits for it
// (within its grace: a call the close ended is told of too) and then ends
// it.
func (c *Conn) cancel(ctx context.Context, n int64) {
	reason := ctx.Err().Error()
	release := c.Session.Hold()
	go func() {
		defer release()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
		defer cancel()
		// Closing the session ends it too, once the close stops waiting
		// for its requests (this one among them).
		defer context.AfterFunc(c.Session.Notices(), cancel)()
		params, _ := json.Marshal(&mcp.CancelledParams{Reason: reason, RequestID: n})
		body, _ := json.Marshal(&struct {
			JSONRPC string          `json:"jsonrpc"`
			Method  string          `json:"method"`
			Params  json.RawMessage `json:"params"`
		}{"2.0", "notifications/cancelled", params})
		req, err := http.NewRequestWithContext(wire.CallerReads(nctx), http.MethodPost, c.URL, bytes.NewReader(body))
		if err != nil || c.headers(req.Header, "notifications/cancelled", "") != nil {
			return
		}
		resp, err := c.Client.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}()
}

// fastAnswer reads the answer to the call with id from body.
type fastAnswer struct {
	id      int64
	body    io.Reader
	buf     []byte // what was read of the body
	pos     int    // where the next line starts, in an event stream
	limit   int    // the biggest message read (see maxFastMessage)
	eof     bool
	readErr error  // the error that ended the read, other than io.EOF
	stop    func() // if set, ends the request (see readSSE)

	result json.RawMessage // the answer's result
	err    error           // the answer's error
}

// readJSON reads an application/json body of n bytes (negative: unknown)
// whose only message is the answer, of at most limit bytes.
func (a *fastAnswer) readJSON(n int64, limit int) {
	if n > int64(limit) {
		return
	}
	if n >= 0 {
		// One byte more than said: the read ends at the body's end.
		a.buf = make([]byte, n+1)
		k, err := io.ReadFull(a.body, a.buf)
		a.buf = a.buf[:k]
		switch err {
		case io.ErrUnexpectedEOF, io.EOF:
			a.eof = true
		case nil: // more than it said
		default:
			a.readErr = err
			return
		}
	}
	for !a.eof && a.readErr == nil && len(a.buf) <= limit {
		a.readErr = a.fill()
	}
	if a.eof && a.readErr == nil && len(a.buf) <= limit {
		a.answer(a.buf)
	}
}

// fill reads more of the body into buf.
func (a *fastAnswer) fill() error {
	if len(a.buf) == cap(a.buf) {
		// Within the size limit, or a bit over it (to know it is over).
		nb := make([]byte, len(a.buf), max(1024, min(2*cap(a.buf), a.pos+a.limit+4096)))
		copy(nb, a.buf)
		a.buf = nb
	}
	k, err := a.body.Read(a.buf[len(a.buf):cap(a.buf)])
	a.buf = a.buf[:len(a.buf)+k]
	if err == io.EOF {
		a.eof = true
		return nil
	}
	return err
}

// line returns the next line of an event stream, without its end of
// line, and false when the stream ends (or fails: readErr) first, or the
// line is longer than limit.
func (a *fastAnswer) line(limit int) ([]byte, bool) {
	for {
		if i := bytes.IndexByte(a.buf[a.pos:], '\n'); i >= 0 {
			l := a.buf[a.pos : a.pos+i]
			a.pos += i + 1
			return bytes.TrimRight(l, "\r"), true
		}
		if a.eof {
			if a.pos < len(a.buf) {
				// The last line, without its end.
				l := a.buf[a.pos:]
				a.pos = len(a.buf)
				return bytes.TrimRight(l, "\r"), true
			}
			return nil, false
		}
		if a.readErr != nil || (limit > 0 && len(a.buf)-a.pos > limit) {
			return nil, false
		}
		a.readErr = a.fill()
	}
}

// readSSE reads an event stream until the answer, skipping the events
// go-sdk skips (no data; a name other than "message"), and then to its
// end. It stops at anything else (another message, a malformed line, an
// event of several data lines or over limit bytes, the end of the
// stream), leaving the call to go-sdk.
//
// What it holds is bounded by limit whatever the server sends: a skipped
// event is kept for the replay of a hand-over only as what go-sdk takes
// from it (its id and retry lines, the last of each over a run of skipped
// events), and an event over limit bytes, comments included, is handed
// over at once (go-sdk then finds it too large, as on its own path).
func (a *fastAnswer) readSSE(limit int) {
	stub := -1 // where the kept lines of the skipped events just before begin
	var idLine, retryLine []byte
	for {
		var data []byte
		start := a.pos
		ndata, message := 0, true
		var evID, evRetry []byte
		for {
			l, ok := a.line(limit)
			if !ok || a.pos-start > limit {
				return
			}
			if len(l) == 0 {
				break
			}
			key, value, found := bytes.Cut(l, []byte{':'})
			if !found {
				return // go-sdk fails the connection
			}
			switch string(key) {
			case "data":
				ndata++
				data = bytes.TrimSpace(value)
			case "event":
				name := bytes.TrimSpace(value)
				message = len(name) == 0 || string(name) == "message"
			case "id":
				if len(bytes.TrimSpace(value)) > 0 {
					evID = l
				}
			case "retry":
				evRetry = l
			}
		}
		if ndata > 1 {
			return
		}
		if len(data) == 0 || !message {
			if stub < 0 {
				stub = start
			}
			if evID != nil {
				idLine = append(idLine[:0], evID...)
			}
			if evRetry != nil {
				retryLine = append(retryLine[:0], evRetry...)
			}
			a.keepOnly(stub, idLine, retryLine)
			continue
		}
		// The caller drains the rest of the stream (drain), or hands it
		// over.
		a.answer(data)
		return
	}
}

// keepOnly replaces what was read of the stream from buf[at] to pos (the
// skipped events) with one event of idLine and retryLine, or nothing.
func (a *fastAnswer) keepOnly(at int, idLine, retryLine []byte) {
	var ev []byte
	if len(idLine) > 0 || len(retryLine) > 0 {
		ev = make([]byte, 0, len(idLine)+len(retryLine)+3)
		if len(idLine) > 0 {
			ev = append(append(ev, idLine...), '\n')
		}
		if len(retryLine) > 0 {
			ev = append(append(ev, retryLine...), '\n')
		}
		ev = append(ev, '\n')
	}
	rest := len(a.buf) - a.pos
	if at+len(ev) > a.pos {
		return // no shorter (never the case: ev is made of the events' lines)
	}
	copy(a.buf[at:], ev)
	copy(a.buf[at+len(ev):], a.buf[a.pos:])
	a.pos = at + len(ev)
	a.buf = a.buf[:a.pos+rest]
}

// drainRest reads the rest of body, as go-sdk does, so that the
// connection can be used again, and then closes it and calls stop (which
// ends the request). A stream the server keeps open after the answer is
// read at most wire.DrainGrace (the connection is then dropped, and
// c.lingered set), or until the session's life ends; release ends the
// hold that lets closing the session wait for this; done is closed at
// the end.
func (c *Conn) drainRest(body io.ReadCloser, stop, release func(), done chan struct{}) {
	defer close(done)
	defer release()
	t := time.AfterFunc(wire.DrainGrace, stop)
	defer t.Stop()
	defer context.AfterFunc(c.Session.Life(), stop)()
	_, err := io.Copy(io.Discard, body)
	c.lingered.Store(err != nil)
	_ = body.Close()
	stop()
}

// answer takes msg when it is the answer in its common form: valid JSON,
// an object with "jsonrpc": "2.0", the call's id and a result object or an error,
// and no other member. The error of an error answer is go-sdk's decoding
// of it.
func (a *fastAnswer) answer(msg []byte) bool {
	var version, id, result, rpcErr []byte
	n := 0
	ok := plaincall.EachMember(msg, func(key, v []byte) bool {
		n++
		switch string(key) {
		case "jsonrpc":
			version = v
		case "id":
			id = v
		case "result":
			result = v
		case "error":
			rpcErr = v
		default:
			return false
		}
		return true
	})
	if !ok || n != 3 || string(version) != `"2.0"` || string(id) != strconv.FormatInt(a.id, 10) || !json.Valid(msg) {
		return false // go-sdk's decoder says what it is
	}
	switch {
	case len(result) > 0 && result[0] == '{':
		a.result = result
		return true
	case len(rpcErr) > 0 && rpcErr[0] == '{':
		m, err := jsonrpc.DecodeMessage(msg)
		resp, isResp := m.(*jsonrpc.Response)
		if err != nil || !isResp || resp.Error == nil {
			return false
		}
		a.err = fmt.Errorf("calling %q: %w", "tools/call", resp.Error)
		return true
	}
	return false
}
