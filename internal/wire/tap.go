package wire

import (
	"bytes"
	"errors"
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
// response, and records the status of a request's POST in the
// RequestStatus its context carries (see TrackRequest).
type Tap struct {
	// Base makes the requests.
	Base http.RoundTripper
	// Observer sees the messages in request and response bodies when
	// Observe is set.
	Observer *Observer
	// Observe is false where messages are observed at the connection
	// instead (the SSE transport, with an ObservedTransport).
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
}

// RoundTrip makes the request with Base, observing it and its response.
func (t *Tap) RoundTrip(req *http.Request) (*http.Response, error) {
	watch := t.Observe && t.Observer.tracing()
	if t.Observe && req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := readBody(body, req.ContentLength)
			_ = body.Close()
			if watch || bytes.Contains(data, []byte(`"tools/list"`)) {
				watch = true
				if msg, err := jsonrpc.DecodeMessage(data); err == nil {
					t.Observer.Sent(msg, data)
				}
			}
		}
	}
	resp, err := t.Base.RoundTrip(req)
	if err != nil {
		if isDialError(err) {
			return nil, &NotSentError{Err: err}
		}
		return nil, err
	}
	if t.OnStatus != nil {
		t.OnStatus(req.Method, resp.StatusCode)
	}
	if rs := requestStatus(req.Context()); rs != nil && req.Method == http.MethodPost {
		rs.status.Store(int32(resp.StatusCode))
	}
	t.limitBody(req, resp)
	if !watch || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, nil
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTap{ReadCloser: resp.Body, obs: t.Observer}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonTap{ReadCloser: resp.Body, obs: t.Observer}
	}
	return resp, nil
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

// jsonTap observes a JSON response body as it is read.
type jsonTap struct {
	io.ReadCloser
	obs  *Observer
	buf  bytes.Buffer
	done bool
}

func (j *jsonTap) Read(p []byte) (int, error) {
	n, err := j.ReadCloser.Read(p)
	if !j.done && j.buf.Len()+n <= maxTapBytes {
		j.buf.Write(p[:n])
	} else {
		j.done = true
	}
	if err == io.EOF && !j.done {
		j.done = true
		if msg, derr := jsonrpc.DecodeMessage(j.buf.Bytes()); derr == nil {
			j.obs.Received(msg, j.buf.Bytes())
		}
	}
	return n, err
}

// sseTap observes the messages of a server-sent event stream as it is read.
type sseTap struct {
	io.ReadCloser
	obs     *Observer
	line    []byte
	data    []byte
	tooLong bool
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.feed(p[:n])
	return n, err
}

func (s *sseTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.appendLine(b)
			return
		}
		s.appendLine(b[:i])
		s.endLine()
		b = b[i+1:]
	}
}

func (s *sseTap) appendLine(b []byte) {
	if len(s.line)+len(b) > maxTapBytes {
		s.tooLong = true
		return
	}
	s.line = append(s.line, b...)
}

func (s *sseTap) endLine() {
	line := bytes.TrimSuffix(s.line, []byte("\r"))
	s.line = s.line[:0]
	switch {
	case len(line) == 0:
		if len(s.data) > 0 && !s.tooLong {
			if msg, err := jsonrpc.DecodeMessage(s.data); err == nil {
				s.obs.Received(msg, s.data)
			}
		}
		s.data = s.data[:0]
		s.tooLong = false
	case bytes.HasPrefix(line, []byte("data:")):
		d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, d...)
	}
}
