package streamable

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
)

// Translating the call's id in what the server sends for a call handed
// over to go-sdk (handoff.go): the top-level "id" member of each
// response, wherever it is in the message (after a 100 KiB result too) and
// however an event stream splits the message over data lines (go-sdk
// joins them with newlines), with its key and value in any form go-sdk's
// decoder reads as the fast path's id: keys are matched as go-sdk matches
// them, exactly after undoing escapes ("\u0069d" is the id, "ID" is not),
// and values by sameID. A message with a top-level "method" is a request
// or notification of the server, whose ids are its own: it is never
// changed. The scan holds the id's text and, when the id comes before the
// message says whether it has a method, the message's rest up to
// maxPending bytes.

// idState is where an idScanner is in a message.
type idState uint8

const (
	idStart  idState = iota // before the message's '{'
	idOff                   // not an object, or after it: nothing to change
	idKey                   // in the object, before a member's key
	idKeyStr                // in a member's key
	idColon                 // after a key
	idValue                 // after a key's colon
	idNum                   // in the value of "id", a number: held
	idOther                 // in another value (or after one)
)

// maxIDText bounds the id's text the scanner holds: a longer number is
// not the fast path's id (go-sdk reads it as a float64 of the same value
// only if it is an absurd spelling of it, which is passed on untranslated).
const maxIDText = 400

// maxKeyText bounds the text of a key the scanner keeps: "id" spelled
// with escapes is at most 12 bytes ("\u0069\u0064"), "method" 36.
const maxKeyText = 40

// maxPending bounds the rest of a message held after the call's id while
// it is not known whether the message is a request: a longer one is taken
// for the call's answer (a server request with the call's id and a method
// after 1 MiB of params is then given go-sdk's id).
const maxPending = 1 << 20

// idScanner changes the top-level id of a JSON response from from to to,
// fed in pieces.
type idScanner struct {
	from, to string
	st       idState
	depth    int  // in idOther: how deep in the value
	inStr    bool // in idOther or idKeyStr: in a string
	esc      bool // after a backslash in a string
	key      [maxKeyText]byte
	keyLen   int  // bytes of the key's text
	keyEsc   bool // the key has an escape
	isID     bool // the value after idColon is the id's
	sawID    bool // the message has a top-level "id"
	method   bool // the message has a top-level "method"
	hold     []byte
	// pending is set while the call's id (or go-sdk's) was found and the
	// message may still turn out to be a request: idText is the id as
	// sent, repl what it becomes in a response, pend what follows it.
	pending bool
	idText  []byte
	repl    string
	pend    []byte
}

// reset starts a new message; a message still pending ends there.
func (s *idScanner) reset(out []byte) []byte {
	out = s.flush(out)
	out = s.resolve(out, true)
	*s = idScanner{from: s.from, to: s.to, hold: s.hold[:0], idText: s.idText[:0], pend: s.pend[:0]}
	return out
}

// emit appends b to out, or holds it while the message is pending.
func (s *idScanner) emit(out, b []byte) []byte {
	if s.pending {
		s.pend = append(s.pend, b...)
		if len(s.pend) > maxPending {
			return s.resolve(out, true)
		}
		return out
	}
	return append(out, b...)
}

// resolve ends a pending message: with to as its id if answer, else as it
// was.
func (s *idScanner) resolve(out []byte, answer bool) []byte {
	if !s.pending {
		return out
	}
	s.pending = false
	if answer {
		out = append(out, s.repl...)
	} else {
		out = append(out, s.idText...)
	}
	out = append(out, s.pend...)
	s.idText, s.pend = s.idText[:0], s.pend[:0]
	return out
}

// flush ends a held number: the call's id (pending until the message says
// whether it is a request), or as it was.
func (s *idScanner) flush(out []byte) []byte {
	if s.st != idNum {
		return out
	}
	s.st = idOther
	// The two ids trade places: the call's becomes go-sdk's, and go-sdk's
	// own id for the call, which the server never saw, becomes the call's,
	// which go-sdk does not know (a response with it answers nothing, as
	// on go-sdk's path a response with an id other than the call's).
	repl := ""
	switch {
	case s.method:
	case sameID(s.hold, s.from):
		repl = s.to
	case sameID(s.hold, s.to):
		repl = s.from
	}
	switch {
	case repl == "":
		out = s.emit(out, s.hold)
	case s.pending:
		// A second "id" member: go-sdk reads the last.
		out = s.resolve(out, false)
		fallthrough
	default:
		s.pending = true
		s.idText = append(s.idText[:0], s.hold...)
		s.repl = repl
	}
	s.hold = s.hold[:0]
	return out
}

// feed scans in, appending it, translated, to out.
func (s *idScanner) feed(out, in []byte) []byte {
	for i, c := range in {
		if s.st == idOff && !s.pending {
			return append(out, in[i:]...)
		}
		if s.st == idNum {
			if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				if s.hold = append(s.hold, c); len(s.hold) > maxIDText {
					out = s.emit(out, s.hold)
					s.hold, s.st = s.hold[:0], idOther
				}
				continue
			}
			out = s.flush(out)
		}
		wasOff := s.st == idOff
		s.step(c)
		if s.st == idNum {
			s.hold = append(s.hold, c)
			continue
		}
		out = s.emit(out, in[i:i+1])
		if s.method && s.pending {
			out = s.resolve(out, false)
		}
		if s.st == idOff && !wasOff && s.pending {
			// The message's end: it has no method.
			out = s.resolve(out, true)
		}
	}
	return out
}

// step moves the scanner past c (not in a held number).
func (s *idScanner) step(c byte) {
	space := c == ' ' || c == '\t' || c == '\n' || c == '\r'
	switch s.st {
	case idStart:
		switch {
		case c == '{':
			s.st = idKey
		case !space && c != '\v' && c != '\f':
			s.st = idOff
		}
	case idKey:
		switch c {
		case '"':
			s.st, s.keyLen, s.keyEsc, s.esc = idKeyStr, 0, false, false
		case '}':
			s.st = idOff
		}
	case idKeyStr:
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc, s.keyEsc = true, true
		case c == '"':
			s.st = idColon
			return
		}
		if s.keyLen < len(s.key) {
			s.key[s.keyLen] = c
		}
		s.keyLen++
	case idColon:
		if c == ':' {
			s.st = idValue
			key := s.keyText()
			s.isID = key == "id"
			s.sawID = s.sawID || s.isID
			s.method = s.method || key == "method"
		}
	case idValue:
		if space {
			return
		}
		if s.isID && (c == '-' || (c >= '0' && c <= '9')) {
			s.st = idNum
			return
		}
		s.st = idOther
		s.other(c)
	case idOther:
		s.other(c)
	}
}

// keyText is the key just read as go-sdk's decoder reads it (escapes
// undone), or "" when it is longer than maxKeyText or not valid.
func (s *idScanner) keyText() string {
	if s.keyLen > len(s.key) {
		return ""
	}
	raw := s.key[:s.keyLen]
	if !s.keyEsc {
		return string(raw)
	}
	var k string
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	if json.Unmarshal(q, &k) != nil {
		return ""
	}
	return k
}

// other moves the scanner past c in a member's value, or after it.
func (s *idScanner) other(c byte) {
	switch {
	case s.inStr:
		switch {
		case s.esc:
			s.esc = false
		case c == '\\':
			s.esc = true
		case c == '"':
			s.inStr = false
		}
	case c == '"':
		s.inStr = true
	case c == '{' || c == '[':
		s.depth++
	case c == '}' || c == ']':
		if s.depth == 0 {
			s.st = idOff // the message's end
			return
		}
		s.depth--
	case c == ',' && s.depth == 0:
		s.st = idKey
	}
}

// idTranslator is a body whose messages with the id from get the id to:
// an event stream (each event's data lines scanned as one message) or one
// JSON message.
type idTranslator struct {
	src    *bufio.Reader
	body   io.Closer
	stream bool
	start  bool // the next bytes start a line
	data   bool // the current line is a data line
	scan   idScanner
	buf    []byte
	// tail is the end of the last data line, translated, held (at most
	// tailBytes and the line's end) until it is known whether the message
	// ends there (translateTail).
	tail    []byte
	tailEnd bool   // tail ends its line
	out     []byte // translated, not yet read
	err     error
}

// translateWindow is how much of a line the translator reads at once.
const translateWindow = 64 << 10

func (t *idTranslator) Read(p []byte) (int, error) {
	for len(t.out) == 0 {
		if t.err != nil {
			return 0, t.err
		}
		if t.scan.to == "" {
			return t.src.Read(p)
		}
		var chunk []byte
		if t.stream {
			chunk, t.err = t.src.ReadSlice('\n')
		} else {
			chunk, t.err = t.src.Peek(translateWindow)
			_, _ = t.src.Discard(len(chunk))
		}
		if t.err == bufio.ErrBufferFull {
			t.err = nil
		}
		t.buf = t.translate(t.buf[:0], chunk)
		if t.err != nil {
			t.buf = t.end(t.buf)
		}
		t.out = t.buf
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// end appends what is held at the end of the body (or of an event).
func (t *idTranslator) end(out []byte) []byte {
	out = t.scan.flush(out)
	if t.stream {
		out = t.scan.emit(out, t.messageTail())
	}
	return t.scan.reset(out)
}

// messageTail returns the held tail of the message's last data line,
// translated by translateTail when the scan found neither a top-level id
// nor a method (the Tap then reads the id at the message's end), and
// forgets it.
func (t *idTranslator) messageTail() []byte {
	tail := t.tail
	if !t.scan.sawID && !t.scan.method && !t.scan.pending {
		tail = translateTail(tail, t.scan.from, t.scan.to)
	}
	t.tail, t.tailEnd = t.tail[:0], false
	return tail
}

// translate appends chunk, the next bytes of the body, translated, to out.
func (t *idTranslator) translate(out, chunk []byte) []byte {
	if !t.stream {
		return t.scan.feed(out, chunk)
	}
	if t.start {
		isData := bytes.HasPrefix(chunk, []byte("data:"))
		blank := len(bytes.TrimRight(chunk, "\r\n")) == 0 && len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if t.tailEnd {
			if blank {
				// The event's end: the held tail ends the message.
				out = t.end(out)
			} else {
				out = t.scan.emit(out, t.tail)
				t.tail, t.tailEnd = t.tail[:0], false
			}
		}
		switch {
		case blank:
			// The event's end: the next data starts a message.
			out = t.scan.reset(out)
			t.data = false
		case isData:
			t.data = true
			out = t.scan.emit(out, chunk[:len("data:")])
			chunk = chunk[len("data:"):]
		default:
			t.data = false
		}
	}
	t.start = len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
	if !t.data {
		return t.scan.emit(out, chunk)
	}
	// The line's end is whitespace to JSON, as the newline go-sdk joins
	// data lines with. The scan's output goes to the tail, of which all
	// but the last tailBytes are passed on.
	t.tail = t.scan.feed(t.tail, chunk)
	if t.scan.pending && len(t.tail) > 0 {
		// What the tail holds comes before the pending id: pass it on
		// (the message has an id, so its tail is not translated).
		out = append(out, t.tail...)
		t.tail = t.tail[:0]
	}
	if k := len(t.tail) - tailBytes; k > 0 && !t.start {
		out = t.scan.emit(out, t.tail[:k])
		t.tail = append(t.tail[:0], t.tail[k:]...)
	}
	t.tailEnd = t.start
	return out
}

// tailBytes is how much of a data line's end is held to find an id there.
const tailBytes = 256

// tailIDNumber is the Tap's tailID (internal/wire) for a number: a
// top-level "id" member at the end of a JSON object. The Tap reads an
// oversized message's id there when the message is not valid JSON and its
// head says nothing (the scan above then finds no top-level id), so the
// call's id is translated there too, unless the tail has a method (the Tap
// then takes the message for a request).
var tailIDNumber = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)

// translateTail returns line, the end of a message, with the id at its
// end (tailIDNumber) changed from from to to, or from to to from.
func translateTail(line []byte, from, to string) []byte {
	body := bytes.TrimRight(line, "\r\n")
	if (!bytes.Contains(body, []byte(from)) && !bytes.Contains(body, []byte(to))) || bytes.Contains(body, []byte(`"method"`)) {
		return line
	}
	m := tailIDNumber.FindSubmatchIndex(body)
	if m == nil {
		return line
	}
	switch id := body[m[2]:m[3]]; {
	case sameID(id, from):
	case sameID(id, to): // the ids trade places (flush)
		from, to = to, from
	default:
		return line
	}
	out := make([]byte, 0, len(line)+len(to))
	out = append(out, line[:m[2]]...)
	out = append(out, to...)
	return append(out, line[m[3]:]...)
}

func (t *idTranslator) Close() error { return t.body.Close() }

// translateID returns b, a message or its start, or a data line of an
// event stream, with its top-level "id" member changed from from to to
// when it is from in go-sdk's reading. b itself is never changed.
func translateID(b []byte, from, to string) []byte {
	if to == "" {
		return b
	}
	t := idTranslator{stream: bytes.HasPrefix(b, []byte("data:")), start: true, scan: idScanner{from: from, to: to}}
	t.err = io.EOF // b is all there is
	out := t.translate(nil, b)
	return t.end(out)
}
