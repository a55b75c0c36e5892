package mcpadapter

import (
	"io"
	"strings"
	"testing"
)

// The translator finds the call's id after a result bigger than its read
// buffer (the TypeScript SDK's order), in a JSON body and in every line of
// an event stream, holding only the id's value; nested ids and a string id
// are left as they are.
func TestIDTranslatorIDAfterResult(t *testing.T) {
	big := strings.Repeat("x", 3*translateWindow)
	msg := `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":77}`
	want := strings.Replace(msg, `"id":77`, `"id":5`, 1)
	h := &handoff{ours: "77", sdk: "5"}
	for _, c := range []struct {
		name, body, want string
		stream           bool
	}{
		{"json", msg, want, false},
		{"stream", "event: message\ndata: " + msg + "\n\ndata: " + msg + "\r\n\r\n", "event: message\ndata: " + want + "\n\ndata: " + want + "\r\n\r\n", true},
		{"nested ids and a string id", `data: {"id" : "77","result":{"id":77}}` + "\n" + `data: {"result":{"id":77},"id":77 }` + "\n", `data: {"id" : "77","result":{"id":77}}` + "\n" + `data: {"result":{"id":77},"id":5 }` + "\n", true},
	} {
		got, err := io.ReadAll(h.translating(io.NopCloser(strings.NewReader(c.body)), c.stream))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %d bytes (equal: %v), %v", c.name, len(got), string(got) == c.want, err)
		}
	}
}
