package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fastMeta returns the _meta the fast path sends with params: on a
// 2026-07-28 connection, params' own entries over those go-sdk adds, as
// go-sdk sends them.
func (s *Session) fastMeta(params *mcp.CallToolParams) ([]byte, error) {
	m := s.fast.meta.Load()
	if len(params.Meta) == 0 {
		if m == nil {
			return nil, nil
		}
		return m.all, nil
	}
	if b, ok := appendMeta(nil, params.Meta, m); ok {
		return b, nil
	}
	out := make(map[string]any, len(params.Meta)+3)
	for k, v := range params.Meta {
		out[k] = v
	}
	if m != nil {
		for i, k := range sdkMetaKeys() {
			if _, ok := out[k]; !ok && m.vals[i] != nil {
				out[k] = m.vals[i]
			}
		}
	}
	b, err := marshalMeta(out)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling the request's _meta: %w", "tools/call", err)
	}
	return b, nil
}

// marshalMeta returns v as go-sdk writes it in a request: JSON without
// HTML escaping (<, > and & as they are).
func marshalMeta(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// appendMeta appends to buf what fastMeta's marshalMeta writes for own's
// entries over those of learned (nil: none) that own lacks, without
// encoding/json's reflection, when every name and every string value is
// printable ASCII without quotes or backslashes and every other value is a
// json.RawMessage (what the gateway forwards: the client's capabilities,
// its log level); ok is false for anything else, which marshalMeta then
// writes. FuzzAppendMeta holds it to marshalMeta, byte for byte.
func appendMeta(buf []byte, own mcp.Meta, learned *learnedMeta) (_ []byte, ok bool) {
	sdkKeys := sdkMetaKeys()
	value := func(k string) any {
		if v, given := own[k]; given {
			return v
		}
		return learned.vals[slices.Index(sdkKeys[:], k)]
	}
	var keyArr [8]string
	keys := keyArr[:0]
	for k := range own {
		keys = append(keys, k)
	}
	if learned != nil {
		for i, k := range sdkKeys {
			if _, given := own[k]; !given && learned.vals[i] != nil {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys) // encoding/json writes a map's entries sorted by name
	size := 2
	for _, k := range keys {
		size += len(k) + 4
		switch v := value(k).(type) {
		case string:
			size += len(v) + 2
		case json.RawMessage:
			size += len(v) + 4
		}
	}
	buf = slices.Grow(buf, size)
	buf = append(buf, '{')
	for n, k := range keys {
		if !plainString(k) {
			return nil, false
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, k...)
		buf = append(buf, '"', ':')
		switch v := value(k).(type) {
		case string:
			if !plainString(v) {
				return nil, false
			}
			buf = append(buf, '"')
			buf = append(buf, v...)
			buf = append(buf, '"')
		case json.RawMessage:
			if v == nil {
				buf = append(buf, "null"...)
				continue
			}
			if !json.Valid(v) {
				return nil, false // marshalMeta says why
			}
			if bytes.ContainsAny(v, " \t\r\n") {
				// encoding/json compacts a RawMessage; Compact is what it
				// calls, without HTML escaping.
				b := bytes.NewBuffer(buf)
				if json.Compact(b, v) != nil {
					return nil, false
				}
				buf = b.Bytes()
				continue
			}
			buf = append(buf, v...)
		default:
			return nil, false
		}
	}
	return append(buf, '}'), true
}

// plainString reports whether encoding/json writes s as it is, between
// quotes: printable ASCII without quotes or backslashes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
