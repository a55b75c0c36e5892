package schemaprofile_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// TestModelPathRoundTrip: for arguments a model writes against each
// profile's schema (generated over the real-schema corpus and the fuzz
// seeds), every value of the restored arguments is found, at the path
// ModelPath gives for it, in what the model wrote, unchanged: the path
// an argument-check message names leads the model to its own value.
// Leaves are compared (a map sent as key/value entries has another form
// in the model's arguments). A path ModelPath leaves unresolved (a value sent as JSON text or as
// key/value entries) is not checked; one that resolves to another value
// is a wrong name.
func TestModelPathRoundTrip(t *testing.T) {
	corpus := catalogSchemas(t)
	for i, s := range fuzzSeeds(t) {
		corpus = append(corpus, corpusSchema{source: fmt.Sprintf("seed/%d", i), schema: s})
	}
	// Branches that share a property name with other renames below it.
	corpus = append(corpus, corpusSchema{source: "constructed/branches", schema: json.RawMessage(`{"type":"object","properties":{
		"op":{"type":"array","items":{"anyOf":[
			{"type":"object","properties":{"kind":{"const":"a"},"args":{"type":"object","properties":{"$x y":{"type":"string"}},"required":["$x y"]}},"required":["kind","args"]},
			{"type":"object","properties":{"kind":{"const":"b"},"args":{"type":"object","properties":{"$z w":{"type":"integer"}},"required":["$z w"]}},"required":["kind","args"]},
			{"type":"object","properties":{"kind":{"const":"c"},"args":{"type":"object","properties":{"plain":{"type":"boolean"}},"required":["plain"]}},"required":["kind","args"]}]}}},"required":["op"]}`)})
	perSchema := 10
	if testing.Short() {
		perSchema = 3
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range schemaprofile.Profiles() {
		checked, wrong := 0, 0
		for _, s := range corpus {
			if !objectRoot(s.schema) {
				continue
			}
			r, err := schemaprofile.Apply(p, s.schema)
			if err != nil {
				continue
			}
			var schema any
			if err := json.Unmarshal(r.Schema, &schema); err != nil {
				t.Fatal(err)
			}
			g := &gen{rng: rng, root: schema}
			for range perSchema {
				raw, _ := json.Marshal(g.value(schema, 0))
				back, err := r.Restore(raw)
				if err != nil {
					continue
				}
				var model, restored any
				if json.Unmarshal(raw, &model) != nil || json.Unmarshal(back, &restored) != nil {
					continue
				}
				walkValues(restored, "", func(path string, v any) {
					switch v.(type) {
					case map[string]any, []any:
						return // its form may differ (key/value entries): its leaves are checked
					}
					mp := r.ModelPath(path)
					got, ok := lookup(model, mp)
					if !ok {
						if !untraceable(model, mp) {
							wrong++
							if wrong <= 20 {
								t.Errorf("%s: %s: model %s, restored %s: %s maps to %s, which is not in the model's arguments", p, s.source, raw, back, path, mp)
							}
						}
						return
					}
					checked++
					if !reflect.DeepEqual(got, v) && !sameScalarText(got, v) {
						wrong++
						if wrong <= 20 {
							t.Errorf("%s: %s: model %s, restored %s: %s maps to %s, which holds %v, not %v", p, s.source, raw, back, path, mp, got, v)
						}
					}
				})
			}
		}
		t.Logf("%-16s %d values checked, %d at a wrong path", p, checked, wrong)
	}
}

// sameScalarText reports whether got is v written as text (a profile
// may send an enum of numbers as strings).
func sameScalarText(got, v any) bool {
	s, ok := got.(string)
	if !ok {
		return false
	}
	b, _ := json.Marshal(v)
	return s == string(b)
}

// walkValues calls f with the JSON Pointer of every value below v's root.
func walkValues(v any, path string, f func(string, any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			f(p, x)
			walkValues(x, p, f)
		}
	case []any:
		for i, x := range v {
			p := path + "/" + strconv.Itoa(i)
			f(p, x)
			walkValues(x, p, f)
		}
	}
}

// untraceable reports whether ptr leads into a value the profile has the
// model send as JSON text (a string) or as key/value entries (an array
// of objects with a "key"), where ModelPath keeps the restored path.
func untraceable(v any, ptr string) bool {
	toks := strings.Split(ptr[1:], "/")
	for i := range toks {
		x, ok := lookup(v, "/"+strings.Join(toks[:i+1], "/"))
		if ok {
			continue
		}
		parent, _ := lookup(v, "/"+strings.Join(toks[:i], "/"))
		if i == 0 {
			parent = v
		}
		_ = x
		switch p := parent.(type) {
		case string:
			return true
		case []any:
			for _, e := range p {
				if m, ok := e.(map[string]any); !ok || m["key"] == nil {
					return false
				}
			}
			return true
		}
		return false
	}
	return false
}

// lookup resolves a JSON Pointer in v.
func lookup(v any, ptr string) (any, bool) {
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
