package toolsearch

import "encoding/json"

// SchemaArgs returns the arguments an MCP tool's input schema names: its
// top-level properties with their descriptions, in no particular order.
// A schema that is not a JSON object gives none.
func SchemaArgs(schema json.RawMessage) []Arg {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	args := make([]Arg, 0, len(s.Properties))
	for name, p := range s.Properties {
		args = append(args, Arg{Name: name, Description: p.Description})
	}
	return args
}
