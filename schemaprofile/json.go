package schemaprofile

import (
	"strings"

	"github.com/mcpadapter/mcpadapter/internal/jsontree"
)

// maxDepth bounds the nesting of JSON values this package reads.
const maxDepth = 256

// object is a JSON object that keeps its keys in input order (the order of
// properties is what a model reads, and strict OpenAI generates in it); the
// tree is shared with the eino binding.
type object = jsontree.Object

func newObject() *object { return jsontree.New() }

func cloneValue(v any) any { return jsontree.CloneValue(v) }

// decode reads one JSON value, objects as *object and numbers as
// json.Number.
func decode(data []byte) (any, error) { return jsontree.Parse(data, maxDepth) }

// encode writes v as compact JSON, object keys in their order.
func encode(v any) []byte { return jsontree.Encode(v) }

// text renders v compactly for a description, shortened to 200 bytes.
func text(v any) string {
	s := string(encode(v))
	if len(s) > 200 {
		s = s[:197] + "..."
	}
	return s
}

// ptr appends a token to a JSON Pointer.
func ptr(base string, tok ...string) string {
	for _, t := range tok {
		t = strings.ReplaceAll(t, "~", "~0")
		base += "/" + strings.ReplaceAll(t, "/", "~1")
	}
	return base
}

// unptr decodes one JSON Pointer token.
func unptr(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
