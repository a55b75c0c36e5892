package mcpadapter

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// tapTransport is the innermost http.RoundTripper of a Client's HTTP
// connections. It shows JSON-RPC messages to the observer (for the protocol
// trace and for tool schemas as sent), marks requests that never left this
// machine so they can be retried, and records the status of the first POST
// so a legacy SSE server can be recognised.
type tapTransport struct {
	base http.RoundTripper
	obs  *observer
	// observe is false where messages are observed at the connection
	// instead (the SSE transport).
	observe bool
	// onStatus, if set, sees the method and status of every response.
	onStatus func(method string, status int)
}

func (t *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	watch := t.observe && t.obs.trace != nil
	if t.observe && req.Method == http.MethodPost && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			data, _ := readBody(body, req.ContentLength)
			_ = body.Close()
			if watch || bytes.Contains(data, []byte(`"tools/list"`)) {
				watch = true
				if msg, err := jsonrpc.DecodeMessage(data); err == nil {
					t.obs.Sent(msg, data)
				}
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		if isDialError(err) {
			return nil, &notSentError{err}
		}
		return nil, err
	}
	if t.onStatus != nil {
		t.onStatus(req.Method, resp.StatusCode)
	}
	if rec, ok := req.Context().Value(requestRecordKey{}).(*requestRecord); ok && req.Method == http.MethodPost {
		rec.status.Store(int32(resp.StatusCode))
	}
	if !watch || resp.StatusCode/100 != 2 || resp.Body == nil {
		return resp, nil
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseTap{ReadCloser: resp.Body, obs: t.obs}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonTap{ReadCloser: resp.Body, obs: t.obs}
	}
	return resp, nil
}

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
	obs  *observer
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
	obs     *observer
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
