package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// checkArgsByMap is checkArgs as it reads every argument: into a map of
// its members.
func checkArgsByMap(args json.RawMessage) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: $.arguments must be a JSON object: " + err.Error()}
	}
	return nil
}

// hostileArgs are arguments a client may send: nested past every
// decoder's limit, huge, members named twice, not objects, in white
// space, not JSON, numbers past a float64, bytes that are not UTF-8.
func hostileArgs() []string {
	return []string{
		``, `null`, `{}`, ` {} `, "\t\n{\"a\":1}\r\n", `{"a":1,"a":2}`, `[]`, `[{}]`, `true`, `1`, `"{}"`, `nul`,
		`{"a":1e400,"b":-1e400,"c":` + strings.Repeat("9", 1000) + `}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000),
		`{"a":"` + strings.Repeat("x", 1<<20) + `"}`,
		`{"a":1,}`, `{"a":1}}`, `{"a":1} {"b":2}`, `{"a":1}x`, `{`, `{"a"`, `{'a':1}`, `{"a":01}`,
		"{\"a\xff\":\"\xfe\"}", `{"\ud800":"\udc00"}`, "{\"a\":\"\x00\"}", "\ufeff{}", `{"a":NaN}`, `{"a":Infinity}`, `{"a":-}`,
	}
}

// TestCheckArgs: checkArgs answers hostile arguments as reading them into
// a map of their members does: the same refusals, word for word.
func TestCheckArgs(t *testing.T) {
	for _, a := range hostileArgs() {
		got, want := checkArgs(json.RawMessage(a)), checkArgsByMap(json.RawMessage(a))
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("arguments %.60q: %v, want %v", a, got, want)
		}
	}
	for _, a := range []string{`[]`, `1`, `{"a":1,}`, strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat(`}`, 20000)} {
		if checkArgs(json.RawMessage(a)) == nil {
			t.Errorf("arguments %.60q taken", a)
		}
	}
}

// FuzzCheckArgs: checkArgs answers any arguments as reading them into a
// map of their members does.
func FuzzCheckArgs(f *testing.F) {
	for _, a := range hostileArgs() {
		if len(a) < 4096 {
			f.Add(a)
		}
	}
	f.Fuzz(func(t *testing.T, a string) {
		got, want := checkArgs(json.RawMessage(a)), checkArgsByMap(json.RawMessage(a))
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Fatalf("arguments %q: %v, want %v", a, got, want)
		}
	})
}
