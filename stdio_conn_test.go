package mcpadapter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stdioConnOver is a stdioConn reading r, with no process behind it: tests
// of the read path must stop before the end of r.
func stdioConnOver(r io.Reader, max int) *stdioConn {
	return &stdioConn{r: bufio.NewReaderSize(r, 64*1024), max: max}
}

// readLine returns whole lines of every length, in place when they fit the
// reader's buffer and as one slice of their own otherwise.
func TestStdioReadLineSizes(t *testing.T) {
	sizes := []int{0, 1, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10, 3<<20 + 17}
	var in bytes.Buffer
	var want [][]byte
	for i, n := range sizes {
		line := append(bytes.Repeat([]byte{byte('a' + i)}, n), '\n')
		want = append(want, line)
		in.Write(line)
	}
	in.WriteString("last, without a newline")
	want = append(want, []byte("last, without a newline"))
	c := stdioConnOver(&in, DefaultMaxMessageBytes)
	for i, w := range want {
		got, owned, err := c.readLine()
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if !bytes.Equal(got, w) {
			t.Fatalf("line %d: got %d bytes, want %d", i, len(got), len(w))
		}
		if wantOwned := len(w) > 64<<10; owned != wantOwned {
			t.Errorf("line %d (%d bytes): owned %v, want %v", i, len(w), owned, wantOwned)
		}
		if owned && cap(got) != len(got) {
			t.Errorf("line %d: cap %d, len %d: want one exact allocation", i, cap(got), len(got))
		}
	}
	if _, _, err := c.readLine(); err != io.EOF {
		t.Fatalf("after the last line: %v, want EOF", err)
	}
}

// bigResponse is a response of exactly n bytes with its newline, its id at
// the very end.
func bigResponse(n int, id string) []byte {
	head := `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"`
	tail := `"}]},"id":` + id + "}\n"
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// An oversized response whose last read is only a few bytes (the end of
// its id) still fails its own call: the id is looked for in the last 256
// bytes of the line, not only in the last chunk read. Before, such a
// response was dropped as a stray line and its call waited for its
// timeout.
func TestStdioOverLimitIDAcrossChunks(t *testing.T) {
	const max = 128 << 10 // two full chunks of the 64 KiB reader
	for _, extra := range []int{1, 2, 3, 5, 9, 300} {
		line := bigResponse(max+extra, "4242")
		c := stdioConnOver(bytes.NewReader(append(line, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"...)), max)
		m, err := c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := m.(*jsonrpc.Response)
		if !ok || resp.ID.Raw() != int64(4242) || resp.Error == nil ||
			!strings.Contains(resp.Error.Error(), fmt.Sprintf("(%d bytes; the limit is %d bytes)", len(line), max)) {
			t.Fatalf("%d bytes over: got %#v, want the error response for id 4242", extra, m)
		}
		if m, err := c.Read(t.Context()); err != nil || m.(*jsonrpc.Response).ID.Raw() != int64(1) {
			t.Fatalf("%d bytes over: next message %#v %v", extra, m, err)
		}
	}
}

// Reading a line of n bytes allocates at most 2n bytes + 1 MiB: the blocks
// and the final slice, never a slice grown by append.
func TestStdioLargeLineAllocations(t *testing.T) {
	// Sizes just past a block boundary leave the most of a block unused.
	for _, n := range []int{8 << 20, 8<<20 + 70000, 1<<20 + 70000, 300 << 10} {
		c := stdioConnOver(bytes.NewReader(bigResponse(n, "7")), DefaultMaxMessageBytes)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := c.Read(t.Context()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(2*n+1<<20+16<<10) {
			t.Errorf("reading a %d-byte line allocated %d bytes (%.2f×)", n, got, float64(got)/float64(n))
		}
	}
}

// BenchmarkStdioLargeLine reads one 50 MiB response the way the stdio
// connection does: line reading and decoding.
func BenchmarkStdioLargeLine(b *testing.B) {
	line := bigResponse(50<<20, "7")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		c := stdioConnOver(bytes.NewReader(line), DefaultMaxMessageBytes)
		m, err := c.Read(b.Context())
		if err != nil || len(m.(*jsonrpc.Response).Result) != len(line)-len(`{"jsonrpc":"2.0","result":,"id":7}`+"\n") {
			b.Fatal(err, m)
		}
	}
}

// BenchmarkStdioSmallMessage reads one small response.
func BenchmarkStdioSmallMessage(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"hello"}],"structuredContent":{"text":"hello"}}}` + "\n")
	r := bytes.NewReader(line)
	c := stdioConnOver(r, DefaultMaxMessageBytes)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(line)
		if _, err := c.Read(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

var decodeSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"result":{},"id":"abc","jsonrpc":"2.0"}`,
	`{"jsonrpc":"2.0","id":-42,"result":[1,2,{"a":"}"}]}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[]}}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}}`,
	`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"x":1}},"result":{}}`,
	`{"jsonrpc":"2.0","id":3}`,
	`{"jsonrpc":"2.0","result":{}}`,
	`{"jsonrpc":"2.0","id":null,"result":{}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":"a\"b","result":{}}`,
	`{"jsonrpc":"2.0","id":"é","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":null}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2\u002e0","id":1,"result":{}}`,
	`{"jsonrpc":2,"id":1,"result":{}}`,
	`{"id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"result":{}}`,
	`{"jsonrpc":"2.0","ID":1,"Result":{},"id":2}`,
	`{"jsonrpc":"2.0","i\u0064":1,"result":{}}`,
	` { "jsonrpc" : "2.0" , "id" : 1 , "result" : { "a" : [ 1 , 2 ] } } `,
	`{"jsonrpc":"2.0","id":1,"result":"\\"}`,
	`{"jsonrpc":"2.0","id":1,"result":{"t":"a\\\"b\\\\"},"extra":[true,false,null]}`,
	`{}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
}

// decodeMessage gives what go-sdk's jsonrpc.DecodeMessage gives, for every
// valid JSON line, whether or not the line is owned.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return
		}
		want, werr := jsonrpc.DecodeMessage(line)
		for _, owned := range []bool{false, true} {
			in := bytes.Clone(line)
			got, gerr := decodeMessage(in, owned)
			if (gerr == nil) != (werr == nil) {
				t.Fatalf("%s (owned %v): error %v, go-sdk's %v", line, owned, gerr, werr)
			}
			if !sameMessage(got, want) {
				t.Fatalf("%s (owned %v):\n got %#v\nwant %#v", line, owned, got, want)
			}
			if !owned && got != nil {
				// A line that is not owned is reused: the message must not
				// share its bytes.
				for i := range in {
					in[i] = '#'
				}
				if !sameMessage(got, want) {
					t.Fatalf("%s: the message shares the reader's buffer", line)
				}
			}
		}
	})
}

func TestDecodeMessageCommonShapesSkipGoSDK(t *testing.T) {
	for _, s := range decodeSeeds[:6] {
		if decodeCommon([]byte(s), false) == nil {
			t.Errorf("%s: left to go-sdk, want decoded here", s)
		}
	}
}

func sameMessage(a, b jsonrpc.Message) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case *jsonrpc.Request:
		b, ok := b.(*jsonrpc.Request)
		return ok && a.ID == b.ID && a.Method == b.Method && bytes.Equal(a.Params, b.Params) && (a.Params == nil) == (b.Params == nil)
	case *jsonrpc.Response:
		b, ok := b.(*jsonrpc.Response)
		return ok && a.ID == b.ID && bytes.Equal(a.Result, b.Result) && (a.Result == nil) == (b.Result == nil) && reflect.DeepEqual(a.Error, b.Error)
	}
	return false
}
