package wire

import (
	"bytes"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/mcpadapter/mcpadapter/internal/order"
)

// logMethod is the method of a server's log message, as go-sdk's servers
// (and most) write it.
const logMethod = `"notifications/message"`

// tagLog appends to dst msg, a JSON-RPC message of the server's read on
// the event stream st (internal/order: Stream), with st's tag in the
// _meta of its params, and reports whether it did: only a log message
// (notifications/message) whose method, params and params' _meta appear
// at most once, unescaped, and whose params are an object is tagged: in
// its _meta when that is an object or null, or in a _meta member of its
// own when there is none.
// Anything else is left as it is (and is then attributed as a message of
// the standalone stream would be).
func tagLog(dst, msg []byte, st order.Stream) ([]byte, bool) {
	var method, params []byte
	methods, paramss := 0, 0
	if !walkObject(msg, nil, func(k, v []byte) bool {
		switch string(k) {
		case "method":
			method, methods = v, methods+1
		case "params":
			params, paramss = v, paramss+1
		}
		return true
	}) || methods != 1 || paramss != 1 || string(method) != logMethod {
		return dst, false
	}
	// Where the edit goes, as offsets in msg: an insertion, or the
	// replacement of a null _meta. A message gets one edit at most (one
	// _meta), which stays on the stack.
	var e struct {
		at, end int // msg[at:end] is replaced (at == end: inserted)
		how     string
		comma   bool // a comma follows the insertion
		set     bool
	}
	base := offsetIn(msg, params)
	members, metas := 0, 0
	if !walkObject(params, nil, func(k, v []byte) bool {
		members++
		if string(k) != "_meta" {
			return true
		}
		metas++
		at := offsetIn(msg, v)
		switch {
		case string(v) == "null":
			e.at, e.end, e.how, e.set = at, at+len(v), order.TagNullMeta, true
		case v[0] == '{':
			inner := jsonscan.Space(v, 1)
			e.at, e.end, e.comma, e.set = at+1, at+1, inner < len(v) && v[inner] != '}', true
		}
		return true
	}) {
		return dst, false
	}
	if metas > 1 {
		return dst, false // which one a decoder keeps is its own affair
	}
	if !e.set {
		if metas > 0 {
			return dst, false // a _meta that is neither an object nor null: go-sdk refuses it
		}
		e.at, e.end, e.how, e.comma = base+1, base+1, order.TagAddedMeta, members > 0
	}
	dst = append(dst, msg[:e.at]...)
	switch e.how {
	case order.TagNullMeta:
		dst = append(dst, '{')
		dst = st.AppendTag(dst, e.how)
		dst = append(dst, '}')
	case order.TagAddedMeta:
		dst = append(dst, `"_meta":{`...)
		dst = st.AppendTag(dst, e.how)
		dst = append(dst, '}')
	default:
		dst = st.AppendTag(dst, e.how)
	}
	if e.comma {
		dst = append(dst, ',')
	}
	prev := e.end
	return append(dst, msg[prev:]...), true
}

// offsetIn returns where sub, a subslice of b, starts in b.
func offsetIn(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// appendTaggedEvent appends the event ev (its lines) with its data
// replaced by data: its other lines (id, event, retry, comments) are kept,
// in their order, and data follows, one data line per line of it, which
// go-sdk joins with line feeds into data again.
func appendTaggedEvent(dst, ev, data []byte) []byte {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
		}
		if !bytes.HasPrefix(line, []byte("data:")) {
			dst = append(dst, line...)
			if line[len(line)-1] != '\n' {
				dst = append(dst, '\n')
			}
		}
	}
	for {
		line, rest, more := bytes.Cut(data, []byte{'\n'})
		dst = append(dst, "data: "...)
		dst = append(append(dst, line...), '\n')
		if !more {
			return dst
		}
		data = rest
	}
}

// untagLog returns data, an event's data read on a stream of m's
// connection, without the tags tagLog put in it: the message as the
// server sent it, for the protocol trace.
func untagLog(data []byte, m *order.Marks) []byte {
	if m == nil {
		return data
	}
	key := m.TagLead()
	if !bytes.Contains(data, key) {
		return data
	}
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		i := bytes.Index(data, key)
		if i < 0 {
			break
		}
		j := i + len(key)
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		how := ""
		if j < len(data) && (data[j] == '+' || data[j] == '~') {
			how = string(data[j])
			j++
		}
		if j >= len(data) || data[j] != '"' {
			out = append(out, data[:j]...)
			data = data[j:]
			continue
		}
		j++ // past the value's closing quote
		switch how {
		case order.TagNullMeta:
			// {"KEY":"N~"} stands for null.
			out = append(out, data[:i-1]...)
			out = append(out, "null"...)
			data = data[j+1:]
		case order.TagAddedMeta:
			// "_meta":{"KEY":"N+"} and the comma after it were added.
			out = append(out, data[:i-len(`"_meta":{`)]...)
			data = data[j+1:]
			if len(data) > 0 && data[0] == ',' {
				data = data[1:]
			}
		default:
			out = append(out, data[:i]...)
			data = data[j:]
			if len(data) > 0 && data[0] == ',' {
				data = data[1:]
			}
		}
	}
	return append(out, data...)
}
