package stdio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeLine decodes one line that starts with '{'. If owned, the message
// may keep parts of line. A line that cannot be decoded gets an error that
// says why: invalid JSON (where), a line that ends too early, nesting
// deeper than go-sdk decodes, or not a JSON-RPC message.
func decodeLine(line []byte, owned bool) (jsonrpc.Message, error) {
	if jsonscan.Valid(line) { // json.Valid's verdict, at a quarter of its cost
		msg, err := decodeMessage(line, owned)
		if err == nil {
			return msg, nil
		}
		if d := nestingDepth(line); d > maxJSONDepth {
			return nil, fmt.Errorf("it nests deeper than %d levels (%d), more than go-sdk decodes", maxJSONDepth, d)
		}
		return nil, fmt.Errorf("it is not a valid JSON-RPC message: %w", err)
	}
	if d := nestingDepth(line); d > maxJSONDepth {
		return nil, fmt.Errorf("it nests deeper than %d levels (%d), more than go-sdk decodes", maxJSONDepth, d)
	}
	var raw json.RawMessage
	err := json.Unmarshal(line, &raw)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && se.Offset >= int64(len(line)):
		return nil, fmt.Errorf("it ends before its JSON is complete (truncated after %d bytes)", len(line))
	case errors.As(err, &se):
		return nil, fmt.Errorf("it is not valid JSON: %v at byte %d of %d", se, se.Offset, len(line))
	case err != nil:
		return nil, fmt.Errorf("it is not valid JSON: %w", err)
	}
	return nil, errors.New("it is not valid JSON")
}

// nestingDepth returns how deep the arrays and objects of b nest, reading
// strings as JSON does; b need not be valid JSON.
func nestingDepth(b []byte) int {
	depth, most := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			end := jsonscan.String(b, i)
			if end < 0 {
				return most
			}
			i = end - 1
		case '{', '[':
			depth++
			most = max(most, depth)
		case '}', ']':
			depth--
		}
	}
	return most
}

// lineResponseID returns the id of line, a JSON object that could not be
// decoded, if it is a response: its top-level members are read in order as
// far as they are valid JSON, and the id is found there or, failing that,
// at the end of the line. A "method" member, or one that may be in the
// part that could not be read, makes it a request (or notification) from
// the server: no call is waiting for it.
func lineResponseID(line []byte) (jsonrpc.ID, bool) {
	raw, haveID, method, stop := walkMembers(line)
	if method || bytes.Contains(line[stop:], []byte(`"method"`)) {
		return jsonrpc.ID{}, false
	}
	var id jsonrpc.ID
	ok := false
	if haveID {
		id, ok = makeID(raw)
	} else {
		id, ok = tailResponseID(line[max(0, len(line)-256):])
	}
	return id, ok && id.IsValid()
}

// walkMembers reads the top-level members of the JSON object that b starts,
// as far as they are valid JSON. It returns the value of the first "id"
// member met (a json.Number or a string) and whether there was one,
// whether a "method" member was met, and the offset where reading stopped.
func walkMembers(b []byte) (id any, haveID, method bool, stop int) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false, false, 0
	}
	for dec.More() {
		stop = int(dec.InputOffset())
		k, err := dec.Token()
		if err != nil {
			return id, haveID, method, stop
		}
		switch k {
		case "method":
			method = true
		case "id":
			if !haveID {
				if dec.Decode(&id) != nil {
					return nil, false, method, stop
				}
				haveID = true
				continue
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return id, haveID, method, stop
		}
	}
	return id, haveID, method, len(b)
}

// tailResponseID finds a top-level "id" member at the end of a JSON object,
// from its last bytes.
func tailResponseID(tail []byte) (jsonrpc.ID, bool) {
	m := tailID.FindSubmatch(tail)
	if m == nil {
		return jsonrpc.ID{}, false
	}
	d := json.NewDecoder(bytes.NewReader(m[1]))
	d.UseNumber()
	var raw any
	if d.Decode(&raw) != nil {
		return jsonrpc.ID{}, false
	}
	return makeID(raw)
}

// undecodable handles line, which could not be decoded for reason: if it
// is a response, the call it answers fails at once with reason; otherwise
// it is skipped as a stray line.
func (c *Conn) undecodable(line []byte, reason error) {
	id, ok := lineResponseID(line)
	if !ok {
		c.noteStray(line)
		return
	}
	err := fmt.Errorf("the server's response could not be decoded: %w", reason)
	c.mu.Lock()
	c.pending = append(c.pending, &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{
		Code:    jsonrpc.CodeParseError,
		Message: err.Error(),
	}})
	c.mu.Unlock()
	c.skipped.add(Skip{Line: cut(line), Err: err})
}
