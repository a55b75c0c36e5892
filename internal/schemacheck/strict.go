package schemacheck

import "strings"

// OpenAI Structured Outputs "Supported schemas" (strict true).
var (
	strictTypes   = []string{"string", "number", "integer", "boolean", "object", "array", "null"}
	strictFormats = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
	strictKeys    = []string{"type", "description", "title", "enum", "const", "anyOf", "$ref", "$defs",
		"properties", "required", "additionalProperties", "items", "pattern", "format",
		"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"}
)

// OpenAIStrict checks function parameters for strict true: the root an
// object (not anyOf); only the supported keywords; every schema typed;
// every object with additionalProperties false and every property
// required; arrays with items; at most 10 levels of object nesting, 5000
// properties and 1000 enum values.
func OpenAIStrict(schema []byte) []Problem {
	o, ps := parse(schema)
	if ps != nil {
		return ps
	}
	c := &checker{}
	c.rootObject(o, "anyOf", "oneOf", "allOf", "not", "enum")
	props, enums := 0, 0
	walk(o, "", func(s map[string]any, path string) {
		for k := range s {
			if !contains(strictKeys, k) {
				c.add(path+"/"+escape(k), "keyword %q is not supported in strict mode", k)
			}
		}
		ts := typeList(s)
		for _, t := range ts {
			if !contains(strictTypes, t) {
				c.add(path+"/type", "type %q", t)
			}
		}
		_, anyOf := s["anyOf"]
		_, enum := s["enum"]
		_, cnst := s["const"]
		_, ref := s["$ref"]
		if ts == nil && !anyOf && !enum && !cnst && !ref {
			c.add(path, "schema has no type")
		}
		if f, ok := s["format"].(string); ok && !contains(strictFormats, f) {
			c.add(path+"/format", "format %q is not supported", f)
		}
		if e, ok := s["enum"].([]any); ok {
			enums += len(e)
		}
		if hasType(s, "object") {
			props += c.strictObject(s, path)
		}
		if hasType(s, "array") && s["items"] == nil {
			c.add(path, "array without items")
		}
		if strings.Count(path, "/properties/") > 10 {
			c.add(path, "more than 10 levels of nesting")
		}
	})
	if props > 5000 {
		c.add("", "more than 5000 properties")
	}
	if enums > 1000 {
		c.add("", "more than 1000 enum values")
	}
	return c.problems
}

func (c *checker) strictObject(s map[string]any, path string) int {
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
			c.add(path+"/required", "property %q must be required", k)
		}
	}
	for k := range req {
		if _, ok := p[k]; !ok {
			c.add(path+"/required", "required %q is no property", k)
		}
	}
	return len(p)
}
