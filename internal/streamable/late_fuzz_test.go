package streamable

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// lateRef is what LateAnswers makes of stream, the event stream answering
// the request req, read whole: the first line that begins with '{'
// between events, after one, framed as an SSE event when it is whole, of
// at most limit bytes, and a response with the request's id; all else as
// it came.
func lateRef(stream, req []byte, limit int) []byte {
	boundary, inEvent, events := true, false, false
	for at := 0; at < len(stream); {
		end := bytes.IndexByte(stream[at:], '\n')
		line := stream[at:]
		next := len(stream)
		if end >= 0 {
			line, next = stream[at:at+end], at+end+1
		}
		if len(line) > 0 && line[0] == '{' && boundary && events {
			if len(line) > limit || !refAnswers(bytes.TrimRight(line, "\r"), req) {
				return stream
			}
			out := append([]byte(nil), stream[:at]...)
			out = append(append(append(out, "event: message\ndata: "...), bytes.TrimRight(line, "\r")...), "\n\n"...)
			return append(out, stream[next:]...)
		}
		if end < 0 {
			break
		}
		if len(bytes.Trim(line, "\r")) > 0 {
			inEvent, boundary = true, false
		} else {
			events = events || inEvent
			inEvent, boundary = false, true
		}
		at = next
	}
	return stream
}

// refAnswers: msg is a response with req's id, as go-sdk decodes them.
func refAnswers(msg, req []byte) bool {
	m, err := jsonrpc.DecodeMessage(msg)
	r, ok := m.(*jsonrpc.Response)
	if err != nil || !ok {
		return false
	}
	q, err := jsonrpc.DecodeMessage(req)
	qr, ok := q.(*jsonrpc.Request)
	return err == nil && ok && qr.ID.IsValid() && r.ID.IsValid() && qr.ID == r.ID
}

// readLate reads stream, answering req, through a lateBody, in reads of
// the sizes chunk gives (cycled).
func readLate(t *testing.T, stream, req []byte, limit int, chunks []byte) []byte {
	hr, err := http.NewRequest(http.MethodPost, "http://x/mcp", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	var src io.Reader = bytes.NewReader(stream)
	if len(chunks) == 0 {
		src = iotest.OneByteReader(src)
	}
	b := &lateBody{rc: io.NopCloser(src), req: hr, limit: limit, boundary: true}
	var out []byte
	buf := make([]byte, 1<<12)
	for i := 0; ; i++ {
		p := buf
		if len(chunks) > 0 {
			p = buf[:int(chunks[i%len(chunks)])%64+1]
		}
		n, err := b.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if i > 1<<20 {
			t.Fatal("the body does not end")
		}
	}
}

// FuzzLateAnswers: whatever the stream and however it is read, a lateBody
// hands out what lateRef makes of it: the stream as it came but for, at
// most, the request's own answer found bare between events, framed.
func FuzzLateAnswers(f *testing.F) {
	const req = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`
	ev := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
	ans := `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`
	for _, s := range []string{
		ev + ans,
		ev + ans + "\n",
		strings.ReplaceAll(ev, "\n", "\r\n") + ans + "\r\n",
		ev + `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"no"}}`,
		ev + `{"jsonrpc":"2.0","id":"7","error":{"code":-32602,"message":"no"}}`,
		ev + ans + "\n" + ans + "\n",
		ev + "{junk\n" + ans,
		strings.TrimSuffix(ev, "\n") + ans,
		ans + "\n\n" + ev,
		": c\n\n" + ans,
		ev + "\r" + ans,
		ev + `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n\nevent: message\ndata: {}\n\n",
		ev + `{"jsonrpc":"2.0","id":7.0,"result":{}}`,
		ev + `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		"",
		"\n\n\n",
	} {
		f.Add([]byte(s), []byte(req), 256, []byte{})
		f.Add([]byte(s), []byte(req), 40, []byte{3, 60, 1})
		f.Add([]byte(s), []byte(`{"jsonrpc":"2.0","id":"7","method":"tools/call"}`), 1024, []byte{5})
	}
	f.Fuzz(func(t *testing.T, stream, req []byte, limit int, chunks []byte) {
		if limit < 0 || limit > 1<<13 || len(stream) > 1<<13 {
			return
		}
		want := lateRef(stream, req, limit)
		if got := readLate(t, stream, req, limit, chunks); !bytes.Equal(got, want) {
			t.Fatalf("read in chunks %v:\n got %q\nwant %q", chunks, got, want)
		}
		if got := readLate(t, stream, req, limit, nil); !bytes.Equal(got, want) {
			t.Fatalf("read byte by byte:\n got %q\nwant %q", got, want)
		}
	})
}

// TestLateAnswersFrames: the request's answer, bare after an event, is
// framed as an event of its own; another id is not.
func TestLateAnswersFrames(t *testing.T) {
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`)
	ev := "event: message\ndata: {}\n\n"
	for _, c := range []struct{ in, want string }{
		{ev + `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}`, ev + "event: message\ndata: " + `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}` + "\n\n"},
		{ev + `{"jsonrpc":"2.0","id":7,"result":{}}` + "\r\n: after\n", ev + "event: message\ndata: " + `{"jsonrpc":"2.0","id":7,"result":{}}` + "\n\n: after\n"},
		{ev + `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"no"}}`, ev + `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"no"}}`},
	} {
		for _, chunks := range [][]byte{nil, {1}, {7, 2}, {63}} {
			if got := readLate(t, []byte(c.in), req, 1024, chunks); string(got) != c.want {
				t.Errorf("%q in chunks %v: got %q, want %q", c.in, chunks, got, c.want)
			}
		}
	}
}
