package plaincall

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPlainDepth bounds the nesting of a structuredContent DecodeResult
// takes as it is; go-sdk refuses a result nested deeper than 1000 levels,
// and a deeper one is left to its decoder, which says so.
const maxPlainDepth = 900

// DecodeResult decodes b, the result of a tools/call (valid JSON), when
// it has the common shape: an object with no member but "content" (text
// blocks only, each with no member but "type" and "text"), "isError" (true
// or false), "structuredContent" (kept as the server wrote it; go-sdk
// decodes it into maps that the conversion does not use when the raw text
// is known), "_meta" (see plainValue) and "resultType": "complete", each
// at most once, and strings without \u escapes. It
// reports false for anything else, which go-sdk's decoder then decodes:
// so the two agree on every result (FuzzDecodeResult).
//
// memo, if not nil, keeps the last _meta decoded (see MetaMemo).
func DecodeResult(b []byte, memo *MetaMemo) (*mcp.CallToolResult, bool) {
	res := &mcp.CallToolResult{}
	var seen [5]bool
	ok := EachMember(b, func(key, v []byte) bool {
		switch string(key) {
		case "content":
			if seen[0] {
				return false
			}
			seen[0] = true
			content, ok := plainContent(v)
			res.Content = content
			return ok
		case "isError":
			if seen[1] {
				return false
			}
			seen[1] = true
			switch string(v) {
			case "true":
				res.IsError = true
			case "false":
			default:
				return false
			}
			return true
		case "structuredContent":
			if seen[2] {
				return false
			}
			seen[2] = true
			if string(v) == "null" {
				return true
			}
			if !plainNumbers(v) || jsonscan.Value(v, 0, maxPlainDepth) != len(v) {
				return false
			}
			res.StructuredContent = json.RawMessage(v)
			return true
		case "_meta":
			if seen[3] || len(v) == 0 || v[0] != '{' {
				return false
			}
			seen[3] = true
			m, ok := memo.decode(v)
			res.Meta = m
			return ok
		case "resultType":
			// go-sdk keeps it only to tell input_required apart.
			if seen[4] || string(v) != `"complete"` {
				return false
			}
			seen[4] = true
			return true
		}
		return false
	})
	if !ok {
		return nil, false
	}
	return res, true
}

// plainContent decodes v, a JSON array of text blocks.
func plainContent(v []byte) ([]mcp.Content, bool) {
	if len(v) == 0 || v[0] != '[' {
		return nil, false
	}
	var out []mcp.Content
	i := jsonscan.Space(v, 1)
	if i < len(v) && v[i] == ']' {
		return []mcp.Content{}, jsonscan.Space(v, i+1) == len(v)
	}
	for i < len(v) {
		end := jsonscan.Value(v, i, 3)
		if end < 0 {
			return nil, false
		}
		tc, ok := plainText(v[i:end])
		if !ok {
			return nil, false
		}
		out = append(out, tc)
		i = jsonscan.Space(v, end)
		if i >= len(v) {
			return nil, false
		}
		switch v[i] {
		case ']':
			return out, jsonscan.Space(v, i+1) == len(v)
		case ',':
			i = jsonscan.Space(v, i+1)
		default:
			return nil, false
		}
	}
	return nil, false
}

// plainText decodes b, a JSON object with no member but "type": "text"
// and "text".
func plainText(b []byte) (*mcp.TextContent, bool) {
	var typ, text []byte
	ok := EachMember(b, func(key, v []byte) bool {
		switch string(key) {
		case "type":
			if typ != nil {
				return false
			}
			typ = v
		case "text":
			if text != nil {
				return false
			}
			text = v
		default:
			return false
		}
		return true
	})
	if !ok || string(typ) != `"text"` || text == nil {
		return nil, false
	}
	s, ok := String(text)
	if !ok {
		return nil, false
	}
	return &mcp.TextContent{Text: s}, true
}

// plainNumbers reports whether every number in the JSON text v is one a
// float64 holds without question: no exponent and at most 15 digits
// (go-sdk's decoder refuses a number out of a float64's range).
func plainNumbers(v []byte) bool {
	run := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			end := jsonscan.String(v, i)
			if end < 0 {
				return false
			}
			i = end - 1
			run = 0
		case c == 't' || c == 'n':
			i += 3 // true, null
			run = 0
		case c == 'f':
			i += 4 // false
			run = 0
		case c == 'e' || c == 'E':
			return false
		case c >= '0' && c <= '9':
			if run++; run > 15 {
				return false
			}
		case c == '.' || c == '-':
		default:
			run = 0
		}
	}
	return true
}

// plainValue decodes the JSON value v as go-sdk's decoder does into an
// any (maps, slices, float64, string, bool, nil), when its strings have
// no \u escape, its numbers pass plainNumbers and it nests at most
// maxPlainDepth levels; it reports false otherwise.
func plainValue(v []byte, depth int) (any, bool) {
	if depth > maxPlainDepth || len(v) == 0 {
		return nil, false
	}
	switch c := v[0]; {
	case c == '{':
		m := map[string]any{}
		ok := EachMember(v, func(key, val []byte) bool {
			x, ok := plainValue(val, depth+1)
			if !ok {
				return false
			}
			m[string(key)] = x
			return true
		})
		return m, ok
	case c == '[':
		out := []any{}
		i := jsonscan.Space(v, 1)
		if i < len(v) && v[i] == ']' {
			return out, jsonscan.Space(v, i+1) == len(v)
		}
		for i < len(v) {
			end := jsonscan.Value(v, i, 0)
			if end < 0 {
				return nil, false
			}
			x, ok := plainValue(v[i:end], depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, x)
			i = jsonscan.Space(v, end)
			if i >= len(v) {
				return nil, false
			}
			switch v[i] {
			case ']':
				return out, jsonscan.Space(v, i+1) == len(v)
			case ',':
				i = jsonscan.Space(v, i+1)
			default:
				return nil, false
			}
		}
		return nil, false
	case c == '"':
		return String(v)
	case string(v) == "true":
		return true, true
	case string(v) == "false":
		return false, true
	case string(v) == "null":
		return nil, true
	}
	if !plainNumbers(v) {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// maxMemoMeta is the size of the largest _meta a MetaMemo keeps.
const maxMemoMeta = 1 << 10

// MetaMemo keeps the last result _meta DecodeResult decoded on a
// session, and what it decoded to. A server often sends the same _meta
// with every result (a 2026-07-28 go-sdk server sends its serverInfo), and
// copying the maps costs about a third of decoding them again. The kept
// maps are never handed out: every result gets a copy of its own.
type MetaMemo struct {
	last atomic.Pointer[decodedMeta]
}

type decodedMeta struct {
	raw []byte
	v   map[string]any
}

// decode decodes v, a JSON object, as plainValue does.
func (m *MetaMemo) decode(v []byte) (map[string]any, bool) {
	if m != nil {
		if d := m.last.Load(); d != nil && bytes.Equal(d.raw, v) {
			return copyValue(d.v).(map[string]any), true
		}
	}
	x, ok := plainValue(v, 0)
	meta, _ := x.(map[string]any)
	if ok && m != nil && meta != nil && len(v) <= maxMemoMeta {
		m.last.Store(&decodedMeta{raw: bytes.Clone(v), v: copyValue(meta).(map[string]any)})
	}
	return meta, ok
}

// copyValue returns a copy of x, a value plainValue made, that shares no
// map or slice with it (strings, numbers and booleans need no copy).
func copyValue(x any) any {
	switch x := x.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, v := range x {
			m[k] = copyValue(v)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, v := range x {
			s[i] = copyValue(v)
		}
		return s
	}
	return x
}
