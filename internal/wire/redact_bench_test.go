package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// redactInputs are messages of about size bytes built to make the
// redaction work hard: one long string of base64 (a file's content),
// text dense with the prefilters' literals (colons after secret names,
// "=" after them, "eyJ", dashes, "://" and "@", JSON escapes), and many
// small strings under non-secret names.
func redactInputs(size int) map[string][]byte {
	doc := func(text string) []byte {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"text": text}})
		return b
	}
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)+1)[:size] }
	many := make([]any, 0, size/32)
	for i := 0; len(many) < size/32; i++ {
		many = append(many, map[string]any{"n": strconv.Itoa(i), "v": "ab:cd=ef-gh"})
	}
	manyDoc, _ := json.Marshal(map[string]any{"items": many})
	names := make(map[string]int, size/32)
	for i := 0; len(names) < size/32; i++ {
		names["https://h/x?token=v"+strconv.Itoa(i)] = i
	}
	memberNames, _ := json.Marshal(names)
	return map[string][]byte{
		"base64":     doc(fill("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw==")),
		"names":      doc(fill("x\npassword: v\n\"token\": \"v\" a ")),
		"colons":     doc(fill(":")),
		"spaces":     doc("a" + fill(" ") + ":"),
		"params":     doc(fill("?token=v&key=w ")),
		"jwts":       doc(fill("eyJhbGciOi.eyJzdWIiOi.sig ")),
		"flags":      doc(fill(" --token v -")),
		"userinfo":   doc(fill("https://u:p@h ://a:")),
		"escapes":    doc(fill(`Bear\u0065r x `)),
		"authheader": doc(fill("\nAuthorization: Custom v")),
		"nested":     doc(fill(`{"a":"{\"b\":\"x\"}"}`)),
		"many":       manyDoc,
		// Values the text scans read to their end: many on one line
		// (each once read to the end of the line), quoted values behind
		// many backslashes, folded lines, schemes followed by words.
		"bracevalues": doc(fill("{token:a,")),
		"quoted":      doc(fill(`"token":"`)),
		"backslashes": doc(`"password": ` + fill(`\`) + fill(`"`)),
		"folded":      doc(fill("token: |\n  a\n")),
		"schemewords": doc(fill("digest basic ")),
		"memberNames": memberNames,
	}
}

// BenchmarkRedactJSON measures the redaction of 1 MiB and 4 MiB
// messages: each input's time per byte should not grow with its size.
func BenchmarkRedactJSON(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		for name, in := range redactInputs(size) {
			b.Run(name+"/"+strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				for b.Loop() {
					RedactJSON(in)
				}
			})
		}
	}
}
