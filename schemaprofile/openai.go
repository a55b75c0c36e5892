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
	if hasRef(o) {
		in := &inliner{t: t, root: o, maxRepeat: 3, cut: func(string) *object { return newObject() }}
		o = in.inline(o)
	}
	m := t.renameProps(o, "")
	if m != nil {
		t.args = m
	}
	return o
}
