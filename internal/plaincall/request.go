package plaincall

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// AppendCall appends the tools/call request with id for the tool
// name, with args (one JSON object) and, if not nil, meta as its _meta.
func AppendCall(buf []byte, id int64, name string, args, meta []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"tools/call","params":{`...)
	if meta != nil {
		buf = append(buf, `"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"name":`...)
	buf = appendJSONString(buf, name)
	buf = append(buf, `,"arguments":`...)
	if len(args) == 0 {
		buf = append(buf, "{}"...)
	} else if bytes.ContainsAny(args, "\r\n") {
		// A message is one line: drop the whitespace between tokens.
		var b bytes.Buffer
		if json.Compact(&b, args) == nil {
			buf = append(buf, b.Bytes()...)
		} else {
			buf = append(buf, "{}"...) // unreachable: the caller checked args
		}
	} else {
		buf = append(buf, args...)
	}
	return append(buf, "}}"...)
}

// AppendPing appends a ping request with id and, if not nil, meta as its
// _meta.
func AppendPing(buf []byte, id int64, meta []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"ping"`...)
	if meta != nil {
		buf = append(buf, `,"params":{"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, '}')
	}
	return append(buf, '}')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
