package wire

import (
	"bytes"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A Tap reads the HTTP response bodies of streamable HTTP as go-sdk reads
// them: a JSON body is one message, an event stream carries one message
// per event. What it keeps of a message it keeps in a spool, which
// allocates about the message's size (a growing slice allocates two to
// three times that); the whole message is made one slice only when it is
// asked for (the protocol trace, or a result with structured content).

// spool holds bytes in blocks that double in size up to spoolMax.
type spool struct {
	blocks [][]byte
	n      int
}

const (
	spoolMin = 512
	spoolMax = 1 << 20
)

// grow makes room for n more bytes in one block.
func (s *spool) grow(n int) {
	s.blocks = append(s.blocks, make([]byte, 0, n))
}

func (s *spool) write(p []byte) {
	s.n += len(p)
	for len(p) > 0 {
		k := len(s.blocks) - 1
		if k < 0 || len(s.blocks[k]) == cap(s.blocks[k]) {
			size := spoolMin
			if k >= 0 {
				size = min(2*cap(s.blocks[k]), spoolMax)
			}
			s.grow(size)
			k++
		}
		b := s.blocks[k]
		m := min(cap(b)-len(b), len(p))
		s.blocks[k] = append(b, p[:m]...)
		p = p[m:]
	}
}

func (s *spool) len() int { return s.n }

// bytes returns the spooled bytes as one slice, joining the blocks once.
func (s *spool) bytes() []byte {
	switch len(s.blocks) {
	case 0:
		return nil
	case 1:
		return s.blocks[0]
	}
	all := make([]byte, 0, s.n)
	for _, b := range s.blocks {
		all = append(all, b...)
	}
	s.blocks = [][]byte{all}
	return all
}

// first returns the first block: the start of the bytes.
func (s *spool) first() []byte {
	if len(s.blocks) == 0 {
		return nil
	}
	return s.blocks[0]
}

// trimByte removes the last byte if it is c.
func (s *spool) trimByte(c byte) {
	k := len(s.blocks) - 1
	for k >= 0 && len(s.blocks[k]) == 0 {
		k--
	}
	if k >= 0 && s.blocks[k][len(s.blocks[k])-1] == c {
		s.blocks[k] = s.blocks[k][:len(s.blocks[k])-1]
		s.n--
	}
}

// reset empties the spool, keeping its first block for reuse.
func (s *spool) reset() {
	if len(s.blocks) > 0 {
		s.blocks = s.blocks[:1]
		s.blocks[0] = s.blocks[0][:0]
	}
	s.n = 0
}

// jsonTap observes a JSON response body as it is read, and keeps it for
// the request whose result is asked for.
type jsonTap struct {
	io.ReadCloser
	obs  *Observer      // nil: not observed
	keep *RequestStatus // nil: not kept
	buf  spool
	done bool
}

func (j *jsonTap) Read(p []byte) (int, error) {
	n, err := j.ReadCloser.Read(p)
	if !j.done && j.buf.len()+n <= maxTapBytes {
		j.buf.write(p[:n])
	} else {
		j.done = true
	}
	if err == io.EOF && !j.done {
		j.done = true
		if j.obs != nil {
			msg := j.buf.bytes()
			if m, derr := jsonrpc.DecodeMessage(msg); derr == nil {
				j.obs.Received(m, msg)
			}
		}
		if j.keep != nil {
			j.keep.answeredWith(&j.buf)
		}
	}
	return n, err
}

// sseTap observes the messages of a server-sent event stream as it is
// read, and keeps the response of the request whose result is asked for.
// The data of an event goes straight into its spool.
type sseTap struct {
	io.ReadCloser
	obs   *Observer      // nil: not observed
	keep  *RequestStatus // nil: not kept
	marks *order.Marks   // the connection's markers, left out of the trace

	field   []byte // the start of the line, until its field is known
	inData  bool   // the line is a data line, past "data:"
	other   bool   // the line is another field, or a comment
	data    *spool // the event's data
	lines   int    // data lines in the event
	tooLong bool
}

func (s *sseTap) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.feed(p[:n])
	if err == io.EOF {
		// go-sdk takes a last line without its newline, and a last
		// event without its blank line.
		if len(s.field) > 0 || s.inData || s.other {
			s.endLine()
		}
		s.endLine()
	}
	return n, err
}

func (s *sseTap) feed(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			s.lineBytes(b)
			return
		}
		s.lineBytes(b[:i])
		s.endLine()
		b = b[i+1:]
	}
}

// dataField is the start of a data line.
const dataField = "data:"

// lineBytes takes bytes of the current line.
func (s *sseTap) lineBytes(b []byte) {
	if !s.inData && !s.other {
		// Gather the field name and the space after it.
		k := min(len(dataField)+1-len(s.field), len(b))
		s.field = append(s.field, b[:k]...)
		b = b[k:]
		switch {
		case string(s.field) == "\r":
			// A blank line ending in CRLF, or the start of another line.
		case !bytes.HasPrefix([]byte(dataField), s.field) && !bytes.HasPrefix(s.field, []byte(dataField)):
			s.other = true
		case len(s.field) == len(dataField)+1:
			s.startData(s.field[len(dataField):])
		}
	}
	if s.inData {
		s.appendData(b)
	}
}

// startData begins a data line whose value starts with rest.
func (s *sseTap) startData(rest []byte) {
	s.inData = true
	if s.data == nil {
		s.data = &spool{}
	}
	if s.lines > 0 {
		s.appendData([]byte{'\n'})
	}
	s.lines++
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	s.appendData(rest)
}

func (s *sseTap) appendData(b []byte) {
	if s.tooLong || len(b) == 0 {
		return
	}
	if s.data.len()+len(b) > maxTapBytes {
		s.tooLong = true
		return
	}
	s.data.write(b)
}

// endLine ends the current line: a blank line ends the event.
func (s *sseTap) endLine() {
	switch {
	case s.inData:
		s.data.trimByte('\r')
	case s.other:
	case string(s.field) == dataField:
		s.startData(nil) // an empty data line
	case len(s.field) == 0, string(s.field) == "\r":
		if s.data != nil && s.data.len() > 0 && !s.tooLong {
			s.event()
		}
		if s.data != nil {
			s.data.reset()
		}
		s.lines = 0
		s.tooLong = false
	}
	s.field = s.field[:0]
	s.inData, s.other = false, false
}

// event handles the data of one event, a JSON-RPC message.
func (s *sseTap) event() {
	if s.obs != nil {
		data := untagLog(s.data.bytes(), s.marks)
		if msg, err := jsonrpc.DecodeMessage(data); err == nil && !s.marks.IsMarker(msg) {
			s.obs.Received(msg, data)
		}
	}
	if s.keep == nil {
		return
	}
	resp, decided := responseKind(s.data.first())
	if !decided {
		resp, _ = responseKind(s.data.bytes())
	}
	if resp {
		// The stream of a call carries one response, its own (Result
		// checks the id); the spool goes with it.
		s.keep.answeredWith(s.data)
		s.data = nil
	}
}
