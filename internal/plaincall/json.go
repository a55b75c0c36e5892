package plaincall

import (
	"bytes"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EachMember calls fn with each member of the JSON object b (its key as
// the raw text between the quotes, and its value's text) while fn returns
// true; it reports false if fn did, if b is not an object, or if a key has
// escapes.
func EachMember(b []byte, fn func(key, v []byte) bool) bool {
	return jsonscan.Members(b, 0, func(k, kend, v, vend int) bool {
		key := b[k+1 : kend-1]
		for _, c := range key {
			if c == '\\' || c < 0x20 || c >= 0x7f {
				return false
			}
		}
		return fn(key, b[v:vend])
	})
}

// String decodes b, the text of a JSON string, when it has no \u
// escape and is valid UTF-8 (what go-sdk's decoder would make of the rest
// is left to it).
func String(b []byte) (string, bool) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return "", false
	}
	b = b[1 : len(b)-1]
	if bytes.IndexByte(b, '\\') < 0 {
		if !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i == len(b) {
			return "", false
		}
		switch b[i] {
		case '"', '\\', '/':
			out = append(out, b[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default:
			return "", false
		}
	}
	if !utf8.Valid(out) {
		return "", false
	}
	return string(out), true
}

// AsksInput reports whether result, a tools/call result as sent, asks
// the client for a round of answers in go-sdk's reading (Round): then the
// call is go-sdk's to finish. Only a result that mentions inputRequests
// (in any case, or with a \u escape, which could spell it) is decoded. A
// result go-sdk's decoding panics on (a question that is null) is
// go-sdk's too: its call, which fails on it, says so.
func AsksInput(result []byte) (asks bool) {
	defer func() {
		if recover() != nil {
			asks = true
		}
	}()
	const key = "inputrequests"
	if !bytes.Contains(result, []byte(`\u`)) {
		found := false
		for i := bytes.IndexAny(result, "iI"); i >= 0 && i+len(key) <= len(result); {
			if bytes.EqualFold(result[i:i+len(key)], []byte(key)) {
				found = true
				break
			}
			j := bytes.IndexAny(result[i+1:], "iI")
			if j < 0 {
				break
			}
			i += 1 + j
		}
		if !found {
			return false
		}
	}
	res := new(mcp.CallToolResult)
	if res.UnmarshalJSON(result) != nil {
		return false
	}
	_, _, asks = Round(res)
	return asks
}
