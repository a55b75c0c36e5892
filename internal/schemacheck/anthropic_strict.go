package schemacheck

import (
	"strings"
)

// Anthropic strict tool use (Structured Outputs, "JSON Schema
// limitations"): the supported subset and the complexity limits.
var (
	anthropicStrictKeys = []string{"type", "description", "title", "enum", "const", "anyOf", "allOf",
		"$ref", "$defs", "definitions", "default", "properties", "required", "additionalProperties",
		"items", "pattern", "format", "minItems"}
	anthropicStrictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname",
		"uri", "ipv4", "ipv6", "uuid"}
)

// Limits of strict tool use, per request.
const (
	anthropicMaxOptional = 24
	anthropicMaxUnions   = 16
)

// AnthropicStrict checks a Messages tool's input_schema for strict true:
// what Anthropic checks (an object root, property names) and the strict
// subset: only the supported keywords (no numeric bounds, string lengths,
// maxItems, oneOf, not, patternProperties...), additionalProperties false
// on every object, minItems 0 or 1 only, supported formats only, enum
// values that are not objects or arrays, no recursive $ref, a pattern
// without lookaround or backreferences, at most 24 optional properties
// and 16 properties with a union type.
func AnthropicStrict(schema []byte) []Problem {
	o, ps := parse(schema)
	if ps != nil {
		return ps
	}
	c := &checker{problems: Anthropic(schema)}
	if o["type"] != "object" {
		// Anthropic reports it already.
		return c.problems
	}
	optional, unions := 0, 0
	walk(o, "", func(s map[string]any, path string) {
		for k := range s {
			if !contains(anthropicStrictKeys, k) {
				c.add(path+"/"+escape(k), "keyword %q is not supported by strict tool use", k)
			}
		}
		if f, ok := s["format"].(string); ok && !contains(anthropicStrictFormats, f) {
			c.add(path+"/format", "format %q is not supported", f)
		}
		if n, ok := s["minItems"]; ok {
			if str := strings.TrimSpace(toString(n)); str != "0" && str != "1" {
				c.add(path+"/minItems", "minItems %s: only 0 and 1 are supported", str)
			}
		}
		if e, ok := s["enum"].([]any); ok {
			for _, x := range e {
				switch x.(type) {
				case map[string]any, []any:
					c.add(path+"/enum", "enum values must be strings, numbers, booleans or null")
				}
			}
		}
		if p, ok := s["pattern"].(string); ok && (strings.Contains(strings.ReplaceAll(p, "(?:", ""), "(?") || strings.Contains(p, `\b`)) {
			c.add(path+"/pattern", "pattern with lookaround or a word boundary")
		}
		ts := typeList(s)
		nonNull := 0
		for _, t := range ts {
			if t != "null" {
				nonNull++
			}
		}
		if _, any := s["anyOf"]; any || nonNull > 1 {
			unions++
		}
		if hasType(s, "object") {
			if s["additionalProperties"] != false {
				c.add(path, "additionalProperties must be false")
			}
			p, _ := s["properties"].(map[string]any)
			req := map[string]bool{}
			r, _ := s["required"].([]any)
			for _, x := range r {
				if str, ok := x.(string); ok {
					req[str] = true
				}
			}
			for k := range p {
				if !req[k] {
					optional++
				}
			}
		}
		if ref, ok := s["$ref"].(string); ok && strings.HasPrefix(path, strings.TrimPrefix(ref, "#")+"/") {
			c.add(path+"/$ref", "recursive $ref")
		}
	})
	if optional > anthropicMaxOptional {
		c.add("", "%d optional properties, more than %d", optional, anthropicMaxOptional)
	}
	if unions > anthropicMaxUnions {
		c.add("", "%d properties with a union type, more than %d", unions, anthropicMaxUnions)
	}
	return c.problems
}

func toString(v any) string {
	if s, ok := v.(interface{ String() string }); ok {
		return s.String()
	}
	return ""
}
