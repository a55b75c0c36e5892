package stdio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// connOver is a Conn reading r, with no process behind it: tests of the
// read path must stop before the end of r.
func connOver(r io.Reader, max int) *Conn {
	return &Conn{r: bufio.NewReaderSize(r, 64*1024), max: max}
}

// readLine returns whole lines of every length, in place when they fit the
// reader's buffer and as one slice of their own otherwise.
func TestStdioReadLineSizes(t *testing.T) {
	t.Parallel()
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
	c := connOver(&in, DefaultMaxMessageBytes)
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
	t.Parallel()
	const max = 128 << 10 // two full chunks of the 64 KiB reader
	for _, extra := range []int{1, 2, 3, 5, 9, 300} {
		line := bigResponse(max+extra, "4242")
		c := connOver(bytes.NewReader(append(line, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"...)), max)
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
		c := connOver(bytes.NewReader(bigResponse(n, "7")), DefaultMaxMessageBytes)
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
		c := connOver(bytes.NewReader(line), DefaultMaxMessageBytes)
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
	c := connOver(r, DefaultMaxMessageBytes)
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(line)
		if _, err := c.Read(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

// responseID never panics, whatever the first and last bytes of a line.
func FuzzResponseID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[`), []byte(`aaa"}]}}`))
	f.Add([]byte(`{"result":{"content":[{"type":"text","text":"`), []byte(`xx"}]},"jsonrpc":"2.0","id":"abc"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x","id":1`), []byte(``))
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		_, _ = responseID(head, tail)
	})
}
