package wire

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// FuzzSameID checks sameID's shortcut for integer ids against making the
// ID: SameID(a, parseID(b)) is parseID(a) == parseID(b) for valid ids.
func FuzzSameID(f *testing.F) {
	for _, s := range [][2]string{
		{"7", "7"}, {"7", `"7"`}, {"-1", "-1"}, {"007", "7"}, {"+7", "7"},
		{"9007199254740992", "9007199254740992"}, {"9007199254740993", "9007199254740993"},
		{"1e3", "1000"}, {"1.0", "1"}, {`"a"`, `"a"`}, {"null", "null"}, {"", "7"}, {"7 ", "7"},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		id := parseID(b)
		want := id.IsValid() && parseID(a) == id
		if got := SameID(a, id); got != want {
			t.Fatalf("SameID(%q, parseID(%q)) = %v, want %v", a, b, got, want)
		}
		// parseID's shortcut makes the ID a decoder would.
		if n, ok := intID(b); ok {
			var v any
			if json.Unmarshal(b, &v) == nil {
				if ref, err := jsonrpc.MakeID(v); err == nil && ref != id {
					t.Fatalf("parseID(%q) = %v, the decoder's id %v (%d)", b, id.Raw(), ref.Raw(), n)
				}
			}
		}
	})
}
