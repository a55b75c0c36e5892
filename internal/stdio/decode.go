package stdio

import (
	"bytes"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeMessage decodes one JSON-RPC message from a line that json.Valid
// accepted. If owned, the message may keep parts of line.
//
// go-sdk's jsonrpc.DecodeMessage reads its input through a streaming
// decoder, which allocates a 32 KiB buffer for every message (most of the
// bytes a small call allocates on the read side) and, for a large one,
// grows that buffer to the message's size by doubling before copying the
// result out of it: about 3.5 bytes allocated per byte of a 50 MiB
// response. The common shapes (a request, a notification, a response with
// a result) are decoded here instead, with the params or result sliced
// from line (copied once when line is not owned). Everything else goes to
// jsonrpc.DecodeMessage: an error response, escapes or non-ASCII bytes in
// a key, the version, the method or a string id, an id that is not a
// small integer or a string, a null params or result, a duplicate member,
// nesting deeper than go-sdk accepts. The two agree on every valid JSON
// line (FuzzDecodeMessage).
func decodeMessage(line []byte, owned bool) (jsonrpc.Message, error) {
	if m := decodeCommon(line, owned); m != nil {
		return m, nil
	}
	return jsonrpc.DecodeMessage(line)
}

// maxJSONDepth is the nesting go-sdk's decoder accepts (internal/json).
const maxJSONDepth = 1000

// members holds the JSON text of the members of a message that
// decodeCommon reads; nil when absent.
type members struct {
	version, id, method, params, result []byte
}

// scanMembers reads the members of b, valid JSON, if it is an object
// decodeCommon may decode: plain ASCII keys, no "error", no duplicate, no
// nesting deeper than maxJSONDepth. It reports false otherwise.
func scanMembers(b []byte) (m members, ok bool) {
	i := jsonscan.Space(b, 0)
	if i == len(b) || b[i] != '{' {
		return m, false
	}
	i = jsonscan.Space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return m, false // {}: not a message
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return m, false
		}
		end := jsonscan.String(b, i)
		if end < 0 {
			return m, false
		}
		key := b[i+1 : end-1]
		i = jsonscan.Space(b, end)
		if i >= len(b) || b[i] != ':' || !plainASCII(key) {
			return m, false
		}
		i = jsonscan.Space(b, i+1)
		vend := jsonscan.Value(b, i, maxJSONDepth-1)
		if vend < 0 {
			return m, false
		}
		var slot *[]byte
		switch string(key) {
		case "jsonrpc":
			slot = &m.version
		case "id":
			slot = &m.id
		case "method":
			slot = &m.method
		case "params":
			slot = &m.params
		case "result":
			slot = &m.result
		case "error":
			return m, false
		}
		if slot != nil {
			if *slot != nil {
				return m, false // a duplicate member
			}
			*slot = b[i:vend]
		}
		i = jsonscan.Space(b, vend)
		if i >= len(b) {
			return m, false
		}
		if b[i] == '}' {
			i++
			break
		}
		if b[i] != ',' {
			return m, false
		}
		i = jsonscan.Space(b, i+1)
	}
	return m, jsonscan.Space(b, i) == len(b)
}

// decodeCommon decodes b, valid JSON, if it has one of the common shapes,
// and returns nil otherwise.
func decodeCommon(b []byte, owned bool) jsonrpc.Message {
	m, ok := scanMembers(b)
	id, method, params, result := m.id, m.method, m.params, m.result
	if !ok || string(m.version) != `"2.0"` || string(params) == "null" || string(result) == "null" {
		return nil
	}
	var mid jsonrpc.ID
	switch {
	case id == nil || string(id) == "null":
	case id[0] == '"':
		s := id[1 : len(id)-1]
		if !plainASCII(s) {
			return nil
		}
		mid, _ = jsonrpc.MakeID(string(s))
	default:
		n, ok := smallInt(id)
		if !ok {
			return nil
		}
		mid, _ = jsonrpc.MakeID(float64(n)) // go-sdk's own path: a JSON number is a float64
	}
	if method != nil {
		if method[0] != '"' || !plainASCII(method[1:len(method)-1]) {
			return nil
		}
		return &jsonrpc.Request{ID: mid, Method: methodName(method[1 : len(method)-1]), Params: rawPart(params, owned)}
	}
	if !mid.IsValid() {
		return nil // go-sdk's error: a response without an id
	}
	return &jsonrpc.Response{ID: mid, Result: rawPart(result, owned)}
}

// methodName returns b as a string, without allocating for the methods a
// server sends most (a notification flood is mostly the first two).
func methodName(b []byte) string {
	switch string(b) {
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "ping":
		return "ping"
	}
	return string(b)
}

// rawPart returns v as a value of its own: sliced from an owned line, or a
// copy.
func rawPart(v []byte, owned bool) []byte {
	switch {
	case v == nil:
		return nil
	case owned:
		return v[:len(v):len(v)]
	default:
		return bytes.Clone(v)
	}
}

// plainASCII reports whether s has only printable ASCII and no backslash,
// so that its JSON string text is its value.
func plainASCII(s []byte) bool {
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// smallInt parses a JSON integer of at most 15 digits, which a float64
// holds exactly.
func smallInt(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
