package gateway

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path's reading of a request's body (fastpath.go): its envelope
// and params, as go-sdk reads them.

// parseFast reads body as one JSON-RPC tools/call request, or returns
// nil.
func parseFast(body []byte) *fastRequest {
	req, ok := readEnvelope(body)
	if !ok || len(req.Params) == 0 {
		return nil
	}
	// Members by their exact names, as go-sdk reads them (encoding/json
	// would match "Name" to name); a member named twice is left to go-sdk.
	p, ok := members(req.Params)
	if !ok {
		return nil
	}
	// A name is taken without escapes, so that it reads the same in every
	// decoder (a lone surrogate's escape, say, may not).
	// The body is valid JSON and UTF-8 (readEnvelope): such a string
	// literal is its text between its quotes.
	raw, ok := p["name"]
	if !ok || len(raw) < 2 || raw[0] != '"' || bytes.IndexByte(raw, '\\') >= 0 {
		return nil
	}
	name := string(raw[1 : len(raw)-1])
	var meta map[string]json.RawMessage
	if raw, ok := p["_meta"]; ok {
		if meta, ok = members(raw); !ok {
			return nil
		}
	}
	plain := true
	for k := range p {
		plain = plain && (k == "name" || k == "arguments" || k == "_meta")
	}
	// go-sdk's transport decodes the params whole (CallToolParams, for
	// the Mcp-Name header; the _meta again, for the protocol version) and
	// refuses a request it cannot decode: a plain request's can fail only
	// on a number too big for a float64; another's is decoded here.
	if !numbersFit(req.Params) {
		return nil
	}
	if !plain {
		if _, ok := decodeAsSDK[mcp.CallToolParams](req.Params); !ok {
			return nil
		}
	}
	return &fastRequest{msg: req, name: name, meta: meta, pm: p, plain: plain}
}

// fastMaxDepth bounds the nesting of a request the fast path reads (go-sdk
// refuses more than 1000 levels; a request nested deeper than this goes to
// go-sdk, which says so).
const fastMaxDepth = 500

// isIntID reports whether raw is an id the fast path takes as an
// integer: at most 15 digits, without a leading zero, after an optional
// minus sign (^-?(0|[1-9][0-9]{0,14})$).
func isIntID(raw string) bool {
	s := strings.TrimPrefix(raw, "-")
	if s == "" || len(s) > 15 {
		return false
	}
	if s[0] == '0' {
		return len(s) == 1
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readEnvelope reads body as one JSON-RPC tools/call request, as go-sdk's
// jsonrpc.DecodeMessage reads it, for the requests whose reading is plain:
// valid UTF-8, nested at most fastMaxDepth levels, one JSON object and
// nothing after it but white space, with exactly the members jsonrpc
// ("2.0"), id (a string without escapes, or an integer of at most 15
// digits), method ("tools/call") and params (an object), each once. It
// reports false for any other body (which then goes to go-sdk).
// FuzzFastRequest checks that it agrees with jsonrpc.DecodeMessage.
func readEnvelope(body []byte) (*jsonrpc.Request, bool) {
	if !utf8.Valid(body) || !shallow(body, fastMaxDepth) || !json.Valid(body) {
		return nil, false
	}
	// Its four members, each once (as members reads them, without a map).
	spans, ok := memberSpans(body)
	if !ok || len(spans) != 4 {
		return nil, false
	}
	var m [4][]byte // jsonrpc, id, method, params
	for _, s := range spans {
		i := slices.Index(envelopeMembers[:], s.key)
		if i < 0 || m[i] != nil {
			return nil, false
		}
		m[i] = body[s.value:s.end:s.end]
	}
	if string(m[0]) != `"2.0"` || string(m[2]) != `"tools/call"` || !isObject(m[3]) {
		return nil, false
	}
	var id jsonrpc.ID
	raw := string(m[1])
	switch {
	case len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && !strings.ContainsAny(raw[1:len(raw)-1], "\\\"") && !hasControl(raw):
		id, _ = jsonrpc.MakeID(raw[1 : len(raw)-1])
	case isIntID(raw):
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, false
		}
		id, _ = jsonrpc.MakeID(float64(n))
	default:
		return nil, false
	}
	return &jsonrpc.Request{ID: id, Method: "tools/call", Params: m[3]}, true
}

// envelopeMembers are the members of a request readEnvelope reads.
var envelopeMembers = [4]string{"jsonrpc", "id", "method", "params"}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 }) >= 0
}

// shallow reports whether data nests at most max levels of objects and
// arrays, counted as go-sdk counts them.
func shallow(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return false
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return true
}

// numbersFit reports whether every number in data, valid JSON, fits a
// float64: go-sdk's transport decodes a request's _meta (numbers as
// float64) and, when it cannot, refuses the request as one without a
// protocol version.
func numbersFit(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch b := data[i]; {
		case b == '"':
			i = stringEnd(data, i) - 1
		case b == '-' || b >= '0' && b <= '9':
			j, long := i, false
			for ; j < len(data) && isNumberByte(data[j]); j++ {
				long = long || data[j] == 'e' || data[j] == 'E' || j-i > 300
			}
			if long {
				if _, err := strconv.ParseFloat(string(data[i:j]), 64); err != nil {
					return false
				}
			}
			i = j - 1
		}
	}
	return true
}

func isNumberByte(b byte) bool {
	return b >= '0' && b <= '9' || b == '-' || b == '+' || b == '.' || b == 'e' || b == 'E'
}

func isObject(b json.RawMessage) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// metaString returns the string at key in m, as json.Unmarshal reads it
// into a string (null: ""); m's values are valid JSON.
func metaString(m map[string]json.RawMessage, key string) (string, bool) {
	raw, ok := m[key]
	if !ok {
		return "", false
	}
	if string(raw) == "null" {
		return "", true
	}
	return stringLiteral(raw)
}
