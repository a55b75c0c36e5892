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
// An object and its anyOf/oneOf/allOf branches are one scope: a name is
// renamed the same way wherever it appears in it, never to a name the
// scope already has, and the renames apply to its required lists and
// dependentRequired too.
func (t *transform) renameProps(v any, path string) *argMap {
	o, ok := v.(*object)
	if !ok {
		return nil
	}
	if ref, ok := o.Str("$ref"); ok && t.refs != nil {
		return t.refMap(ref)
	}
	taken := map[string]bool{}
	var bad []string
	scopeNames(o, func(name string) {
		if !taken[name] && !goodName(name) {
			bad = append(bad, name)
		}
		taken[name] = true
	})
	table := map[string]string{}
	for _, name := range bad {
		out := uniqueName(safeName(name), taken)
		taken[out] = true
		table[name] = out
	}
	m := &argMap{}
	for from, to := range table {
		if m.rename == nil {
			m.rename = map[string]string{}
		}
		m.rename[to] = from
	}
	t.applyRenames(o, path, table, m)
	if m.empty() {
		return nil
	}
	return m
}

// scopeNames calls f with every property name of o and of its branches.
func scopeNames(o *object, f func(string)) {
	if p, ok := o.Obj("properties"); ok {
		for _, k := range p.Keys {
			f(k)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if a, ok := o.Vals[kw].([]any); ok {
			for _, b := range a {
				if bo, ok := b.(*object); ok {
					scopeNames(bo, f)
				}
			}
		}
	}
}

// applyRenames renames o's properties (and its branches') by table,
// noting each, and fills m with what restores the values below them.
func (t *transform) applyRenames(o *object, path string, table map[string]string, m *argMap) {
	if p, ok := o.Obj("properties"); ok {
		out := newObject()
		for _, k := range p.Keys {
			name := k
			if to, ok := table[k]; ok {
				name = to
				t.note(RulePropertyRenamed, ptr(path, "properties", k), "property %q sent as %q", short(k, 80), name)
			}
			out.Set(name, p.Vals[k])
			if sub := t.renameProps(p.Vals[k], ptr(path, "properties", k)); sub != nil {
				m.setProp(name, sub)
			}
		}
		o.Set("properties", out)
	}
	renameList := func(list []any) {
		for i, x := range list {
			if s, ok := x.(string); ok {
				if to, ok := table[s]; ok {
					list[i] = to
				}
			}
		}
	}
	if r, ok := o.Vals["required"].([]any); ok {
		renameList(r)
	}
	for _, kw := range []string{"dependentRequired", "dependencies"} {
		if d, ok := o.Obj(kw); ok {
			for _, k := range append([]string(nil), d.Keys...) {
				if l, ok := d.Vals[k].([]any); ok {
					renameList(l)
				}
				if to, ok := table[k]; ok {
					d.ReplaceKey(k, to)
				}
			}
		}
	}
	if it, ok := o.Get("items"); ok {
		m.items = t.renameProps(it, ptr(path, "items"))
	}
	if ap, ok := o.Get("additionalProperties"); ok {
		m.extra = t.renameProps(ap, ptr(path, "additionalProperties"))
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		a, ok := o.Vals[kw].([]any)
		if !ok {
			continue
		}
		for i, b := range a {
			bo, ok := b.(*object)
			if !ok {
				continue
			}
			bm := &argMap{}
			t.applyRenames(bo, ptr(path, kw, itoa(i)), table, bm)
			if kw == "allOf" {
				// Every branch holds: their maps join the parent's.
				for name, pm := range bm.props {
					if m.props[name] == nil {
						m.setProp(name, pm)
					}
				}
				continue
			}
			m.alts = append(m.alts, alt{schema: bo, m: bm})
		}
	}
}

// uniqueName returns name, or name with a numeric suffix, so that it is
// not taken.
func uniqueName(name string, taken map[string]bool) string {
	cand := name
	for i := 2; taken[cand]; i++ {
		suffix := "_" + itoa(i)
		base := name
		if len(base)+len(suffix) > maxPropertyName {
			base = base[:maxPropertyName-len(suffix)]
		}
		cand = base + suffix
	}
	return cand
}

// refRenames renames property names inside a schema's definitions in
// place, keeping its $refs (so a recursive schema needs no cut and every
// level maps back): each definition's argMap is made once and shared by
// every $ref to it, recursion included.
type refRenames struct {
	root *object
	maps map[string]*argMap
}

// refMap returns the argMap of what ref points at, renaming it the first
// time.
func (t *transform) refMap(ref string) *argMap {
	if m, ok := t.refs.maps[ref]; ok {
		return m
	}
	m := &argMap{pending: true}
	t.refs.maps[ref] = m // before renaming: a recursive $ref finds it
	in := &inliner{t: t, root: t.refs.root}
	target, tpath, ok := in.resolve(ref)
	if !ok {
		m.pending = false
		return nil
	}
	if sub := t.renameProps(target, tpath); sub != nil {
		*m = *sub
	}
	m.pending = false
	return m
}
