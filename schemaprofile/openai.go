package schemaprofile

// openAI is the non-strict OpenAI profile: the root an object without
// combinators, and every array with items.
func (t *transform) openAI(root any) *object {
	o := t.rootObject(root)
	t.flattenRoot(o)
	return t.arrayItems(o, "").(*object)
}

// anthropic is the Anthropic profile: the root an object without
// combinators, property names within ^[a-zA-Z0-9_.-]{1,64}$.
func (t *transform) anthropic(root any) *object {
	o := t.rootObject(root)
	t.flattenRoot(o)
	if !badNames(o) {
		return o
	}
	t.refs = &refRenames{root: o, maps: map[string]*argMap{}}
	m := t.renameProps(o, "")
	// Definitions nothing refers to keep their names: renaming them
	// would mean nothing, and their bad names would still be refused.
	for _, kw := range []string{"$defs", "definitions"} {
		if d, ok := o.Obj(kw); ok && anyBadNames(d) {
			o.Del(kw)
			t.note(RuleDropped, ptr("", kw), "%s with property names Anthropic refuses, referred to by nothing", kw)
		}
	}
	if m != nil {
		t.args = m
	}
	return o
}

// anyBadNames reports whether a definitions object holds a schema with a
// property name Anthropic refuses.
func anyBadNames(defs *object) bool {
	for _, k := range defs.Keys {
		if badNames(defs.Vals[k]) {
			return true
		}
	}
	return false
}
