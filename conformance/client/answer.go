package main

import (
	"encoding/json"

	"github.com/mcpadapter/mcpadapter/elicitation"
)

// answer is the scripted user: it accepts every request, filling a form
// with the first value each field allows (its default, its first enum
// value, true, the minimum, ...). Fields with a default are left out so
// that elicitation.Check fills them in.
func answer(r elicitation.Request) elicitation.Response {
	if r.Mode == elicitation.ModeURL {
		return elicitation.Response{Action: elicitation.Accept}
	}
	var schema struct {
		Properties map[string]struct {
			Type    string            `json:"type"`
			Default json.RawMessage   `json:"default"`
			Enum    []json.RawMessage `json:"enum"`
			OneOf   []struct {
				Const json.RawMessage `json:"const"`
			} `json:"oneOf"`
			Minimum *float64 `json:"minimum"`
			Items   *struct {
				Enum  []json.RawMessage `json:"enum"`
				AnyOf []struct {
					Const json.RawMessage `json:"const"`
				} `json:"anyOf"`
			} `json:"items"`
		} `json:"properties"`
	}
	content := map[string]any{}
	if json.Unmarshal(r.RequestedSchema, &schema) != nil {
		return elicitation.Response{Action: elicitation.Accept, Content: content}
	}
	for name, p := range schema.Properties {
		if len(p.Default) > 0 {
			continue
		}
		var v any
		switch {
		case len(p.Enum) > 0:
			_ = json.Unmarshal(p.Enum[0], &v)
		case len(p.OneOf) > 0:
			_ = json.Unmarshal(p.OneOf[0].Const, &v)
		case p.Type == "boolean":
			v = true
		case p.Type == "number" || p.Type == "integer":
			v = 1.0
			if p.Minimum != nil {
				v = *p.Minimum
			}
		case p.Type == "array":
			var first any
			if p.Items != nil && len(p.Items.Enum) > 0 {
				_ = json.Unmarshal(p.Items.Enum[0], &first)
			} else if p.Items != nil && len(p.Items.AnyOf) > 0 {
				_ = json.Unmarshal(p.Items.AnyOf[0].Const, &first)
			}
			if first != nil {
				v = []any{first}
			} else {
				v = []any{}
			}
		default:
			v = "conformance"
		}
		content[name] = v
	}
	return elicitation.Response{Action: elicitation.Accept, Content: content}
}
