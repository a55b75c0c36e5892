// Package schemacheck holds validators of tool input schemas written from
// each model provider's published rules, so that tests can check what the
// schemaprofile package sends: OpenAI function parameters (strict and
// not), Anthropic input_schema and Gemini's genai.Schema subset. Each
// returns the problems found, each naming its JSON Pointer; none means
// the provider accepts the schema as far as its rules are written down.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// A Problem is one rule a schema breaks.
type Problem struct {
	Path string
	Rule string
}

func (p Problem) String() string { return p.Path + ": " + p.Rule }

type checker struct{ problems []Problem }

func (c *checker) add(path, format string, args ...any) {
	c.problems = append(c.problems, Problem{Path: path, Rule: fmt.Sprintf(format, args...)})
}

func parse(schema []byte) (map[string]any, []Problem) {
	d := json.NewDecoder(bytes.NewReader(schema))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, []Problem{{Rule: "not JSON: " + err.Error()}}
	}
	if d.More() {
		return nil, []Problem{{Rule: "data after the JSON value"}}
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, []Problem{{Rule: "the schema is not a JSON object"}}
	}
	return o, nil
}

// rootObject: OpenAI ("schema must be a JSON Schema of 'type: object'")
// and Anthropic (input_schema "type" must be "object") both want an
// object schema at the root.
func (c *checker) rootObject(o map[string]any, refused ...string) {
	if o["type"] != "object" {
		c.add("", `root "type" must be "object"`)
	}
	for _, k := range refused {
		if _, ok := o[k]; ok {
			c.add("/"+k, "%s is not allowed at the top level", k)
		}
	}
}

// OpenAI checks function parameters for strict false: the root an object
// without oneOf/anyOf/allOf/enum/not at the top level, every array with
// items, subschemas objects or booleans.
func OpenAI(schema []byte) []Problem {
	o, ps := parse(schema)
	if ps != nil {
		return ps
	}
	c := &checker{}
	c.rootObject(o, "oneOf", "anyOf", "allOf", "enum", "not")
	walk(o, "", func(s map[string]any, path string) {
		if hasType(s, "array") && s["items"] == nil && s["prefixItems"] == nil {
			c.add(path, "array schema missing items")
		}
	})
	return c.problems
}

// Anthropic checks a Messages tool's input_schema: the root an object
// without oneOf/anyOf/allOf at the top level, and property names within
// ^[a-zA-Z0-9_.-]{1,64}$.
func Anthropic(schema []byte) []Problem {
	o, ps := parse(schema)
	if ps != nil {
		return ps
	}
	c := &checker{}
	c.rootObject(o, "oneOf", "anyOf", "allOf")
	walk(o, "", func(s map[string]any, path string) {
		if p, ok := s["properties"].(map[string]any); ok {
			for k := range p {
				if !anthropicName.MatchString(k) {
					c.add(path+"/properties", "property key %q should match %s", k, anthropicName)
				}
			}
		}
	})
	return c.problems
}

var anthropicName = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

// subschema keywords, by shape (JSON Schema 2020-12 and draft-07).
var (
	single = []string{"items", "additionalItems", "additionalProperties", "unevaluatedProperties",
		"unevaluatedItems", "propertyNames", "contains", "not", "if", "then", "else", "contentSchema"}
	lists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	maps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// walk calls f for every object schema in o, o first.
func walk(o map[string]any, path string, f func(map[string]any, string)) {
	f(o, path)
	for k, v := range o {
		p := path + "/" + escape(k)
		switch {
		case contains(lists, k) && isList(v):
			for i, x := range v.([]any) {
				if s, ok := x.(map[string]any); ok {
					walk(s, fmt.Sprintf("%s/%d", p, i), f)
				}
			}
		case contains(single, k):
			if s, ok := v.(map[string]any); ok {
				walk(s, p, f)
			}
		case contains(maps, k):
			if m, ok := v.(map[string]any); ok {
				for name, x := range m {
					if s, ok := x.(map[string]any); ok {
						walk(s, p+"/"+escape(name), f)
					}
				}
			}
		}
	}
}

func isList(v any) bool { _, ok := v.([]any); return ok }

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func typeList(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func hasType(s map[string]any, name string) bool { return contains(typeList(s), name) }
