package mcpadapter

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/truncate"
)

// FuzzTruncateText checks that a result's ModelContent and Text keep to
// its limit on any text and limit, block by block, valid UTF-8 kept valid,
// and that FullText stays whole.
func FuzzTruncateText(f *testing.F) {
	f.Add("hello", 3)
	f.Add(strings.Repeat("é€😀", 200), 300)
	f.Add(strings.Repeat("x", 1000), 256)
	f.Add("\xff\xfe\xfd partial \xe2\x82", 12)
	f.Add(strings.Repeat("日本語", 50), 100)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit > 1<<20 {
			limit %= 1 << 20
		}
		if limit <= 0 || len(s) <= limit {
			return // nothing to cut (internal/truncate's FuzzText checks the text itself)
		}

		// The same text as two blocks, for ModelContent.
		half := truncate.UTF8(s, len(s)/2)
		r := &Result{Content: []Content{&TextContent{Text: half}, &TextContent{Text: s[len(half):]}}}
		r.SetTextLimit(limit)
		m := &Result{Content: r.ModelContent()}
		if got := len(m.render()); got > limit {
			t.Fatalf("ModelContent: %d bytes of text over the limit %d", got, limit)
		}
		if utf8.ValidString(s) && !utf8.ValidString(m.render()) {
			t.Fatal("ModelContent: valid UTF-8 made invalid")
		}
		if len(r.Text()) > limit {
			t.Fatalf("Text: %d bytes over the limit %d", len(r.Text()), limit)
		}
		if r.FullText() != half+"\n"+s[len(half):] {
			t.Fatal("FullText is not the whole text")
		}
	})
}
