package wire

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/order"
)

// benchPOSTStream reads body as the event stream of a tools/call POST
// with the connection's markers, as go-sdk reads it.
func benchPOSTStream(b *testing.B, body []byte) {
	b.Helper()
	t := &Tap{MaxMessageBytes: 8 << 20, Marks: order.New()}
	req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, "http://127.0.0.1/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(bytes.NewReader(body))}
		t.limitBody(req, resp)
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPOSTStreamLogs: a call's stream of ten log messages and its
// answer; every log message is tagged.
func BenchmarkPOSTStreamLogs(b *testing.B) {
	var body []byte
	for range 10 {
		body = append(body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"x\",\"data\":\"step done\"}}\n\n"...)
	}
	body = append(body, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n"...)
	benchPOSTStream(b, body)
}

// BenchmarkPOSTStreamBigLog: a call's stream of one 4 MiB log message and
// its answer.
func BenchmarkPOSTStreamBigLog(b *testing.B) {
	body := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"_meta\":{\"a\":1},\"data\":\"")
	body = append(body, bytes.Repeat([]byte("x"), 4<<20)...)
	body = append(body, "\"}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n"...)
	benchPOSTStream(b, body)
}

// BenchmarkPOSTStreamBigLogLines: the 4 MiB log message in 64-byte data
// lines.
func BenchmarkPOSTStreamBigLogLines(b *testing.B) {
	body := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":[\n")
	line := []byte("data: \"" + strings.Repeat("x", 56) + "\",\n")
	for range (4 << 20) / len(line) {
		body = append(body, line...)
	}
	body = append(body, "data: \"end\"]}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\n\n"...)
	benchPOSTStream(b, body)
}
