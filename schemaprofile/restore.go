package schemaprofile

import (
	"encoding/json"
	"fmt"

	"github.com/mcpadapter/mcpadapter/argcheck"
)

// argMap says how to turn arguments written against a transformed
// schema back into arguments for the original one.
type argMap struct {
	// props maps an output property name to its own argMap.
	props map[string]*argMap
	// rename maps an output property name to the input one.
	rename map[string]string
	// dropNull lists output property names whose null means "absent"
	// (optional properties that strict mode made nullable).
	dropNull map[string]bool
	// items is the argMap of array items.
	items *argMap
	// alts are the anyOf branches (in order): the first whose schema
	// the value matches gives its argMap.
	alts []alt
	// jsonText: the value was written as a string of JSON text.
	jsonText bool
	// entries: an object of free keys written as [{key, value}];
	// value restores each value.
	entries bool
	value   *argMap
	// extra restores the values of keys no property names
	// (additionalProperties).
	extra *argMap
	// pending: a definition's argMap being made; what refers to it
	// keeps it, as it may yet change something.
	pending bool
}

// An alt is one anyOf branch: its schema as sent, compiled when its
// argMap changes anything.
type alt struct {
	schema *object
	m      *argMap
	check  *argcheck.Schema
}

// compileAlts compiles the schemas of m's branches, everywhere in m,
// when one of them restores something: Restore must then know which
// branch a value took.
func (m *argMap) compileAlts(seen map[*argMap]bool) {
	if m == nil || seen[m] {
		return
	}
	seen[m] = true
	needed := false
	for _, a := range m.alts {
		needed = needed || !a.m.empty()
	}
	for i := range m.alts {
		a := &m.alts[i]
		if needed && a.check == nil && a.schema != nil {
			a.check, _ = argcheck.Compile(encode(a.schema))
		}
		a.m.compileAlts(seen)
	}
	for _, p := range m.props {
		p.compileAlts(seen)
	}
	m.items.compileAlts(seen)
	m.value.compileAlts(seen)
	m.extra.compileAlts(seen)
}

// pick returns the argMap of the first branch v matches (nil when that
// branch restores nothing, or v matches none).
func (m *argMap) pick(v any) *argMap {
	for _, a := range m.alts {
		if a.check != nil && a.check.ValidateValue(v) == nil {
			return a.m
		}
	}
	return nil
}

// setProp sets the argMap of property name.
func (m *argMap) setProp(name string, p *argMap) {
	if m.props == nil {
		m.props = map[string]*argMap{}
	}
	m.props[name] = p
}

// empty reports whether m changes nothing.
func (m *argMap) empty() bool { return m.emptySeen(map[*argMap]bool{}) }

func (m *argMap) emptySeen(seen map[*argMap]bool) bool {
	if m == nil || seen[m] {
		return true
	}
	if m.pending {
		return false
	}
	seen[m] = true
	if len(m.rename) > 0 || len(m.dropNull) > 0 || m.jsonText || m.entries ||
		!m.items.emptySeen(seen) || !m.extra.emptySeen(seen) || !m.value.emptySeen(seen) {
		return false
	}
	for _, p := range m.props {
		if !p.emptySeen(seen) {
			return false
		}
	}
	for _, a := range m.alts {
		if !a.m.emptySeen(seen) {
			return false
		}
	}
	return true
}

// Restore turns arguments a model wrote against r.Schema into arguments
// for the original schema: it removes the nulls strict mode stands for
// "absent" and gives renamed properties their names back. Arguments are
// returned unchanged when the profile changed nothing they could carry.
func (r *Result) Restore(args json.RawMessage) (json.RawMessage, error) {
	if r == nil || r.args.empty() && r.names.empty() || len(args) == 0 {
		return args, nil
	}
	v, err := decode(args)
	if err != nil {
		return nil, fmt.Errorf("schemaprofile: arguments are not JSON: %w", err)
	}
	if !r.names.empty() {
		v = restore(v, r.names)
	}
	return encode(restore(v, r.args)), nil
}

func restore(v any, m *argMap) any {
	if m == nil {
		return v
	}
	if m.jsonText {
		if s, ok := v.(string); ok {
			if x, err := decode([]byte(s)); err == nil {
				return x
			}
		}
		return v
	}
	if m.entries {
		a, ok := v.([]any)
		if !ok {
			return v
		}
		out := newObject()
		for _, e := range a {
			eo, ok := e.(*object)
			if !ok {
				continue
			}
			if k, ok := eo.Str("key"); ok {
				out.Set(k, restore(eo.Vals["value"], m.value))
			}
		}
		return out
	}
	branch := m.pick(v) // before anything changes v
	switch v := v.(type) {
	case *object:
		out := newObject()
		for _, k := range v.Keys {
			x := v.Vals[k]
			if x == nil && m.dropNull[k] {
				continue
			}
			name := k
			if in, ok := m.rename[k]; ok {
				name = in
			}
			pm, declared := m.props[k]
			if !declared {
				pm = m.extra
			}
			out.Set(name, restore(x, pm))
		}
		if branch != nil {
			return restore(out, branch)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = restore(x, m.items)
		}
		if branch != nil {
			return restore(v, branch)
		}
		return v
	}
	if branch != nil {
		return restore(v, branch)
	}
	return v
}
