package gateway

import (
	"bytes"
	"encoding/json"
	"reflect"
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

// TestEncodedCaps: the capabilities forwardMeta sends for a lean
// one-request session (encodedCaps, kept by the bytes the client wrote)
// encode, in the _meta of the upstream request, to the bytes capsMeta's
// map encodes to, by either encoder (the client's fast path, which does
// not escape HTML, or encoding/json's default), for each capabilities
// in turn and again.
func TestEncodedCaps(t *testing.T) {
	raws := []string{
		`{}`,
		`{"roots":{"listChanged":true}}`,
		`{"roots":{}}`,
		`{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}}}`,
		`{"experimental":{"z":{"<a&b>":[1.5,"\u2028"]},"a":{}},"roots":{"listChanged":false},"sampling":{}}`,
		`{"extensions":{"io.x/y":{"k":"v"}},"tasks":{"requests":{"sampling":{"createMessage":{}}}}}`,
		` {"elicitation" : {} } `,
	}
	g := &Gateway{}
	encoders := map[string]func(any) ([]byte, error){
		"fast path": func(v any) ([]byte, error) {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			err := enc.Encode(v)
			return buf.Bytes(), err
		},
		"encoding/json": json.Marshal,
	}
	for round := range 2 {
		for _, raw := range raws {
			caps, ok := decodeAsSDK[capabilitiesV2]([]byte(raw))
			if !ok {
				t.Fatalf("%s: not decoded", raw)
			}
			c := caps.v1()
			got := g.encodedCaps([]byte(raw), c)
			for range 2 { // the second from its memo
				if other := g.sessionCaps(c); !reflect.DeepEqual(other, got) {
					t.Errorf("%s: sessionCaps gave %s, encodedCaps %s", raw, other, got)
				}
			}
			want := capsMeta(c)
			for name, encode := range encoders {
				gb, gerr := encode(map[string]any{"k": got})
				wb, werr := encode(map[string]any{"k": want})
				if gerr != nil || werr != nil || !bytes.Equal(gb, wb) {
					t.Errorf("round %d, %s, %s:\n got %s (%v)\nwant %s (%v)", round, raw, name, gb, gerr, wb, werr)
				}
			}
		}
	}
}
