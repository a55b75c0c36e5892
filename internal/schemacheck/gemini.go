package schemacheck

import "fmt"

// Gemini's function parameters (genai.Schema, an OpenAPI 3.0 subset).
var (
	geminiKeys = []string{"type", "format", "title", "description", "nullable", "enum",
		"maxItems", "minItems", "properties", "required", "minProperties", "maxProperties",
		"minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
		"default", "items", "minimum", "maximum"}
	geminiTypes   = []string{"string", "number", "integer", "boolean", "array", "object", "null"}
	geminiFormats = map[string][]string{"string": {"enum", "date-time"}, "integer": {"int32", "int64"}, "number": {"float", "double"}}
	geminiCounts  = []string{"maxItems", "minItems", "minProperties", "maxProperties", "minLength", "maxLength"}
)

// Gemini checks a schema against genai.Schema: only its fields; one type
// name per schema (the null type through nullable); every schema typed
// or an anyOf ("didn't specify the schema type field"); enum only of
// strings on a string schema; formats per type; counts as integers;
// arrays with items ("items: missing field"); required names defined
// ("property is not defined"); no $ref.
func Gemini(schema []byte) []Problem {
	o, ps := parse(schema)
	if ps != nil {
		return ps
	}
	c := &checker{}
	if o["type"] != "object" {
		c.add("", `root "type" must be "object"`)
	}
	walk(o, "", func(s map[string]any, path string) { c.gemini(s, path) })
	return c.problems
}

func (c *checker) gemini(s map[string]any, path string) {
	for k := range s {
		if !contains(geminiKeys, k) {
			c.add(path+"/"+escape(k), "field %q is not in genai.Schema", k)
		}
	}
	t, isString := s["type"].(string)
	_, anyOf := s["anyOf"]
	switch {
	case s["type"] != nil && !isString:
		c.add(path+"/type", "type must be one name")
	case isString && !contains(geminiTypes, t):
		c.add(path+"/type", "unknown type %q", t)
	case !isString && !anyOf:
		c.add(path, "schema didn't specify the schema type field")
	}
	if e, ok := s["enum"]; ok {
		list, ok := e.([]any)
		if !ok || t != "string" {
			c.add(path+"/enum", "enum only on type string")
		}
		for _, x := range list {
			if _, ok := x.(string); !ok {
				c.add(path+"/enum", "enum value %v is not a string", x)
			}
		}
	}
	if f, ok := s["format"].(string); ok && !contains(geminiFormats[t], f) {
		c.add(path+"/format", "format %q not supported for type %q", f, t)
	}
	for _, k := range geminiCounts {
		if v, ok := s[k]; ok && !isCount(v) {
			c.add(path+"/"+k, "%s must be a non-negative integer", k)
		}
	}
	if t == "array" && s["items"] == nil {
		c.add(path, "items: missing field")
	}
	if _, ok := s["items"]; ok && t != "array" {
		c.add(path+"/items", "items on a non-array schema")
	}
	if r, ok := s["required"].([]any); ok {
		p, _ := s["properties"].(map[string]any)
		for _, x := range r {
			name, _ := x.(string)
			if _, ok := p[name]; !ok {
				c.add(path+"/required", "property %s is not defined", fmt.Sprint(x))
			}
		}
	}
}

func isCount(v any) bool {
	n, ok := v.(interface{ Int64() (int64, error) })
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i >= 0
}
