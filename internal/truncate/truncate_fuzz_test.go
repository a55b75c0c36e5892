package truncate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzText checks the result limit on any text and limit: never over the
// limit, valid UTF-8 kept valid, a prefix of the text, and a note that
// tells the truth about what was shown.
func FuzzText(f *testing.F) {
	f.Add("hello", 3)
	f.Add(strings.Repeat("é€😀", 200), 300)
	f.Add(strings.Repeat("x", 1000), 256)
	f.Add("\xff\xfe\xfd partial \xe2\x82", 12)
	f.Add(strings.Repeat("日本語", 50), 100)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit > 1<<20 {
			limit %= 1 << 20
		}
		out, shown, cut := Text(s, limit)
		if limit <= 0 || len(s) <= limit {
			if out != s || cut {
				t.Fatalf("a text that fits was changed")
			}
			return
		}
		if !cut || len(out) > limit {
			t.Fatalf("limit %d: got %d bytes (cut %v)", limit, len(out), cut)
		}
		if !strings.HasPrefix(s, out[:shown]) {
			t.Fatal("the text shown is not a prefix of the text")
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatal("valid UTF-8 made invalid")
		}
		if len(out) > shown && out[shown:] != Note(shown, len(s)) {
			t.Fatalf("the note says something else: %q", out[shown:])
		}
	})
}
