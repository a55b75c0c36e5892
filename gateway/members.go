package gateway

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// members returns the members of the JSON object b by their names, each
// value as its bytes in b, or false when b is not one object (with
// nothing but white space around it) or names a member twice. b must be
// valid JSON (json.Valid): members reads it as encoding/json's Decoder
// would, without checking it again.
func members(b []byte) (map[string]json.RawMessage, bool) {
	spans, ok := memberSpans(b)
	if !ok {
		return nil, false
	}
	m := make(map[string]json.RawMessage, len(spans))
	for _, s := range spans {
		if _, dup := m[s.key]; dup {
			return nil, false
		}
		m[s.key] = b[s.value:s.end:s.end]
	}
	return m, true
}

// A memberSpan is where a member of a JSON object is in its bytes: its
// name's opening quote at start, its value from value to end.
type memberSpan struct {
	key               string
	start, value, end int
}

// memberSpans returns the members of the JSON object b in their order,
// or false when b is not one object (with nothing but white space around
// it). b must be valid JSON.
func memberSpans(b []byte) ([]memberSpan, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	spans := make([]memberSpan, 0, 4)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return spans, skipSpace(b, i+1) == len(b)
	}
	for i < len(b) && b[i] == '"' {
		start := i
		end := stringEnd(b, i)
		key, ok := stringLiteral(b[i:end])
		if !ok {
			return nil, false
		}
		if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		end = valueEnd(b, i)
		if end <= i {
			return nil, false
		}
		spans = append(spans, memberSpan{key: key, start: start, value: i, end: end})
		if i = skipSpace(b, end); i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return spans, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
	return nil, false
}

// stringLiteral returns the string a JSON string literal (quotes included)
// stands for.
func stringLiteral(lit []byte) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return commonName(lit[1 : len(lit)-1]), true
	}
	var s string
	return s, json.Unmarshal(lit, &s) == nil
}

// commonName returns b as a string: for the member names every call's
// request or result holds, the constant, without allocating a copy.
func commonName(b []byte) string {
	switch string(b) {
	case "jsonrpc":
		return "jsonrpc"
	case "id":
		return "id"
	case "method":
		return "method"
	case "params":
		return "params"
	case "name":
		return "name"
	case "arguments":
		return "arguments"
	case "_meta":
		return "_meta"
	case "progressToken":
		return "progressToken"
	case mcp.MetaKeyProtocolVersion:
		return mcp.MetaKeyProtocolVersion
	case mcp.MetaKeyClientInfo:
		return mcp.MetaKeyClientInfo
	case mcp.MetaKeyClientCapabilities:
		return mcp.MetaKeyClientCapabilities
	case "content":
		return "content"
	case "structuredContent":
		return "structuredContent"
	case "isError":
		return "isError"
	case "resultType":
		return "resultType"
	case "inputRequests":
		return "inputRequests"
	}
	return string(b)
}

// skipSpace returns the index of the first byte of b at or after i that
// is not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string literal that starts
// at b[i] (a quote), or len(b).
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// valueEnd returns the index just past the JSON value that starts at
// b[i], or i when none starts there.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return j
		}
		j++
	}
	return j
}

// uniqueMembers reports whether no object in b, valid JSON, at any depth,
// names a member twice (by the names its escapes stand for). It reads b
// once, whatever its nesting and its objects' sizes.
func uniqueMembers(b []byte) bool {
	var framesBuf [16]memberFrame
	var keysBuf [32][]byte
	frames, keys := framesBuf[:0], keysBuf[:0] // keys: the open objects' names
	expectKey := false                         // the next string is a member's name
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '{', '[':
			frames = append(frames, memberFrame{object: b[i] == '{', start: len(keys)})
			expectKey = b[i] == '{'
		case '}', ']':
			if len(frames) == 0 {
				return false
			}
			keys = keys[:frames[len(frames)-1].start]
			frames = frames[:len(frames)-1]
			expectKey = false
		case ',':
			expectKey = len(frames) > 0 && frames[len(frames)-1].object
		case '"':
			end := stringEnd(b, i)
			if expectKey {
				key := b[i+1 : end-1]
				if bytes.IndexByte(key, '\\') >= 0 {
					s, ok := stringLiteral(b[i:end])
					if !ok {
						return false
					}
					key = []byte(s)
				}
				var ok bool
				if keys, ok = frames[len(frames)-1].add(keys, key); !ok {
					return false
				}
				expectKey = false
			}
			i = end - 1
		}
	}
	return true
}

// memberFrame is an open object or array of uniqueMembers: the object's
// names read so far are keys[start:], or set once they are many.
type memberFrame struct {
	object bool
	start  int
	set    map[string]bool
}

// add adds key to the names of f, an object's, in keys; ok is false when
// it is there already.
func (f *memberFrame) add(keys [][]byte, key []byte) (_ [][]byte, ok bool) {
	if f.set != nil {
		if f.set[string(key)] {
			return keys, false
		}
		f.set[string(key)] = true
		return keys, true
	}
	for _, k := range keys[f.start:] {
		if bytes.Equal(k, key) {
			return keys, false
		}
	}
	keys = append(keys, key)
	if len(keys)-f.start > 16 {
		f.set = make(map[string]bool, 2*(len(keys)-f.start))
		for _, k := range keys[f.start:] {
			f.set[string(k)] = true
		}
		keys = keys[:f.start]
	}
	return keys, true
}
