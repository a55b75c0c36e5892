package mcpadapter

import (
	"encoding/json"
	"testing"
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
		got, err := relayArguments(tc.in)
		if err != nil || string(got) != tc.want {
			t.Errorf("relayArguments(%#v) = %s, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	if _, err := relayArguments(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("arguments that cannot be marshaled were relayed")
	}
}
