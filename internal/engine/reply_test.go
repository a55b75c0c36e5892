package engine

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplyOfUnknownContent: a result go-sdk refuses for a block of a
// type it does not know is decoded again from the result as sent, the
// block kept by its position; without the result as sent the reason is
// undecodable; any other error is go-sdk's, as it is.
func TestReplyOfUnknownContent(t *testing.T) {
	data := []byte(`{"content":[{"type":"text","text":"a"},{"type":"hologram","n":1}],"structuredContent":{"b":1}}`)
	var r mcp.CallToolResult
	err := json.Unmarshal(data, &r)
	if err == nil {
		t.Skip("go-sdk decodes a block of an unknown type")
	}
	reply, undecodable, err := ReplyOf(&r, SentResult(data), err)
	if err != nil || undecodable != nil {
		t.Fatalf("ReplyOf: %v, %v", undecodable, err)
	}
	if len(reply.Content) != 1 || reply.Unknown[1].Type != "hologram" || string(reply.RawStructured()) != `{"b":1}` || reply.RawBlock(0) != nil {
		t.Fatalf("reply %+v, unknown %+v", reply.CallToolResult, reply.Unknown)
	}
	_, undecodable, err = ReplyOf(&r, nil, json.Unmarshal(data, &r))
	if err != nil || undecodable == nil {
		t.Fatalf("without the result as sent: %v, %v", undecodable, err)
	}
	other := errors.New("closed")
	if _, _, err := ReplyOf(nil, nil, other); err != other {
		t.Fatalf("another error: %v", err)
	}
	ok, _, _ := ReplyOf(&mcp.CallToolResult{}, SentResult(`{"content":[{"type":"text","text":"x"}]}`), nil)
	if string(ok.RawBlock(0)) != `{"type":"text","text":"x"}` {
		t.Fatalf("RawBlock: %s", ok.RawBlock(0))
	}
}
