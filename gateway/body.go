package gateway

import (
	"bytes"
	"io"
	"net/http"
)

// readBody reads r's body, at most Options.MaxRequestBytes, and puts it
// back; ok is false when it could not be read whole (go-sdk then says
// why).
func (g *Gateway) readBody(r *http.Request) (body []byte, ok bool) {
	max := g.opts.maxRequestBytes()
	if b, held := r.Body.(*heldBody); held && b.Len() == len(b.data) && int64(len(b.data)) <= max {
		return b.data, true // read whole already (liftTask), and not since
	}
	body, err := readLimited(r.Body, r.ContentLength, max)
	rest := r.Body
	if err != nil || int64(len(body)) > max {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
		return nil, false
	}
	r.Body = readCloser{bytes.NewReader(body), rest}
	return body, true
}

// heldBody is a request's body that was read whole (data) and is put
// back, to be read again from its start.
type heldBody struct {
	bytes.Reader
	data []byte
}

// putBack returns data as a request's body, to be read again.
func putBack(data []byte) *heldBody {
	b := &heldBody{data: data}
	b.Reset(data)
	return b
}

func (*heldBody) Close() error { return nil }

// readLimited reads r to its end as io.ReadAll(io.LimitReader(r, max+1))
// does, into a buffer made for size bytes when size (a Content-Length) is
// known and at most max: the read that reaches the end needs no more. A
// Content-Length is only the client's word: the buffer starts at most
// readChunk bytes long and at most doubles as bytes come, so that what it
// holds is at most about twice what was read.
func readLimited(r io.Reader, size, max int64) ([]byte, error) {
	if size < 0 || size > max {
		size = 511 // unknown: as io.ReadAll starts
	}
	b := make([]byte, 0, min(size, readChunk)+1)
	for int64(len(b)) <= max {
		if len(b) == cap(b) {
			n := 2 * int64(cap(b))
			if int64(cap(b)) <= size {
				n = min(n, size+1) // room for the end of the body it claims
			}
			b = append(make([]byte, 0, n), b...)
		}
		room := b[len(b):cap(b)]
		if left := max + 1 - int64(len(b)); int64(len(room)) > left {
			room = room[:left]
		}
		n, err := r.Read(room)
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// readChunk is the most a body's buffer is made for before its bytes
// come.
const readChunk = 4 << 10

// readCloser is a body read from Reader and closed with Closer.
type readCloser struct {
	io.Reader
	io.Closer
}
