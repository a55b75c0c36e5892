package schemaprofile

import "strings"

// flattenRoot removes the keywords OpenAI and Anthropic refuse at the
// root of a tool's schema (anyOf, oneOf, allOf, not, enum, ...): allOf
// branches are merged in; anyOf and oneOf branches give their properties
// as optional ones and are described; the rest goes to the description.
func (t *transform) flattenRoot(o *object) {
	if a, ok := o.Vals["allOf"].([]any); ok {
		o.Del("allOf")
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
		a, ok := o.Vals[kw].([]any)
		if !ok {
			continue
		}
		o.Del(kw)
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
		if v, ok := o.Get(kw); ok {
			o.Del(kw)
			addDescription(o, kw+": "+text(v))
			t.note(RuleRootCombinator, "/"+kw, "%s at the root written into the description", kw)
		}
	}
}

// mergeInto copies branch's properties into o (required too when
// required is true) and branch's other keywords where o has none.
func (t *transform) mergeInto(o, branch *object, path string, required bool) {
	props, _ := o.Obj("properties")
	if props == nil {
		props = newObject()
		o.Set("properties", props)
	}
	if bp, ok := branch.Obj("properties"); ok {
		for _, k := range bp.Keys {
			if !props.Has(k) {
				props.Set(k, cloneValue(bp.Vals[k]))
			}
		}
	}
	if required {
		if br, ok := branch.Vals["required"].([]any); ok {
			req, _ := o.Vals["required"].([]any)
			for _, r := range br {
				if !containsValue(req, r) {
					req = append(req, r)
				}
			}
			o.Set("required", req)
		}
	}
	for _, k := range branch.Keys {
		switch k {
		case "properties", "required", "type":
			continue
		}
		if !o.Has(k) {
			o.Set(k, cloneValue(branch.Vals[k]))
		}
	}
	_ = path
}

// describeAlt names one argument set of a root anyOf/oneOf.
func describeAlt(b *object) string {
	var names []string
	if r, ok := b.Vals["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok {
				names = append(names, s)
			}
		}
	}
	if len(names) == 0 {
		if p, ok := b.Obj("properties"); ok {
			names = p.Keys
		}
	}
	if d, ok := b.Str("description"); ok && d != "" {
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
	if isArraySchema(o) && !o.Has("items") && !o.Has("prefixItems") {
		o.Set("items", newObject())
		t.note(RuleArrayItems, path, "items {} added (any item)")
	}
	eachSub(o, path, t.arrayItems)
	return o
}
