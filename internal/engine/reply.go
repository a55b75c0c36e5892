package engine

import (
	"encoding/json"
	"fmt"

	"github.com/mcpadapter/mcpadapter/internal/plaincall"
	"github.com/mcpadapter/mcpadapter/internal/sdkerr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Reply is the answer to a tools/call: go-sdk's decoding of it, and
// where to find the result as the server wrote it.
type Reply struct {
	*mcp.CallToolResult
	Raw Raw // may be nil, or have nothing
	// Unknown holds the content blocks of types go-sdk does not decode,
	// by their position in the result's content; CallToolResult.Content
	// holds the others, in order.
	Unknown map[int]plaincall.Block
}

// ReplyOf makes the reply to a call from go-sdk's answer res and the
// result as sent. A result that go-sdk refused only for a content block
// of a type it does not know is decoded again from raw, with such blocks
// kept in Reply.Unknown; if that cannot be done, undecodable says why.
// Any other error is go-sdk's err, returned as it is.
func ReplyOf(res *mcp.CallToolResult, raw Raw, err error) (reply *Reply, undecodable, _ error) {
	if err == nil {
		return &Reply{CallToolResult: res, Raw: raw}, nil, nil
	}
	if !sdkerr.IsUnknownContent(err) {
		return nil, nil, err
	}
	var result json.RawMessage
	ok := false
	if raw != nil {
		result, ok = raw.Result()
	}
	if !ok {
		return nil, fmt.Errorf("%w (the result as sent was not seen, so the block could not be kept)", err), nil
	}
	r, blocks, derr := plaincall.DecodeLenient(result)
	if derr != nil {
		return nil, derr, nil
	}
	return &Reply{CallToolResult: r, Raw: raw, Unknown: blocks}, nil, nil
}

// RawStructured returns the structured content as the server wrote it,
// or nil when the result as sent is unknown.
func (r *Reply) RawStructured() json.RawMessage { return RawStructured(r.Raw) }

// RawBlock returns content block i as the server wrote it, or nil. Only
// for a reply go-sdk decoded whole (no unknown blocks).
func (r *Reply) RawBlock(i int) json.RawMessage {
	if len(r.Unknown) > 0 {
		return nil
	}
	return RawBlock(r.Raw, i)
}
