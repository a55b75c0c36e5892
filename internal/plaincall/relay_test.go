package plaincall

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayArguments: a relayed call's arguments as sent: absent, empty
// and null (with spaces too) are {}, others as given, and what cannot be
// marshaled is an error.
func TestRelayArguments(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "{}"},
		{json.RawMessage(""), "{}"},
		{json.RawMessage("null"), "{}"},
		{json.RawMessage(" \n null\t"), "{}"},
		{json.RawMessage(` {"a":1} `), `{"a":1}`},
		{map[string]any{"b": "<&>"}, `{"b":"\u003c\u0026\u003e"}`},
	} {
		got, err := RelayArguments(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("RelayArguments(%#v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := RelayArguments(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("arguments that cannot be marshaled were relayed")
	}
}

// TestRelayMeta: the other client's progress token is not sent, the
// caller's identity entries win, and nothing left is nil; m is not
// changed.
func TestRelayMeta(t *testing.T) {
	m := mcp.Meta{"progressToken": 7, "k": "theirs", "a": 1}
	got := RelayMeta(m, map[string]any{"k": "ours"})
	if len(got) != 2 || got["k"] != "ours" || got["a"] != 1 || len(m) != 3 {
		t.Fatalf("got %v, m %v", got, m)
	}
	if got := RelayMeta(mcp.Meta{"progressToken": 7}, nil); got != nil {
		t.Fatalf("only a token: %v", got)
	}
}
