package streamable

import (
	"bufio"
	"bytes"
	"io"
	"regexp"
)

// Translating the call's id in what the server sends for a call handed
// over to go-sdk (handoff.go): the top-level "id" member of each
// message, wherever it is in the message (after a 100 KiB result too) and
// however an event stream splits the message over data lines (go-sdk
// joins them with newlines), in any form go-sdk reads as the fast path's
// id (sameID). The scan holds no more than a number's text of the body.

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

// idScanner changes the top-level id of a JSON object from from to to, fed
// in pieces.
type idScanner struct {
	from, to string
	st       idState
	depth    int  // in idOther: how deep in the value
	inStr    bool // in idOther or idKeyStr: in a string
	esc      bool // after a backslash in a string
	key      [3]byte
	keyLen   int  // bytes of the key (more than 2: not "id")
	keyEsc   bool // the key has an escape
	isID     bool // the value after idColon is the id's
	hold     []byte
}

// reset starts a new message.
func (s *idScanner) reset() {
	*s = idScanner{from: s.from, to: s.to, hold: s.hold[:0]}
}

// flush ends a held number: to, if it is the id from, else as it was.
func (s *idScanner) flush(out []byte) []byte {
	if s.st != idNum {
		return out
	}
	s.st = idOther
	if sameID(s.hold, s.from) {
		out = append(out, s.to...)
	} else {
		out = append(out, s.hold...)
	}
	s.hold = s.hold[:0]
	return out
}

// feed scans in, appending it, translated, to out.
func (s *idScanner) feed(out, in []byte) []byte {
	for i, c := range in {
		if s.st == idOff {
			return append(out, in[i:]...)
		}
		if s.st == idNum {
			if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				if s.hold = append(s.hold, c); len(s.hold) > maxIDText {
					out = append(out, s.hold...)
					s.hold, s.st = s.hold[:0], idOther
				}
				continue
			}
			out = s.flush(out)
		}
		s.step(c)
		if s.st == idNum {
			s.hold = append(s.hold, c)
			continue
		}
		out = append(out, c)
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
			s.isID = !s.keyEsc && s.keyLen == 2 && s.key[0] == 'i' && s.key[1] == 'd'
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
	tail   []byte // the end of a data line, translated, held (tailBytes)
	out    []byte // translated, not yet read
	err    error
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
			t.buf = t.scan.flush(t.buf)
			t.buf = append(t.buf, translateTail(t.tail, t.scan.from, t.scan.to)...)
			t.tail = t.tail[:0]
		}
		t.out = t.buf
	}
	n := copy(p, t.out)
	t.out = t.out[n:]
	return n, nil
}

// translate appends chunk, the next bytes of the body, translated, to out.
func (t *idTranslator) translate(out, chunk []byte) []byte {
	if !t.stream {
		return t.scan.feed(out, chunk)
	}
	if t.start {
		switch {
		case len(bytes.TrimRight(chunk, "\r\n")) == 0 && len(chunk) > 0 && chunk[len(chunk)-1] == '\n':
			// The event's end: the next data starts a message.
			t.scan.reset()
			t.data = false
		case bytes.HasPrefix(chunk, []byte("data:")):
			t.data = true
			out = append(out, chunk[:len("data:")]...)
			chunk = chunk[len("data:"):]
		default:
			t.data = false
		}
	}
	t.start = len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
	if !t.data {
		return append(out, chunk...)
	}
	// The line's end is whitespace to JSON, as the newline go-sdk joins
	// data lines with.
	t.tail = t.scan.feed(t.tail, chunk)
	if !t.start && t.err == nil {
		// Hold the line's last bytes until its end (tailBytes).
		if k := len(t.tail) - tailBytes; k > 0 {
			out = append(out, t.tail[:k]...)
			t.tail = append(t.tail[:0], t.tail[k:]...)
		}
		return out
	}
	out = append(out, translateTail(t.tail, t.scan.from, t.scan.to)...)
	t.tail = t.tail[:0]
	return out
}

// tailBytes is how much of a data line's end is held to find an id there.
const tailBytes = 256

// tailIDNumber is the Tap's tailID (internal/wire) for a number: a
// top-level "id" member at the end of a JSON object. The Tap reads an
// oversized message's id there, even when the message is not valid JSON
// (the scan above then finds no top-level id), so the call's id is
// translated there too. In valid JSON it is the top-level id.
var tailIDNumber = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)

// translateTail returns line, the end of a data line, with the id at its
// end (tailIDNumber) changed from from to to.
func translateTail(line []byte, from, to string) []byte {
	body := bytes.TrimRight(line, "\r\n")
	if !bytes.Contains(body, []byte(from)) {
		return line
	}
	m := tailIDNumber.FindSubmatchIndex(body)
	if m == nil || !sameID(body[m[2]:m[3]], from) {
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
	out = t.scan.flush(out)
	return append(out, translateTail(t.tail, from, to)...)
}
