package schemaprofile

import (
	"encoding/json"
	"fmt"
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
	// alts are the argMaps of anyOf branches; each one applies.
	alts []*argMap
}

func (m *argMap) prop(name string) *argMap {
	if m.props == nil {
		m.props = map[string]*argMap{}
	}
	if m.props[name] == nil {
		m.props[name] = &argMap{}
	}
	return m.props[name]
}

// empty reports whether m changes nothing.
func (m *argMap) empty() bool {
	if m == nil {
		return true
	}
	if len(m.rename) > 0 || len(m.dropNull) > 0 || !m.items.empty() {
		return false
	}
	for _, p := range m.props {
		if !p.empty() {
			return false
		}
	}
	for _, a := range m.alts {
		if !a.empty() {
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
	if r == nil || r.args.empty() || len(args) == 0 {
		return args, nil
	}
	v, err := decode(args)
	if err != nil {
		return nil, fmt.Errorf("schemaprofile: arguments are not JSON: %w", err)
	}
	return encode(restore(v, r.args)), nil
}

func restore(v any, m *argMap) any {
	if m == nil {
		return v
	}
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
			out.Set(name, restore(x, m.props[k]))
		}
		for _, a := range m.alts {
			out = restore(out, a).(*object)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = restore(x, m.items)
		}
		for _, a := range m.alts {
			v = restore(v, a).([]any)
		}
		return v
	}
	return v
}
