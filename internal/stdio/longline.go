package stdio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// readLine reads one line of at most c.max bytes, with its newline. A line
// that fits the reader's buffer (64 KiB) is returned in place: it is valid
// until the next call and owned is false. A longer line is gathered in
// blocks and copied once into a slice of its exact size, which the caller
// owns: reading an n-byte line allocates at most 2n bytes + 1 MiB (growing
// one slice by append allocated about 6n).
func (c *Conn) readLine() (line []byte, owned bool, err error) {
	chunk, err := c.r.ReadSlice('\n')
	if len(chunk) > c.max {
		return nil, false, c.skipLongLine(nil, chunk, err)
	}
	switch {
	case err == nil, err == io.EOF && len(chunk) > 0:
		return chunk, false, nil
	case !errors.Is(err, bufio.ErrBufferFull):
		return nil, false, err
	}
	var lb lineBlocks
	for {
		lb.add(chunk)
		chunk, err = c.r.ReadSlice('\n')
		if lb.size+len(chunk) > c.max {
			return nil, false, c.skipLongLine(&lb, chunk, err)
		}
		switch {
		case err == nil, err == io.EOF:
			return lb.join(chunk), true, nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, false, err
		}
	}
}

// lineBlocks holds the start of a long line while it is read: copies of the
// reader's chunks in blocks that grow from 64 KiB to 1 MiB (the most a last
// block can leave unused), so that no byte is copied twice before the final
// join.
type lineBlocks struct {
	blocks [][]byte // full blocks
	cur    []byte   // the block being filled
	size   int      // bytes held
}

func (lb *lineBlocks) add(p []byte) {
	lb.size += len(p)
	for len(p) > 0 {
		if len(lb.cur) == cap(lb.cur) {
			if lb.cur != nil {
				lb.blocks = append(lb.blocks, lb.cur)
			}
			lb.cur = make([]byte, 0, min(max(lb.size, 64<<10), 1<<20))
		}
		n := copy(lb.cur[len(lb.cur):cap(lb.cur)], p)
		lb.cur = lb.cur[:len(lb.cur)+n]
		p = p[n:]
	}
}

// join returns the bytes held followed by last, in one new slice.
func (lb *lineBlocks) join(last []byte) []byte {
	out := make([]byte, 0, lb.size+len(last))
	for _, b := range lb.blocks {
		out = append(out, b...)
	}
	out = append(out, lb.cur...)
	return append(out, last...)
}

// head returns up to n bytes from the start of what is held, then of last.
func (lb *lineBlocks) head(n int, last []byte) []byte {
	var out []byte
	if lb != nil {
		for _, b := range lb.blocks {
			out = append(out, b[:min(len(b), n-len(out))]...)
		}
		out = append(out, lb.cur[:min(len(lb.cur), n-len(out))]...)
	}
	return append(out, last[:min(len(last), n-len(out))]...)
}

// tail returns up to n bytes from the end of what is held, then last.
func (lb *lineBlocks) tail(n int, last []byte) []byte {
	if len(last) >= n || lb == nil {
		return append([]byte(nil), last[max(0, len(last)-n):]...)
	}
	var out []byte
	need := n - len(last)
	for i := len(lb.blocks); i >= 0 && need > 0; i-- {
		b := lb.cur
		if i < len(lb.blocks) {
			b = lb.blocks[i]
		}
		take := b[max(0, len(b)-need):]
		out = append(append([]byte(nil), take...), out...)
		need -= len(take)
	}
	return append(out, last...)
}

// skipLongLine discards the rest of an oversized line, of which lb (nil
// when none) holds the start and last is the chunk just read, with err the
// error that read returned. If the line is a response, the call it answers
// fails with a clear error instead of waiting forever, and the connection
// stays usable. It returns a read error only.
func (c *Conn) skipLongLine(lb *lineBlocks, last []byte, err error) error {
	head := lb.head(256, last)
	tail := lb.tail(256, last)
	size := len(last)
	if lb != nil {
		size += lb.size
		*lb = lineBlocks{} // let the blocks go while the rest is skipped
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		var chunk []byte
		chunk, err = c.r.ReadSlice('\n')
		size += len(chunk)
		if len(chunk) >= 256 {
			tail = append(tail[:0], chunk[len(chunk)-256:]...)
		} else {
			tail = append(tail, chunk...)
			tail = tail[max(0, len(tail)-256):]
		}
	}
	if err != nil && err != io.EOF {
		return err
	}
	id, ok := responseID(head, tail)
	if ok && bytes.Contains(tail, []byte(`"method"`)) {
		ok = false // a request or notification from the server, not a response
	}
	if !ok {
		c.noteStray([]byte(fmt.Sprintf("<dropped a %d-byte message over the %d-byte limit>", size, c.max)))
		return nil
	}
	resp := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeInternalError,
		Message: fmt.Sprintf("the tool's result was too large (%d bytes; the limit is %d bytes): ask for less data", size, c.max),
	}}
	c.mu.Lock()
	c.pending = append(c.pending, resp)
	c.mu.Unlock()
	return nil
}

// tailID finds a top-level "id" member at the end of a JSON object.
var tailID = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?}\s*$`)

// responseID extracts the id of an oversized response from its first or
// last bytes, if it is a response at all.
func responseID(head, tail []byte) (jsonrpc.ID, bool) {
	raw, haveID, method, _ := walkMembers(head)
	switch {
	case method:
		return jsonrpc.ID{}, false // a request or notification
	case haveID:
		return makeID(raw)
	}
	return tailResponseID(tail)
}

func makeID(raw any) (jsonrpc.ID, bool) {
	if n, ok := raw.(json.Number); ok {
		f, err := n.Float64()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		raw = f // jsonrpc.MakeID takes numbers as float64
	}
	id, err := jsonrpc.MakeID(raw)
	return id, err == nil
}
