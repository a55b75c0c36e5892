package plaincall

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// knownKinds are the content types go-sdk decodes; DecodeLenient keeps
// every other block as it is.
var knownKinds = map[string]bool{"text": true, "image": true, "audio": true, "resource_link": true, "resource": true}

// Block is a content block of a type go-sdk does not know, as sent.
type Block struct {
	Type string
	Raw  json.RawMessage
}

// DecodeLenient decodes a tool result whose content has blocks of types
// go-sdk does not know: those are returned as they are, by position, and
// go-sdk decodes the rest.
func DecodeLenient(result json.RawMessage) (*mcp.CallToolResult, map[int]Block, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(result, &fields); err != nil {
		return nil, nil, fmt.Errorf("result: %w", err)
	}
	var blocks []json.RawMessage
	if c := fields["content"]; c != nil {
		if err := json.Unmarshal(c, &blocks); err != nil {
			return nil, nil, fmt.Errorf("content: %w", err)
		}
	}
	known := make([]json.RawMessage, 0, len(blocks))
	unknown := make(map[int]Block)
	for i, b := range blocks {
		kind, err := BlockType(b)
		if err != nil {
			return nil, nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		if knownKinds[kind] {
			known = append(known, b)
			continue
		}
		unknown[i] = Block{Type: kind, Raw: b}
	}
	if len(unknown) == 0 {
		return nil, nil, errors.New("go-sdk refused a content type, but every block has a known type")
	}
	var err error
	if fields["content"], err = json.Marshal(known); err != nil {
		return nil, nil, fmt.Errorf("content: %w", err)
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, fmt.Errorf("result: %w", err)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(rest, &r); err != nil {
		return nil, nil, fmt.Errorf("result: %w", err)
	}
	return &r, unknown, nil
}

// BlockType returns the type of the content block b, a JSON object.
func BlockType(b json.RawMessage) (string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil || fields == nil {
		return "", errors.New("a content block must be a JSON object")
	}
	var kind string
	if t := fields["type"]; t == nil || json.Unmarshal(t, &kind) != nil || kind == "" {
		return "", errors.New(`a content block has no "type"`)
	}
	return kind, nil
}
