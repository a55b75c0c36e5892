package mcpadapter

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// The hand-over's id translation reads an event stream in pieces (here
// of 16 bytes, bufio's smallest) and changes the call's id wherever go-sdk
// or the Tap reads it: the top-level id of each event's message, joined
// from its data lines, in any form equal in go-sdk's reading, and the id
// at the end of a message that is not valid JSON; nothing else.
func TestIDTranslatorStream(t *testing.T) {
	from := "100000000000007"
	for _, c := range []struct{ in, want string }{
		{"data: {\"jsonrpc\":\"2.0\",\"id\":" + from + ",\"result\":{\"id\":" + from + "}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"id\":" + from + "}}\n\n"},
		{"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":" + from + ".0,\"result\":{}}\n\n",
			"data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":3,\"result\":{}}\n\n"},
		{"data: {\"result\":{\"text\":\"" + strings.Repeat("x", 300) + "\"},\"id\":" + from + "e0}\r\n\r\n",
			"data: {\"result\":{\"text\":\"" + strings.Repeat("x", 300) + "\"},\"id\":3}\r\n\r\n"},
		{"data: {\"result\":data: {\"a\":[" + strings.Repeat("1,", 200) + "1,\"id\":" + from + "}",
			"data: {\"result\":data: {\"a\":[" + strings.Repeat("1,", 200) + "1,\"id\":3}"},
		{"id: " + from + "\ndata: {\"method\":\"x\",\"params\":{\"id\":" + from + "}}\n\ndata: {\"id\":" + from + "1}\n\n",
			"id: " + from + "\ndata: {\"method\":\"x\",\"params\":{\"id\":" + from + "}}\n\ndata: {\"id\":" + from + "1}\n\n"},
	} {
		body := io.NopCloser(strings.NewReader(c.in))
		tr := &idTranslator{src: bufio.NewReaderSize(body, 16), body: body, stream: true, start: true, scan: idScanner{from: from, to: "3"}}
		got, err := io.ReadAll(tr)
		if err != nil || string(got) != c.want {
			t.Errorf("%q:\n got %q (%v)\nwant %q", c.in, got, err, c.want)
		}
	}
}
