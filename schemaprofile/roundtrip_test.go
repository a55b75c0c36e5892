package schemaprofile_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/argcheck"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// lostKeywords are the keywords a profile may move into the description
// (or relax, as oneOf sent as anyOf): an instance of the profile's
// schema may break them, and the adapter's argument check refuses it
// before the call. relax removes them from the server's schema; an
// instance the relaxed schema refuses after Restore is a Restore error.
var lostKeywords = map[string]bool{
	"minLength": true, "maxLength": true, "pattern": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true, "contains": true, "minContains": true, "maxContains": true,
	"minProperties": true, "maxProperties": true, "propertyNames": true, "patternProperties": true,
	"dependentRequired": true, "dependentSchemas": true, "dependencies": true,
	"oneOf": true, "not": true, "if": true, "then": true, "else": true,
	"unevaluatedProperties": true, "unevaluatedItems": true, "const": false,
}

// relax returns schema without the keywords a profile may describe
// instead of keep (oneOf read as anyOf), and without the root's
// combinators, which every profile flattens into one object.
func relax(t *testing.T, schema json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		t.Fatal(err)
	}
	if root, ok := v.(map[string]any); ok {
		for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
			delete(root, kw)
		}
	}
	relaxNode(v)
	out, _ := json.Marshal(v)
	return out
}

func relaxNode(v any) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			relaxNode(x)
		}
	case map[string]any:
		if o, ok := v["oneOf"]; ok {
			delete(v, "oneOf")
			if _, has := v["anyOf"]; !has {
				v["anyOf"] = o
			}
		}
		for k, x := range v {
			if lostKeywords[k] {
				delete(v, k)
				continue
			}
			switch k {
			case "properties", "$defs", "definitions":
				if m, ok := x.(map[string]any); ok {
					for _, sub := range m {
						relaxNode(sub)
					}
				}
			case "items", "additionalProperties", "anyOf", "allOf", "prefixItems", "additionalItems":
				relaxNode(x)
			}
		}
	}
}

// TestRestoreRoundTrip is the property every profile promises: any
// arguments valid against the profile's schema, once restored, are valid
// against the server's own schema, up to the keywords the profile moved
// into the description (which the adapter checks before the call). It
// generates instances of each profile's output over the captured real
// schemas and the fuzz seeds, and validates the restored ones with
// package argcheck, an implementation independent of the profiles.
func TestRestoreRoundTrip(t *testing.T) {
	corpus := catalogSchemas(t)
	for i, s := range fuzzSeeds(t) {
		corpus = append(corpus, corpusSchema{source: fmt.Sprintf("seed/%d", i), schema: s})
	}
	perSchema := 20
	if testing.Short() {
		perSchema = 4
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var report strings.Builder
	for _, p := range schemaprofile.Profiles() {
		checked, lost, mismatched, geminiLost := 0, 0, 0, 0
		byKeyword := map[string]int{}
		for _, s := range corpus {
			if !objectRoot(s.schema) {
				continue // not a tool's input schema: nothing to restore
			}
			orig, err := argcheck.Compile(s.schema)
			if err != nil {
				continue
			}
			relaxed, err := argcheck.Compile(relax(t, s.schema))
			if err != nil {
				t.Fatalf("%s: relaxed schema: %v", s.source, err)
			}
			r, err := schemaprofile.Apply(p, s.schema)
			if err != nil {
				t.Errorf("%s: %s: %v", p, s.source, err)
				continue
			}
			out, err := argcheck.Compile(r.Schema)
			if err != nil {
				t.Errorf("%s: %s: output does not compile: %v", p, s.source, err)
				continue
			}
			var schema any
			if err := json.Unmarshal(r.Schema, &schema); err != nil {
				t.Fatal(err)
			}
			g := &gen{rng: rng, root: schema}
			for range perSchema {
				inst := g.value(schema, 0)
				raw, _ := json.Marshal(inst)
				if out.Validate(raw) != nil {
					continue // the generator missed: not an instance
				}
				back, err := r.Restore(raw)
				if err != nil {
					t.Errorf("%s: %s: Restore(%s): %v", p, s.source, raw, err)
					continue
				}
				checked++
				if orig.Validate(back) == nil {
					continue
				}
				err = relaxed.Validate(back)
				var e *argcheck.Error
				if !errors.As(err, &e) {
					lost++
					continue
				}
				for _, prob := range e.Problems {
					byKeyword[prob.Keyword]++
				}
				if p == schemaprofile.Gemini && len(r.Changes) > 0 {
					// Gemini's subset lacks what the others keep (enums
					// of numbers, false schemas, anyOf in places): a
					// loss its change list names, and the argument
					// check enforces.
					geminiLost++
					continue
				}
				mismatched++
				if mismatched <= 40 {
					t.Errorf("%s: %s: the profile's instance %s restores to %s, which the server's schema refuses: %v",
						p, s.source, raw, back, err)
				}
			}
		}
		fmt.Fprintf(&report, "%-16s %6d instances restored: %d refused by the server's schema, %d break only a described keyword, %d a loss the change list names (%v)\n",
			p, checked, mismatched, lost, geminiLost, sortedCounts(byKeyword))
		if checked < len(corpus) {
			t.Errorf("%s: only %d instances generated", p, checked)
		}
	}
	t.Log("\n" + report.String())
}

// objectRoot reports whether schema's root is an object schema (as MCP
// requires of an input schema).
func objectRoot(schema json.RawMessage) bool {
	var root map[string]any
	if json.Unmarshal(schema, &root) != nil {
		return false
	}
	t, has := root["type"]
	return !has || t == "object"
}

func sortedCounts(m map[string]int) string {
	var ks []string
	for k, n := range m {
		ks = append(ks, k+"="+strconv.Itoa(n))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// gen writes random values of a (profile output) schema.
type gen struct {
	rng  *rand.Rand
	root any
}

const maxGenDepth = 8

func (g *gen) value(s any, depth int) any {
	o, ok := s.(map[string]any)
	if !ok || depth > maxGenDepth {
		return nil
	}
	if ref, ok := o["$ref"].(string); ok {
		return g.value(g.resolve(ref), depth+1)
	}
	if c, ok := o["const"]; ok {
		return c
	}
	if e, ok := o["enum"].([]any); ok && len(e) > 0 {
		return e[g.rng.IntN(len(e))]
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if a, ok := o[kw].([]any); ok && len(a) > 0 {
			return g.value(a[g.rng.IntN(len(a))], depth+1)
		}
	}
	if a, ok := o["allOf"].([]any); ok && len(a) > 0 {
		return g.value(a[0], depth+1)
	}
	var types []string
	switch t := o["type"].(type) {
	case string:
		types = []string{strings.ToLower(t)}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				types = append(types, s)
			}
		}
	}
	if o["nullable"] == true {
		types = append(types, "null")
	}
	if len(types) == 0 {
		if _, ok := o["properties"]; ok {
			types = []string{"object"}
		} else {
			types = []string{"string", "number", "boolean", "null"}
		}
	}
	switch types[g.rng.IntN(len(types))] {
	case "null":
		return nil
	case "boolean":
		return g.rng.IntN(2) == 0
	case "integer":
		return float64(g.number(o, true))
	case "number":
		return g.number(o, false)
	case "string":
		return g.str(o)
	case "array":
		n := g.rng.IntN(3)
		if m, ok := o["minItems"].(float64); ok && float64(n) < m {
			n = int(m)
		}
		if m, ok := o["maxItems"].(float64); ok && float64(n) > m {
			n = int(m)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(o["items"], depth+1)
		}
		return out
	case "object":
		out := map[string]any{}
		req := map[string]bool{}
		if r, ok := o["required"].([]any); ok {
			for _, x := range r {
				if s, ok := x.(string); ok {
					req[s] = true
				}
			}
		}
		props, _ := o["properties"].(map[string]any)
		for k, ps := range props {
			if req[k] || g.rng.IntN(2) == 0 {
				out[k] = g.value(ps, depth+1)
			}
		}
		return out
	}
	return nil
}

func (g *gen) number(o map[string]any, integer bool) float64 {
	lo, hi := -5.0, 50.0
	if m, ok := o["minimum"].(float64); ok {
		lo = m
		if hi < lo {
			hi = lo + 10
		}
	}
	if m, ok := o["maximum"].(float64); ok {
		hi = m
		if lo > hi {
			lo = hi - 10
		}
	}
	v := lo + g.rng.Float64()*(hi-lo)
	if integer {
		return float64(int64(v))
	}
	return v
}

func (g *gen) str(o map[string]any) string {
	switch o["format"] {
	case "date-time":
		return "2025-01-02T03:04:05Z"
	case "date":
		return "2025-01-02"
	case "email":
		return "ada@example.com"
	case "uri", "url":
		return "https://example.com/a"
	case "uuid":
		return "123e4567-e89b-12d3-a456-426614174000"
	}
	words := []string{"", "a", "Ada", "hello world", "x/y.txt", "42"}
	return words[g.rng.IntN(len(words))]
}

// resolve follows a local $ref of the root.
func (g *gen) resolve(ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	var cur any = g.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}
