package engine

import (
	"bytes"
	"encoding/json"

	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// RawStructured returns the structuredContent of the result raw holds, as
// the server wrote it, or nil when raw is nil or has no result, or the
// member is absent, null or not valid JSON.
func RawStructured(raw Raw) json.RawMessage {
	if raw == nil {
		return nil
	}
	result, ok := raw.Result()
	if !ok {
		return nil
	}
	sc, ok := wire.Member(result, "structuredContent")
	if !ok || !json.Valid(sc) || bytes.Equal(sc, []byte("null")) {
		return nil
	}
	return bytes.Clone(sc) // not the whole message
}

// RawBlock returns content block i of the result raw holds, as the server
// wrote it, or nil.
func RawBlock(raw Raw, i int) json.RawMessage {
	if raw == nil {
		return nil
	}
	result, ok := raw.Result()
	if !ok {
		return nil
	}
	content, ok := wire.Member(result, "content")
	if !ok {
		return nil
	}
	var blocks []json.RawMessage
	if json.Unmarshal(content, &blocks) != nil || i >= len(blocks) {
		return nil
	}
	return blocks[i]
}
