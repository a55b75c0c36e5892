package schemaprofile

import "strings"

// ModelPath turns the JSON Pointer of a value in restored arguments (as
// the original schema names it, e.g. an argument check's problem path)
// into the pointer of the same value in the arguments the model wrote
// against r.Schema: renamed properties get the names the model saw. A
// part the profile did not rename, or cannot be traced back (a value
// sent as JSON text or as key/value entries), is kept as it is.
func (r *Result) ModelPath(path string) string {
	if r == nil || path == "" || !strings.HasPrefix(path, "/") || r.args.empty() && r.names.empty() {
		return path
	}
	toks := strings.Split(path[1:], "/")
	for i, t := range toks {
		toks[i] = unptr(t)
	}
	// Restore applies names, then args: undo args first.
	toks = r.args.modelPath(toks, 0)
	toks = r.names.modelPath(toks, 0)
	return ptr("", toks...)
}

// modelPath maps the tokens of a restored value's path back to the names
// the model wrote (see ModelPath). depth bounds recursive maps.
func (m *argMap) modelPath(toks []string, depth int) []string {
	if m == nil || len(toks) == 0 || depth > maxDepth || m.jsonText || m.entries {
		return toks
	}
	out := append([]string(nil), toks...)
	name := toks[0]
	if _, ok := atoi(name); ok && m.items != nil {
		return append(out[:1], m.items.modelPath(toks[1:], depth+1)...)
	}
	// A branch's renames are applied after m's: undo them first.
	var branch *argMap
	for _, a := range m.alts {
		if o, ok := renamedFrom(a.m, name); ok {
			name, branch = o, a.m
			break
		}
	}
	if branch != nil {
		if child, ok := branch.props[name]; ok {
			out[0] = name
			return append(out[:1], child.modelPath(toks[1:], depth+1)...)
		}
	}
	if o, ok := renamedFrom(m, name); ok {
		name = o
	}
	out[0] = name
	child, declared := m.props[name]
	if !declared {
		child = m.extra
	}
	return append(out[:1], child.modelPath(toks[1:], depth+1)...)
}

// renamedFrom returns the name the model wrote for the property m renames
// to name.
func renamedFrom(m *argMap, name string) (string, bool) {
	if m == nil {
		return "", false
	}
	for out, in := range m.rename {
		if in == name {
			return out, true
		}
	}
	return "", false
}
