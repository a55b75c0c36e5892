package schemaprofile

import (
	"strings"
)

// Rules of the shapes strict profiles rewrite (see also profile.go).
const (
	RuleJSONText   = "json-text"   // a schema that takes any value, sent as a string of JSON text (Restore parses it)
	RuleMapEntries = "map-entries" // an object of free keys, sent as an array of {key, value} entries (Restore rebuilds the object)
	// RuleRequiredDeclared: a required name no property declared, declared
	// as a property of any value (strict mode allows only declared ones).
	RuleRequiredDeclared = "required-declared"
)

// anyValue reports whether o takes any JSON value: it says nothing about
// type or shape (annotations only).
func anyValue(o *object) bool {
	for _, k := range o.Keys {
		switch k {
		case "description", "title", "default", "examples", "example", "$comment", "deprecated", "readOnly", "writeOnly", "format", "$schema", "$id":
		default:
			return false
		}
	}
	return true
}

// jsonText writes a schema that takes any value as a string the model
// fills with JSON text.
func (s *strict) jsonText(o *object, path string) *object {
	out := newObject()
	out.Set("type", "string")
	d, _ := o.Str("description")
	out.Set("description", strings.TrimSpace(d+" Any JSON value, written as JSON text: \"text\", 3, true, null, [1,2] or {\"a\":1}."))
	s.t.note(RuleJSONText, path, "a schema that takes any value, sent as a string of JSON text")
	return out
}

// mapObject rewrites an object of free keys (no properties;
// additionalProperties or patternProperties give the values) as an array
// of {key, value} entries. ok is false for any other schema.
func (s *strict) mapObject(o *object, path string, depth int) (*object, *argMap, bool) {
	if path == "" {
		return nil, nil, false // the root: its arguments are its properties
	}
	ts := types(o)
	if !(contains(ts, "object") || ts == nil && (o.Has("additionalProperties") || o.Has("patternProperties"))) {
		return nil, nil, false
	}
	for _, t := range ts {
		if t != "object" && t != "null" {
			return nil, nil, false
		}
	}
	if p, ok := o.Obj("properties"); ok && len(p.Keys) > 0 {
		return nil, nil, false
	}
	ap, hasAP := o.Get("additionalProperties")
	pp, hasPP := o.Obj("patternProperties")
	var value any = newObject()
	note := ""
	switch {
	case ap == false && !hasPP:
		return nil, nil, false // {} only: strict handles it
	case hasPP && len(pp.Keys) == 1 && (!hasAP || ap == false):
		value = pp.Vals[pp.Keys[0]]
		note = "Each key matches the pattern " + short(pp.Keys[0], 80) + "."
	case hasPP:
		note = "Keys: " + short(text(pp), 120) + "."
	case hasAP && ap != true:
		value = ap
	}
	entry := newObject()
	entry.Set("type", "object")
	props := newObject()
	key := newObject()
	key.Set("type", "string")
	props.Set("key", key)
	vo, vm := s.node(value, ptr(path, "additionalProperties"), depth+2)
	props.Set("value", vo)
	entry.Set("properties", props)
	entry.Set("required", []any{"key", "value"})
	entry.Set("additionalProperties", false)
	out := newObject()
	if contains(ts, "null") {
		out.Set("type", []any{"array", "null"})
	} else {
		out.Set("type", "array")
	}
	d, _ := o.Str("description")
	out.Set("description", strings.TrimSpace(d+" A map, written as a list of entries, each a key and its value. "+note))
	out.Set("items", entry)
	s.t.note(RuleMapEntries, path, "an object of free keys sent as an array of {key, value} entries")
	return out, &argMap{entries: true, value: vm}, true
}

// mergeAllOf merges o's allOf branches into o: properties and required
// joined, the tighter of two bounds kept, any other keyword the branches
// disagree on written into the description (and noted), never dropped
// silently. o itself is not modified.
func (t *transform) mergeAllOf(o *object, path string) *object {
	a, ok := o.Vals["allOf"].([]any)
	if !ok {
		return o
	}
	o = o.Clone()
	o.Del("allOf")
	for i, b := range a {
		bo, ok := asObject(b)
		if !ok {
			continue
		}
		bp := ptr(path, "allOf", itoa(i))
		bo = t.mergeAllOf(bo, bp)
		t.mergeBranch(o, bo, bp)
	}
	t.note(RuleAllOfMerged, ptr(path, "allOf"), "allOf merged into one schema")
	return o
}

// Bounds: when two allOf branches both set one, the tighter wins.
var (
	lowerBounds = []string{"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
	upperBounds = []string{"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)

func (t *transform) mergeBranch(o, b *object, path string) {
	for _, k := range b.Keys {
		v := b.Vals[k]
		cur, has := o.Get(k)
		switch {
		case k == "properties":
			props, _ := o.Obj("properties")
			if props == nil {
				props = newObject()
				o.Set("properties", props)
			}
			if bp, ok := v.(*object); ok {
				for _, name := range bp.Keys {
					if !props.Has(name) {
						props.Set(name, cloneValue(bp.Vals[name]))
						continue
					}
					// Both constrain the property: all of them hold.
					both := newObject()
					both.Set("allOf", []any{props.Vals[name], cloneValue(bp.Vals[name])})
					props.Set(name, t.mergeAllOf(both, ptr(path, "properties", name)))
				}
			}
		case k == "required":
			req, _ := o.Vals["required"].([]any)
			if br, ok := v.([]any); ok {
				for _, r := range br {
					if !containsValue(req, r) {
						req = append(req, r)
					}
				}
			}
			o.Set("required", req)
		case !has:
			o.Set(k, cloneValue(v))
		case k == "description" || k == "title":
			if text(cur) != text(v) {
				if s, ok := v.(string); ok && k == "description" {
					addDescription(o, s)
				}
			}
		case contains(lowerBounds, k) || contains(upperBounds, k):
			x, y := numberOf(cur), numberOf(v)
			if x == nil || y == nil {
				continue
			}
			if contains(lowerBounds, k) == (*y > *x) {
				o.Set(k, v)
			}
		case text(cur) != text(v):
			addDescription(o, "Also: "+k+" "+short(text(v), 120)+".")
			t.note(RuleAllOfMerged, ptr(path, k), "allOf branches disagree on %s: %s kept, %s written into the description", k, short(text(cur), 60), short(text(v), 60))
		}
	}
}

// numberOf reads a JSON number.
func numberOf(v any) *float64 {
	n, ok := v.(interface{ Float64() (float64, error) })
	if !ok {
		return nil
	}
	f, err := n.Float64()
	if err != nil {
		return nil
	}
	return &f
}

// constraintText writes a keyword strict mode lacks for the model.
func constraintText(k string, v any) string {
	n := text(v)
	switch k {
	case "minLength":
		return "At least " + n + " characters."
	case "maxLength":
		return "At most " + n + " characters."
	case "minProperties":
		return "At least " + n + " entries."
	case "maxProperties":
		return "At most " + n + " entries."
	case "uniqueItems":
		if v == true {
			return "Items must be unique."
		}
		return ""
	}
	return "Also: " + k + " " + short(n, 160) + "."
}
