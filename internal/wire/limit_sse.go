package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// sseLimit is a server-sent event stream whose events are bounded: an
// event is handed on whole once its blank line arrives, or, if its lines
// exceed the limit, replaced by an event carrying an error response to the
// message's id (a response read from its first or last bytes, else the
// POST's own request) and dropped when it is not a response. Nothing over
// the limit is held: the rest of an oversized event is read and discarded.
type sseLimit struct {
	body        io.ReadCloser
	r           *bufio.Reader
	limit       int
	reqID       func() (jsonrpc.ID, bool) // nil for a GET stream
	onOversized func(size int64, failedCall bool)
	// marks, set on a POST's stream and a resumed one, are the
	// connection's markers: one goes before a response that follows a
	// message from the server in the stream since the last
	// (internal/order), or in the stream a resumed one resumes.
	marks *order.Marks
	since bool // a message from the server came since the last marker
	// stream, on a request's stream (a POST's, or one resuming it), is
	// the request's: the server's log messages read on it are tagged
	// with it (tagLog); zero on the standalone stream.
	stream   order.Stream
	tagged   []byte // a tagged message, while its event is made
	data     []byte // an event's data lines joined, when it has several
	answered bool   // a response came: no marker any more

	out    []byte // ready for Read
	outOff int
	err    error // returned once out is drained

	ev        []byte // the current event's lines, while within the limit
	size      int64  // bytes of the current event's lines
	over      bool   // the current event is over the limit
	lineStart bool   // the next chunk starts a line
	line      lineKind
	head      []byte // an oversized event's first data bytes
	tail      []byte // and its last
	fields    []byte // and its id, event and retry lines, if small
	fieldAt   int    // where the current field line starts in fields
}

type lineKind int

const (
	lineOther lineKind = iota
	lineData
	lineField // id, event or retry
)

// sseChunkBytes is the read buffer of an sseLimit, and the least an event's
// buffer starts with: a POST's stream usually carries one small event, and
// its buffers, made per response, are most of what the limit costs a call.
const sseChunkBytes = 512

// keepBytes is how much of an oversized message is kept to find its id;
// maxFieldBytes bounds the id, event and retry lines kept with it.
const (
	keepBytes     = 256
	maxFieldBytes = 1024
)

func newSSELimit(body io.ReadCloser, limit int, reqID func() (jsonrpc.ID, bool), onOversized func(int64, bool)) *sseLimit {
	return &sseLimit{
		body:        body,
		r:           bufio.NewReaderSize(body, sseChunkBytes), // longer lines are read in chunks
		limit:       limit,
		reqID:       reqID,
		onOversized: onOversized,
		lineStart:   true,
	}
}

func (s *sseLimit) Read(p []byte) (int, error) {
	for s.outOff == len(s.out) {
		if s.err != nil {
			return 0, s.err
		}
		if cap(s.out) > 1<<20 {
			s.out = nil // let a big event go once it is handed on
		}
		s.out, s.outOff = s.out[:0], 0
		s.step()
	}
	n := copy(p, s.out[s.outOff:])
	s.outOff += n
	return n, nil
}

func (s *sseLimit) Close() error { return s.body.Close() }

// step reads one chunk of a line and handles it.
func (s *sseLimit) step() {
	chunk, err := s.r.ReadSlice('\n')
	full := errors.Is(err, bufio.ErrBufferFull)
	start := s.lineStart
	s.lineStart = !full
	if start && !full && isBlankLine(chunk) {
		s.endEvent(chunk)
	} else if len(chunk) > 0 {
		s.add(chunk, start)
	}
	if err != nil && !full {
		if s.size > 0 {
			s.endEvent(nil) // go-sdk takes an unterminated last event too
		}
		s.err = err
	}
}

// isBlankLine reports whether b, a whole line, ends an event as go-sdk
// reads it: nothing but carriage returns before its line feed.
func isBlankLine(b []byte) bool {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return false
	}
	for _, c := range b[:len(b)-1] {
		if c != '\r' {
			return false
		}
	}
	return true
}

// add takes one chunk of a line of the current event.
func (s *sseLimit) add(chunk []byte, start bool) {
	s.size += int64(len(chunk))
	if s.over {
		s.keep(chunk, start)
		return
	}
	if s.size <= int64(s.limit) {
		s.ev = appendWithin(s.ev, chunk, s.limit)
		return
	}
	// Over: keep what identifies the message and let the rest go.
	s.over = true
	ev := s.ev
	s.ev = nil
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
		}
		s.keep(line, true)
	}
	s.keep(chunk, start)
}

// appendWithin appends chunk to b, growing b by doubling but never past
// limit bytes (which len(b)+len(chunk) does not exceed).
func appendWithin(b, chunk []byte, limit int) []byte {
	if need := len(b) + len(chunk); need > cap(b) {
		grown := make([]byte, len(b), min(max(2*cap(b), need, sseChunkBytes), max(limit, need)))
		copy(grown, b)
		b = grown
	}
	return append(b, chunk...)
}

// keep notes the parts of an oversized event's chunk that identify its
// message.
func (s *sseLimit) keep(chunk []byte, start bool) {
	if start {
		s.line = lineOther
		switch {
		case bytes.HasPrefix(chunk, []byte("data:")):
			s.line = lineData
			chunk = bytes.TrimPrefix(chunk[len("data:"):], []byte(" "))
			if len(s.head) > 0 && len(s.head) < keepBytes {
				s.head = append(s.head, '\n')
			}
		case bytes.HasPrefix(chunk, []byte("id:")) || bytes.HasPrefix(chunk, []byte("event:")) || bytes.HasPrefix(chunk, []byte("retry:")):
			s.line = lineField
			s.fieldAt = len(s.fields)
		}
	}
	switch s.line {
	case lineData:
		if n := keepBytes - len(s.head); n > 0 {
			s.head = append(s.head, chunk[:min(n, len(chunk))]...)
		}
		if len(chunk) >= keepBytes {
			s.tail = append(s.tail[:0], chunk[len(chunk)-keepBytes:]...)
		} else {
			s.tail = append(s.tail, chunk...)
			s.tail = s.tail[:copy(s.tail, s.tail[max(0, len(s.tail)-keepBytes):])]
		}
	case lineField:
		if len(s.fields)+len(chunk) <= maxFieldBytes {
			s.fields = append(s.fields, chunk...)
		} else {
			s.fields = s.fields[:s.fieldAt] // too long to keep: drop the line
			s.line = lineOther
		}
	}
}

// endEvent hands on the current event, or what replaces it, followed by
// blank, the line that ended it.
func (s *sseLimit) endEvent(blank []byte) {
	// Read calls step, which calls this, only when out is empty.
	if s.over {
		s.out = append(s.out[:0], s.replacement()...)
		s.answered = s.answered || len(s.out) > 0 // an error response for the call
	} else if s.marks != nil && !s.answered {
		s.endMarked(blank)
	} else {
		s.out, s.ev = append(s.ev, blank...), s.out[:0]
	}
	s.ev = s.ev[:0]
	s.size, s.over = 0, false
	s.head, s.tail, s.fields = s.head[:0], s.tail[:0], s.fields[:0]
}

// replacement returns the event that stands for an oversized one: its id,
// event and retry lines and an error response for its call, or nothing
// when it answers no call.
func (s *sseLimit) replacement() []byte {
	id, kind := responseID(s.head, bytes.TrimRight(s.tail, "\r\n"))
	ok := kind == kindResponse
	if kind == kindUnknown && s.reqID != nil {
		// On a POST's stream, a message that is not a request is taken
		// to be the answer to the POST.
		id, ok = s.reqID()
	}
	if s.onOversized != nil {
		s.onOversized(s.size, ok)
	}
	if !ok {
		return nil
	}
	var b []byte
	b = append(b, s.fields...)
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n') // a last line cut by the end of the stream
	}
	b = append(b, "data: "...)
	b = append(b, tooLargeResponse(id, s.size, true, s.limit)...)
	return append(b, "\n\n"...)
}

// endMarked hands on the current event, whole within the limit, of a
// stream with markers, before its first response: after a marker when it
// needs one (mark), and, when it is a log message of the server's on a
// request's stream, tagged with that stream (tagLog).
func (s *sseLimit) endMarked(blank []byte) {
	var data []byte
	data, s.data = eventData(s.ev, s.data[:0])
	marker, sd := s.mark(data)
	tagged := false
	if sd == fromServer && !s.stream.IsZero() {
		s.tagged, tagged = tagLog(s.tagged[:0], data, s.stream)
	}
	out := s.out[:0]
	if marker {
		out = s.marks.AppendEvent(out)
	}
	switch {
	case tagged:
		// The event grows by the tag, and by a space on each data line
		// that had none after its colon.
		out = slices.Grow(out, len(s.ev)+len(s.tagged)-len(data)+bytes.Count(s.tagged, []byte{'\n'})+2+len(blank))
		s.out = append(appendTaggedEvent(out, s.ev, s.tagged), blank...)
	case marker:
		s.out = append(append(out, s.ev...), blank...)
	default:
		s.out, s.ev = append(s.ev, blank...), s.out[:0]
	}
}

// mark reports whether the current event, whose data is data, needs a
// marker before it, and whose message it is: it is the stream's first response, and a message
// from the server came in the stream since the last marker. An event that
// is a message from the server is noted. The events after the first
// response get none: a POST's stream answers one request, and its reader
// (go-sdk, the fast path) drains what follows the answer unread, so a
// marker there would never be reached.
func (s *sseLimit) mark(data []byte) (bool, side) {
	if data == nil {
		return false, sideUnknown
	}
	sd := messageSide(data)
	switch sd {
	case fromServer:
		s.since = true
		return false, sd
	case answer:
		s.answered = true
		if !s.since {
			return false, sd
		}
	default:
		return false, sd
	}
	s.since = false
	return true, sd
}

// eventData returns the data of ev, an event's lines, as go-sdk reads it:
// the value of its one data line (as go-sdk's servers write a message),
// or of its data lines joined by line feeds, appended to joined, which it
// returns too; nil when ev has no data or is of a type go-sdk skips.
func eventData(ev, joined []byte) (data, buf []byte) {
	lines, other := 0, false
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		if bytes.HasPrefix(line, []byte("event:")) {
			other = !isMessageEvent(bytes.TrimSpace(line[len("event:"):]))
			continue
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			continue
		}
		v := bytes.TrimSpace(line[len("data:"):])
		switch lines++; lines {
		case 1:
			data = v
			continue
		case 2:
			joined = append(joined, data...)
		}
		joined = append(append(joined, '\n'), v...)
	}
	switch {
	case other:
		data = nil
	case lines > 1:
		data = joined
	}
	return data, joined
}

// isMessageEvent reports whether an event of type name carries a message
// go-sdk reads: no other type than message.
func isMessageEvent(name []byte) bool {
	return len(name) == 0 || string(name) == "message"
}

// side says who a message is from: a request or notification of the
// server's, or a response (an answer to the client's request).
type side int

const (
	sideUnknown side = iota
	fromServer
	answer
)

// messageSide tells, from the first member name that decides (method,
// result or error), which a JSON-RPC message usually has near its start,
// whether msg is the server's request or notification or a response,
// without looking at a value. A message with none of them is a response
// when it has an id, as go-sdk reads it.
func messageSide(msg []byte) side {
	var sd side
	id := false
	walkObject(msg, func(k []byte) bool {
		switch string(k) {
		case "method":
			sd = fromServer
		case "result", "error":
			sd = answer
		case "id":
			id = true
		}
		return sd == sideUnknown
	}, nil)
	if sd == sideUnknown && id {
		sd = answer
	}
	return sd
}
