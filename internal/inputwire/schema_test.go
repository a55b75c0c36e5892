package inputwire

import "testing"

// TestFormSchema: the schemas go-sdk takes for a form pass; an object
// nested in a property, a root that is no object, an unknown or missing
// property type, an array without items are refused, naming the
// property.
func TestFormSchema(t *testing.T) {
	good := []any{
		nil,
		map[string]any{},
		map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": 1}, "s": map[string]any{"type": "string", "enum": []any{"a"}},
			"b": map[string]any{"type": "boolean"}, "m": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"x"}}}, "gone": nil}},
	}
	for _, s := range good {
		if err := FormSchema(s); err != nil {
			t.Errorf("FormSchema(%v): %v", s, err)
		}
	}
	bad := map[string]any{
		"root":   map[string]any{"type": "string"},
		"nested": map[string]any{"type": "object", "properties": map[string]any{"addr": map[string]any{"type": "object", "properties": map[string]any{"street": map[string]any{"type": "string"}}}}},
		"kind":   map[string]any{"properties": map[string]any{"when": map[string]any{"type": "null"}}},
		"none":   map[string]any{"properties": map[string]any{"x": map[string]any{"enum": []any{"a"}}}},
		"items":  map[string]any{"properties": map[string]any{"tags": map[string]any{"type": "array"}}},
		"shape":  map[string]any{"properties": map[string]any{"odd": "string"}},
		"list":   []any{"not", "an", "object"},
	}
	for name, s := range bad {
		if err := FormSchema(s); err == nil {
			t.Errorf("%s: FormSchema(%v) passed", name, s)
		}
	}
}
