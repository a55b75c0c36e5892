package plaincall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RelayArguments returns the arguments of a call another client wrote,
// relayed, as JSON: a json.RawMessage as it is, anything else marshaled;
// empty or null means {}.
func RelayArguments(a any) (json.RawMessage, error) {
	var b []byte
	switch a := a.(type) {
	case nil:
	case json.RawMessage:
		b = a
	default:
		var err error
		if b, err = json.Marshal(a); err != nil {
			return nil, fmt.Errorf("marshaling the arguments: %w", err)
		}
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	return b, nil
}

// RelayMeta returns the _meta to send with a relayed call whose other
// client wrote m: a copy of m (go-sdk adds its own entries to the _meta
// of a request it sends) without its progress token, with the entries of
// own (the caller's identity, which the relaying program, not the other
// client, says) over the client's; nil when nothing is left.
func RelayMeta(m mcp.Meta, own map[string]any) mcp.Meta {
	out := make(mcp.Meta, len(m)+len(own))
	maps.Copy(out, m)
	maps.Copy(out, own)
	delete(out, "progressToken")
	if len(out) == 0 {
		return nil
	}
	return out
}
