package streamable

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkLateBody reads a 2026-07-28 call's event stream, a large
// result and no late answer, through a lateBody.
func BenchmarkLateBody(b *testing.B) {
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t"}}`)
	stream := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"" + strings.Repeat("x", 1<<20) + "\"}]}}\n\n")
	hr, err := http.NewRequest(http.MethodPost, "http://x/mcp", bytes.NewReader(req))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		lb := &lateBody{rc: io.NopCloser(bytes.NewReader(stream)), req: hr, limit: 1 << 20, boundary: true}
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{lb}, buf); err != nil {
			b.Fatal(err)
		}
	}
}
