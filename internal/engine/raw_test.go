package engine

import (
	"testing"
)

// TestRawMembers checks that structured content and content blocks come
// back as the server wrote them, and nil when there is nothing to take.
func TestRawMembers(t *testing.T) {
	res := SentResult(`{"content":[{"type":"text","text":"a"},{"type":"x", "n":1.50}],"structuredContent":{"b": 2.0}}`)
	if got := string(RawStructured(res)); got != `{"b": 2.0}` {
		t.Errorf("RawStructured = %s", got)
	}
	if got := string(RawBlock(res, 1)); got != `{"type":"x", "n":1.50}` {
		t.Errorf("RawBlock(1) = %s", got)
	}
	for name, got := range map[string][]byte{
		"no raw":          RawStructured(nil),
		"no result":       RawStructured(SentResult(nil)),
		"null structured": RawStructured(SentResult(`{"structuredContent":null}`)),
		"block past end":  RawBlock(res, 2),
		"no content":      RawBlock(SentResult(`{}`), 0),
		"nil raw block":   RawBlock(nil, 0),
	} {
		if got != nil {
			t.Errorf("%s: %s, want nil", name, got)
		}
	}
}
