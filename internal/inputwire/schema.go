package inputwire

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// FormSchema checks the requested schema of a form question (nil: none)
// as go-sdk checks a server's elicitation/create before its handler is
// asked: an object (or no type) whose properties are each a string,
// number, integer, boolean or array (with items), none with properties
// of its own.
func FormSchema(schema any) error {
	if schema == nil {
		return nil
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return fmt.Errorf("the requested schema cannot be read: %w", err)
	}
	var s struct {
		Type       json.RawMessage            `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("the requested schema is not a JSON Schema object: %w", err)
	}
	if len(s.Type) > 0 && string(s.Type) != `"object"` {
		return fmt.Errorf("elicit schema must be of type 'object', got %s", s.Type)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		raw := s.Properties[name]
		if string(raw) == "null" {
			continue
		}
		var prop struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Items      json.RawMessage            `json:"items"`
		}
		if err := json.Unmarshal(raw, &prop); err != nil {
			return fmt.Errorf("elicit schema property %q cannot be read: %v", name, err)
		}
		if len(prop.Properties) > 0 {
			return fmt.Errorf("elicit schema property %q contains nested properties, only primitive properties are allowed", name)
		}
		switch prop.Type {
		case "string", "number", "integer", "boolean":
		case "array":
			if len(prop.Items) == 0 || string(prop.Items) == "null" {
				return fmt.Errorf("elicit schema property %q is array but missing 'items' definition", name)
			}
		default:
			return fmt.Errorf("elicit schema property %q has unsupported type %q, only string, number, integer, boolean, and array are allowed", name, prop.Type)
		}
	}
	return nil
}
