package schemaprofile

import "strings"

// maxPropertyName is the longest property name Anthropic accepts.
const maxPropertyName = 64

// goodName reports whether s matches ^[a-zA-Z0-9_.-]{1,64}$, the
// property names Anthropic accepts in input_schema.
func goodName(s string) bool {
	if s == "" || len(s) > maxPropertyName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

// badNames reports whether any properties object under v has a name
// goodName refuses.
func badNames(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	if p, ok := o.Obj("properties"); ok {
		for _, k := range p.Keys {
			if !goodName(k) {
				return true
			}
		}
	}
	bad := false
	eachSub(o.Clone(), "", func(sub any, _ string) any {
		bad = bad || badNames(sub)
		return sub
	})
	return bad
}

// safeName makes s a good name: other bytes become '_', cut to 64.
func safeName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < maxPropertyName; i++ {
		if nameByte(s[i]) {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// renameProps renames bad property names under v (refs already inlined)
// and returns the argMap that maps them back (nil when none changed).
func (t *transform) renameProps(v any, path string) *argMap {
	o, ok := v.(*object)
	if !ok {
		return nil
	}
	m := &argMap{}
	if p, ok := o.Obj("properties"); ok {
		out := newObject()
		for _, k := range p.Keys {
			name := k
			if !goodName(k) {
				name = uniqueName(safeName(k), p, out)
				if m.rename == nil {
					m.rename = map[string]string{}
				}
				m.rename[name] = k
				t.note(RulePropertyRenamed, ptr(path, "properties", k), "property %q sent as %q", short(k, 80), name)
				renameRequired(o, k, name)
			}
			out.Set(name, p.Vals[k])
			if sub := t.renameProps(p.Vals[k], ptr(path, "properties", k)); sub != nil {
				m.prop(name).rename, m.prop(name).props = sub.rename, sub.props
				m.prop(name).items, m.prop(name).alts = sub.items, sub.alts
			}
		}
		o.Set("properties", out)
	}
	if it, ok := o.Get("items"); ok {
		m.items = t.renameProps(it, ptr(path, "items"))
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if a, ok := o.Vals[kw].([]any); ok {
			for i, b := range a {
				if sub := t.renameProps(b, ptr(path, kw, itoa(i))); sub != nil {
					m.alts = append(m.alts, sub)
				}
			}
		}
	}
	if m.empty() {
		return nil
	}
	return m
}

// uniqueName returns name, or name with a numeric suffix, so that it is
// in neither the input nor the output properties.
func uniqueName(name string, in, out *object) string {
	cand := name
	for i := 2; in.Has(cand) || out.Has(cand); i++ {
		suffix := "_" + itoa(i)
		base := name
		if len(base)+len(suffix) > maxPropertyName {
			base = base[:maxPropertyName-len(suffix)]
		}
		cand = base + suffix
	}
	return cand
}

func renameRequired(o *object, from, to string) {
	r, ok := o.Vals["required"].([]any)
	if !ok {
		return
	}
	for i, x := range r {
		if x == from {
			r[i] = to
		}
	}
}
