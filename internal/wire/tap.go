package wire

import (
	"bytes"
	"errors"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Tap is the innermost http.RoundTripper of a client's HTTP connections.
// It shows JSON-RPC messages to the Observer (for the protocol trace and
// for tool schemas as sent), marks requests that never left this machine
// (a *NotSentError) so they can be retried, reports the status of every
// response, and fills in the RequestStatus a request's context carries
// (see TrackRequest): the status of its POST, the challenge of a 401 or
// 403, and the response kept with KeepResult.
type Tap struct {
	// Base makes the requests.
	Base http.RoundTripper
	// Observer sees the messages in request and response bodies when
	// Observe is set.
	Observer *Observer
	// Observe is false where messages are observed at the connection
	// instead (the SSE transport, with an ObservedTransport); results are
	// then kept there too.
	Observe bool
	// OnStatus, if set, sees the method and status of every response.
	OnStatus func(method string, status int)
	// MaxMessageBytes, if positive, bounds one message in a response
	// body: a JSON-RPC message over it becomes an error response to the
	// call it answers (see TooLargeText), and any other body fails its
	// read with a *BodyTooLargeError.
	MaxMessageBytes int
	// OnOversized, if set, is told of each message over MaxMessageBytes:
	// its size in bytes (at least) and whether a call was failed with it
	// (false: it was dropped, answering no call that could be found).
	OnOversized func(size int64, failedCall bool)
	// Marks, if set, are the connection's markers (internal/order): on
	// the event stream of a POST, a marker goes before a response that
	// follows a message from the server; on a resumed stream (a GET with
	// Last-Event-ID), before its first response.
	Marks *order.Marks
}

// RoundTrip makes the request with Base, observing it and its response.
func (t *Tap) RoundTrip(req *http.Request) (*http.Response, error) {
	watch := t.Observe && t.Observer.tracing()
	rs := requestStatus(req.Context())
	var keep *RequestStatus // the request whose response to keep
	callerReads := req.Context().Value(callerReadsKey{}) != nil
	if t.Observe && (!callerReads || watch) && req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := readBody(body, req.ContentLength)
			_ = body.Close()
			if rs != nil && rs.keep != "" {
				keep = keepFor(rs, data)
			}
			if rs != nil && !callerReads {
				// go-sdk's request, or its cancellation (the fast path's,
				// whose caller reads, Hold their session themselves).
				if written := watchPOST(rs, data); written != nil {
					defer written()
				}
			}
			if watch || bytes.Contains(data, []byte(`"tools/list"`)) {
				watch = true
				if msg, err := jsonrpc.DecodeMessage(data); err == nil {
					t.Observer.Sent(msg, data)
				}
			}
		}
	}
	if t.Observe && req.Method == http.MethodGet && rs != nil && rs.keep != "" {
		keep = rs // go-sdk resuming the stream of a call it sent
	}
	var drained *drain // nil: settle does nothing
	if !callerReads {
		req, drained = outlive(req)
	}
	resp, err := t.Base.RoundTrip(req)
	if err != nil {
		drained.settle(nil)
		if isDialError(err) {
			return nil, &NotSentError{Err: err}
		}
		return nil, err
	}
	drained.settle(resp)
	if t.OnStatus != nil {
		t.OnStatus(req.Method, resp.StatusCode)
	}
	if rs != nil && req.Method == http.MethodPost {
		rs.httpAnswer(resp)
	}
	if !callerReads { // the caller bounds what it reads
		t.limitBody(req, resp)
	}
	if (!watch && keep == nil) || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, nil
	}
	var obs *Observer
	if watch {
		obs = t.Observer
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTap{ReadCloser: resp.Body, obs: obs, keep: keep, marks: t.Marks}
	case strings.HasPrefix(ct, "application/json"):
		j := &jsonTap{ReadCloser: resp.Body, obs: obs, keep: keep}
		if resp.ContentLength > 0 && resp.ContentLength <= maxTapBytes {
			j.buf.grow(int(resp.ContentLength))
		}
		resp.Body = j
	}
	return resp, nil
}

// keepFor returns rs if the POST body data is the request whose result rs
// keeps, having recorded the request's id, and nil otherwise (go-sdk sends
// a call's cancellation with the call's context too).
func keepFor(rs *RequestStatus, data []byte) *RequestStatus {
	method, rawID := callOf(data)
	if rawID == nil || string(method) != `"`+rs.keep+`"` {
		return nil
	}
	id := parseID(rawID)
	if !id.IsValid() {
		return nil
	}
	rs.sent(id, nil)
	return rs
}

// NotSentError is a request that never reached the server: the connection
// to it could not be made. The request may be retried.
type NotSentError struct {
	Err error // the dial error
}

// Error returns the dial error's text.
func (e *NotSentError) Error() string { return e.Err.Error() }

// Unwrap returns the dial error.
func (e *NotSentError) Unwrap() error { return e.Err }

// readBody reads a request body of n bytes (zero or less: unknown, as for
// http.Request.ContentLength) in one allocation when n is known.
func readBody(body io.Reader, n int64) ([]byte, error) {
	if n <= 0 || n > maxTapBytes {
		return io.ReadAll(body)
	}
	data := make([]byte, n)
	k, err := io.ReadFull(body, data)
	return data[:k], err
}

// isDialError reports whether err happened before a connection to the
// server existed, so the server cannot have seen the request.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// maxTapBytes bounds what a tap keeps of one message.
const maxTapBytes = 64 << 20
