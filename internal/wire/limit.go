package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Size limits on HTTP responses.
//
// go-sdk v1.8.0 reads an application/json response body whole
// (io.ReadAll), and its streamable client gives no cap to a server-sent
// event unless told (MaxEventSize 0 means none there, despite its
// documentation); over the cap it fails the whole connection. A Tap with
// MaxMessageBytes set bounds every response body instead: a message over
// the limit is replaced by a JSON-RPC error response to the request it
// answers, so only that call fails, with the same text as a stdio server's
// oversized line, and the connection stays usable.

// TooLargeText is the message of the error that replaces a response of size
// bytes over limit. With exact false, size is a lower bound: the rest of
// the message was not read.
func TooLargeText(size int64, exact bool, limit int) string {
	more := ""
	if !exact {
		more = "more than "
	}
	return fmt.Sprintf("the tool's result was too large (%s%d bytes; the limit is %d bytes): ask for less data", more, size, limit)
}

// tooLargeResponse encodes the error response to id for an oversized
// message.
func tooLargeResponse(id jsonrpc.ID, size int64, exact bool, limit int) []byte {
	resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: TooLargeText(size, exact, limit),
	}}
	b, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		// Cannot happen: the id is valid and the error plain.
		return nil
	}
	return b
}

// BodyTooLargeError is the read error of an HTTP response body that is not
// a JSON-RPC message (an error page, OAuth metadata) and exceeds the limit.
type BodyTooLargeError struct {
	Limit int
}

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("the response body is larger than the %d-byte limit (ClientOptions.MaxMessageBytes)", e.Limit)
}

// limitBody replaces resp.Body with one that holds at most t.MaxMessageBytes
// of any message.
func (t *Tap) limitBody(req *http.Request, resp *http.Response) {
	limit := t.MaxMessageBytes
	if limit <= 0 || resp.Body == nil || resp.Body == http.NoBody {
		return
	}
	ct := resp.Header.Get("Content-Type")
	ok := resp.StatusCode/100 == 2
	switch {
	case ok && strings.HasPrefix(ct, "text/event-stream"):
		s := newSSELimit(resp.Body, limit, requestIDOf(req), t.OnOversized)
		switch {
		case req.Method == http.MethodPost:
			s.marks = t.Marks
			// A request's stream: its log messages are the request's
			// (a request no caller follows gets a stream of its own).
			s.stream = order.StreamsFrom(req.Context()).On(t.Marks)
		case req.Header.Get("Last-Event-ID") != "":
			// A resumed stream: its answer may follow messages the
			// stream it resumes carried. A call's (resumed with the
			// call's context) is still the call's; the standalone
			// stream resumed is no request's.
			s.marks, s.since = t.Marks, true
			if sp := order.StreamsFrom(req.Context()); sp != nil {
				s.stream = sp.On(t.Marks)
			}
		}
		resp.Body = s
	case ok && req.Method == http.MethodPost && strings.HasPrefix(ct, "application/json"):
		switch {
		case resp.ContentLength > int64(limit):
			_ = resp.Body.Close()
			body := oversizedJSON(requestIDOf(req), nil, resp.ContentLength, true, limit, t.OnOversized)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Del("Content-Length")
		case resp.ContentLength < 0:
			resp.Body = &jsonLimit{body: resp.Body, limit: limit, id: requestIDOf(req), onOversized: t.OnOversized}
		}
		// A known length within the limit: net/http delivers no more.
	case resp.ContentLength < 0 || resp.ContentLength > int64(limit):
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: int64(limit), limit: limit}
	}
}

// oversizedJSON returns the body that replaces an application/json
// response over the limit: an error response to the request's id, or, if
// that cannot be read, to the id found at the start of the response. With
// neither it returns an empty body (the connection then fails: there is no
// call to fail alone).
func oversizedJSON(reqID func() (jsonrpc.ID, bool), head []byte, size int64, exact bool, limit int, onOversized func(int64, bool)) []byte {
	var id jsonrpc.ID
	ok := false
	if reqID != nil {
		id, ok = reqID()
	}
	if !ok {
		var kind msgKind
		id, kind = responseID(head, nil)
		ok = kind == kindResponse
	}
	if onOversized != nil {
		onOversized(size, ok)
	}
	if !ok {
		return nil
	}
	return tooLargeResponse(id, size, exact, limit)
}

// jsonLimit is an application/json response body of unknown length. It
// reads up to the limit before handing anything on, so that a message over
// it can be replaced whole.
type jsonLimit struct {
	body        io.ReadCloser
	limit       int
	id          func() (jsonrpc.ID, bool)
	onOversized func(int64, bool)
	out         io.Reader // set by the first Read
}

func (j *jsonLimit) Read(p []byte) (int, error) {
	if j.out == nil {
		j.out = j.fill()
	}
	return j.out.Read(p)
}

func (j *jsonLimit) Close() error { return j.body.Close() }

// fill reads the body, up to one byte over the limit, and returns what to
// hand on.
func (j *jsonLimit) fill() io.Reader {
	blocks, n, err := readBlocks(j.body, int64(j.limit)+1)
	if n <= int64(j.limit) {
		rs := make([]io.Reader, 0, len(blocks)+1)
		for _, b := range blocks {
			rs = append(rs, bytes.NewReader(b))
		}
		if err != nil {
			rs = append(rs, errReader{err})
		}
		return io.MultiReader(rs...)
	}
	_ = j.body.Close() // the rest is not wanted
	var head []byte
	if len(blocks) > 0 {
		head = blocks[0][:min(len(blocks[0]), 256)]
	}
	return bytes.NewReader(oversizedJSON(j.id, head, n-1, false, j.limit, j.onOversized))
}

// readBlocks reads r until EOF, an error or max bytes, into blocks that
// grow from 32 KiB to 1 MiB, so that no block is copied as it grows. The
// error is nil at EOF or at max.
func readBlocks(r io.Reader, max int64) ([][]byte, int64, error) {
	var (
		blocks [][]byte
		n      int64
		size   = 32 << 10
	)
	for n < max {
		b := make([]byte, min(int64(size), max-n))
		k, err := io.ReadFull(r, b)
		if k > 0 {
			blocks = append(blocks, b[:k])
			n += int64(k)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return blocks, n, nil
		}
		if err != nil {
			return blocks, n, err
		}
		size = min(size*2, 1<<20)
	}
	return blocks, n, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// cappedBody fails the read that would take a body past the limit.
type cappedBody struct {
	io.ReadCloser
	left  int64
	limit int
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, err := c.ReadCloser.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, &BodyTooLargeError{Limit: c.limit}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// requestIDOf returns a function that reads the JSON-RPC id of req's body,
// a POST of one message; nil when req has no body to read again.
func requestIDOf(req *http.Request) func() (jsonrpc.ID, bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	return func() (jsonrpc.ID, bool) {
		body, err := req.GetBody()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		defer body.Close()
		id, kind := messageID(json.NewDecoder(body))
		return id, kind == kindRequest && id.IsValid()
	}
}

// msgKind says what an oversized message is, from what could be read of it.
type msgKind int

const (
	kindUnknown       msgKind = iota
	kindResponse              // it has an id and no method
	kindRequest               // it has a method: a request or a notification
	kindMaybeResponse         // it has an id, but its first bytes show no more
)

// messageID reads the top-level members of a JSON object from dec until it
// knows what the message is: the method makes it a request (or a
// notification, whose id is not valid), an id with a result or an error
// and no method a response. Input that ends early (the first bytes of a
// message) gives what was read by then.
func messageID(dec *json.Decoder) (jsonrpc.ID, msgKind) {
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return jsonrpc.ID{}, kindUnknown
	}
	var (
		id                  jsonrpc.ID
		hasID, hasMethod    bool
		hasResult, badValue bool
	)
	for dec.More() && !badValue {
		k, err := dec.Token()
		if err != nil {
			break
		}
		switch k {
		case "id":
			id, hasID = decodeID(dec)
			badValue = !hasID
		case "method":
			hasMethod = true
			var skip json.RawMessage
			badValue = dec.Decode(&skip) != nil
		default:
			hasResult = hasResult || k == "result" || k == "error"
			var skip json.RawMessage
			badValue = dec.Decode(&skip) != nil
		}
		if hasMethod && hasID || hasID && hasResult {
			break
		}
	}
	switch {
	case hasMethod:
		return id, kindRequest
	case hasID && hasResult:
		return id, kindResponse
	case hasID:
		return id, kindMaybeResponse
	}
	return jsonrpc.ID{}, kindUnknown
}

// decodeID decodes the value of an id member.
func decodeID(dec *json.Decoder) (jsonrpc.ID, bool) {
	var raw any
	if dec.Decode(&raw) != nil {
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
	if raw == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(raw)
	return id, err == nil && id.IsValid()
}

// tailID finds a top-level "id" member at the end of a JSON object.
var tailID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)

// responseID tells what an oversized message is from its first and last
// bytes, and finds its id if it is a response.
func responseID(head, tail []byte) (jsonrpc.ID, msgKind) {
	id, kind := messageID(json.NewDecoder(bytes.NewReader(head)))
	switch {
	case kind == kindResponse || kind == kindRequest:
		return id, kind
	case bytes.Contains(tail, []byte(`"method"`)):
		return jsonrpc.ID{}, kindRequest // a request or notification whose method comes last
	case kind == kindMaybeResponse:
		return id, kindResponse
	}
	m := tailID.FindSubmatch(tail)
	if m == nil {
		return jsonrpc.ID{}, kindUnknown
	}
	if id, ok := decodeID(json.NewDecoder(bytes.NewReader(m[1]))); ok {
		return id, kindResponse
	}
	return jsonrpc.ID{}, kindUnknown
}
