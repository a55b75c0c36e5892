package schemaprofile

import "strings"

// flattenRoot removes the keywords OpenAI and Anthropic refuse at the
// root of a tool's schema (anyOf, oneOf, allOf, not, enum, ...): allOf
// branches are merged in; anyOf and oneOf branches give their properties
// as optional ones and are described; the rest goes to the description.
func (t *transform) flattenRoot(o *object) {
	if a, ok := o.vals["allOf"].([]any); ok {
		o.del("allOf")
		for i, b := range a {
			bo, ok := asObject(b)
			if !ok {
				continue
			}
			t.mergeInto(o, bo, ptr("", "allOf", itoa(i)), true)
		}
		t.note(RuleRootCombinator, "/allOf", "allOf at the root merged into the root")
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		a, ok := o.vals[kw].([]any)
		if !ok {
			continue
		}
		o.del(kw)
		var alts []string
		for i, b := range a {
			bo, ok := asObject(b)
			if !ok {
				continue
			}
			alts = append(alts, describeAlt(bo))
			t.mergeInto(o, bo, ptr("", kw, itoa(i)), false)
		}
		addDescription(o, "Give exactly one of these argument sets: "+strings.Join(alts, "; ")+".")
		t.note(RuleRootCombinator, "/"+kw, "%s at the root: its properties made optional properties of the root", kw)
	}
	for _, kw := range []string{"not", "if", "then", "else", "enum", "const"} {
		if v, ok := o.get(kw); ok {
			o.del(kw)
			addDescription(o, kw+": "+text(v))
			t.note(RuleRootCombinator, "/"+kw, "%s at the root written into the description", kw)
		}
	}
}

// mergeInto copies branch's properties into o (required too when
// required is true) and branch's other keywords where o has none.
func (t *transform) mergeInto(o, branch *object, path string, required bool) {
	props, _ := o.obj("properties")
	if props == nil {
		props = newObject()
		o.set("properties", props)
	}
	if bp, ok := branch.obj("properties"); ok {
		for _, k := range bp.keys {
			if !props.has(k) {
				props.set(k, cloneValue(bp.vals[k]))
			}
		}
	}
	if required {
		if br, ok := branch.vals["required"].([]any); ok {
			req, _ := o.vals["required"].([]any)
			for _, r := range br {
				if !containsValue(req, r) {
					req = append(req, r)
				}
			}
			o.set("required", req)
		}
	}
	for _, k := range branch.keys {
		switch k {
		case "properties", "required", "type":
			continue
		}
		if !o.has(k) {
			o.set(k, cloneValue(branch.vals[k]))
		}
	}
	_ = path
}

// describeAlt names one argument set of a root anyOf/oneOf.
func describeAlt(b *object) string {
	var names []string
	if r, ok := b.vals["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
	}
	if len(names) == 0 {
		if p, ok := b.obj("properties"); ok {
			names = p.keys
		}
	}
	if d, ok := b.str("description"); ok && d != "" {
		return short(d, 80) + " (" + strings.Join(names, ", ") + ")"
	}
	return "(" + strings.Join(names, ", ") + ")"
}

func containsValue(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// arrayItems gives every array schema without items an empty items
// schema (OpenAI refuses "array schema missing items").
func (t *transform) arrayItems(v any, path string) any {
	o, ok := v.(*object)
	if !ok {
		return v
	}
	if isArraySchema(o) && !o.has("items") && !o.has("prefixItems") {
		o.set("items", newObject())
		t.note(RuleArrayItems, path, "items {} added (any item)")
	}
	eachSub(o, path, t.arrayItems)
	return o
}
