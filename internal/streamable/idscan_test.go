package streamable

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

// The translator finds the call's id after a result bigger than its read
// buffer (the TypeScript SDK's order), in a JSON body and in every line of
// an event stream, holding only the id's value; nested ids and a string id
// are left as they are.
func TestIDTranslatorIDAfterResult(t *testing.T) {
	big := strings.Repeat("x", 3*translateWindow)
	msg := `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":77}`
	want := strings.Replace(msg, `"id":77`, `"id":5`, 1)
	h := &HandOff{ours: "77", sdk: "5"}
	for _, c := range []struct {
		name, body, want string
		stream           bool
	}{
		{"json", msg, want, false},
		{"stream", "event: message\ndata: " + msg + "\n\ndata: " + msg + "\r\n\r\n", "event: message\ndata: " + want + "\n\ndata: " + want + "\r\n\r\n", true},
		{"nested ids and a string id", `data: {"id" : "77","result":{"id":77}}` + "\n\n" + `data: {"result":{"id":77},"id":77 }` + "\n", `data: {"id" : "77","result":{"id":77}}` + "\n\n" + `data: {"result":{"id":77},"id":5 }` + "\n", true},
	} {
		got, err := io.ReadAll(h.translating(io.NopCloser(strings.NewReader(c.body)), c.stream))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %d bytes (equal: %v), %v", c.name, len(got), string(got) == c.want, err)
		}
	}
}

// A response with go-sdk's own id for the handed-over call, which the
// server never saw, answers nothing, as a response with an id other than
// the call's on go-sdk's path: it gets the call's id, which go-sdk does
// not know. A server request with that id is left alone.
func TestTranslateIDSwapsSDKID(t *testing.T) {
	const from, to = "1000000000000001", "7"
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"result":{}}`:                `{"jsonrpc":"2.0","id":1000000000000001,"result":{}}`,
		`{"jsonrpc":"2.0","id":1000000000000001,"result":{}}`: `{"jsonrpc":"2.0","id":7,"result":{}}`,
		`data: {"jsonrpc":"2.0","result":{},"id":7}`:          `data: {"jsonrpc":"2.0","result":{},"id":1000000000000001}`,
		`{"jsonrpc":"2.0","id":7,"method":"ping"}`:            `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":70,"result":{}}`:               `{"jsonrpc":"2.0","id":70,"result":{}}`,
	} {
		if got := string(translateID([]byte(in), from, to)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
