package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzValid: Valid agrees with encoding/json.Valid on every input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		``, ` `, `{}`, `[]`, ` {"a" : [1, -2.5e+3, true, false, null, "x\u00e9\n\"\\\/"]} `,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"a":1,}`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`, `{1:2}`, `{"a":1 "b":2}`, `[1 2]`,
		`01`, `-`, `-0`, `-01`, `1.`, `.5`, `1e`, `1e+`, `1E-7`, `0.0e0`, `1.5x`,
		`tru`, `truex`, `nul`, `falsey`, `"abc`, `"a\x"`, `"\u12"`, `"\u12G4"`, `"\uABCDz"`,
		"\"a\tb\"", "\"a\x7fb\"", "\"\xff\xfe\"", "\"\\\n\"", `{"a":1}}`, `[1]]`, `{"a":[}`, `[{]`,
		`"x" "y"`, `1 2`, "\t\r\n1\t\r\n", "\v1", "\u00a01",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
		strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
		strings.Repeat("[", 70) + strings.Repeat("]", 69),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, encoding/json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":100000000000001,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcptestserver","version":"1.0.0"}},"content":[{"type":"text","text":"hello"}],"resultType":"complete"}}`)
	b.Run("jsonscan", func(b *testing.B) {
		for b.Loop() {
			Valid(line)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Valid(line)
		}
	})
}
