package schemaprofile

// geminiType writes o's type as genai.Schema holds it: one type name,
// null as nullable, several as anyOf.
func (t *transform) geminiType(o, out *object, path string) {
	v, has := o.Get("type")
	if !has {
		return
	}
	ts := types(o)
	var keep []string
	null := false
	for _, ty := range ts {
		switch {
		case ty == "null":
			null = true
		case contains(geminiTypes, ty) && !contains(keep, ty):
			keep = append(keep, ty)
		}
	}
	if ts == nil || len(keep)+boolInt(null) != len(ts) {
		t.note(RuleDropped, ptr(path, "type"), "type %s: unknown names dropped", short(text(v), 60))
	}
	switch {
	case len(keep) == 0 && null:
		out.Set("type", "null")
		return
	case len(keep) == 0:
		return
	case len(keep) == 1:
		out.Set("type", keep[0])
	default:
		var alts []any
		for _, ty := range keep {
			b := newObject()
			b.Set("type", ty)
			alts = append(alts, b)
		}
		if prev, ok := o.Vals["anyOf"].([]any); ok {
			addDescription(out, "Also one of: "+text(prev)+".")
		}
		o.Set("anyOf", alts)
		t.note(RuleTypeList, ptr(path, "type"), "type list %s sent as anyOf", short(text(v), 60))
	}
	if null {
		out.Set("nullable", true)
		if len(keep) == 1 {
			t.note(RuleTypeList, ptr(path, "type"), "type list %s sent as nullable %s", short(text(v), 60), keep[0])
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// geminiEnum keeps an enum of strings on a string schema; other enums go
// to the description.
func (t *transform) geminiEnum(o, out *object, path string) {
	e, has := o.Get("enum")
	if !has {
		if c, ok := o.Str("const"); ok && (!out.Has("type") || hasType(out, "string")) {
			out.Set("type", "string")
			out.Set("enum", []any{c})
			t.note(RuleEnumToDescription, ptr(path, "const"), "const %q sent as a one-value enum", short(c, 60))
		}
		return
	}
	list, ok := e.([]any)
	strs := ok && len(list) > 0
	var vals []any
	for _, x := range list {
		switch x.(type) {
		case string:
			vals = append(vals, x)
		case nil:
			out.Set("nullable", true)
		default:
			strs = false
		}
	}
	if strs && len(vals) > 0 && (!out.Has("type") || hasType(out, "string")) {
		out.Set("type", "string")
		out.Set("enum", vals)
		return
	}
	addDescription(out, "Allowed values: "+text(e)+".")
	t.note(RuleEnumToDescription, ptr(path, "enum"), "enum %s written into the description", short(text(e), 80))
}

// geminiFormat keeps the formats Gemini knows for the type.
func (t *transform) geminiFormat(out *object, path string) {
	f, ok := out.Str("format")
	if !ok {
		return
	}
	ty, _ := out.Str("type")
	if contains(geminiFormats[ty], f) {
		return
	}
	out.Del("format")
	addDescription(out, "Format: "+f+".")
	t.note(RuleToDescription, ptr(path, "format"), "format %q", short(f, 60))
}

// geminiObject writes properties and the required names that have one.
func (t *transform) geminiObject(o, out *object, path string) {
	props := newObject()
	if p, ok := o.Obj("properties"); ok {
		for _, k := range p.Keys {
			props.Set(k, t.geminiNode(p.Vals[k], ptr(path, "properties", k)))
		}
	}
	out.Set("properties", props)
	r, ok := o.Vals["required"].([]any)
	if !ok {
		return
	}
	var req []any
	for _, x := range r {
		s, ok := x.(string)
		if ok && props.Has(s) && !containsValue(req, s) {
			req = append(req, s)
		} else {
			t.note(RuleRequiredUndefined, ptr(path, "required"), "required %s has no property", short(text(x), 60))
		}
	}
	if len(req) > 0 {
		out.Set("required", req)
	}
}

// geminiUntyped gives a schema without type or anyOf the types it
// stands for: properties mean object; otherwise any value, as anyOf.
func (t *transform) geminiUntyped(out *object, path string) {
	if out.Has("type") || out.Has("anyOf") {
		return
	}
	t.note(RuleUntyped, path, "no type: sent as anyOf string, number, boolean, object, array")
	var alts []any
	for _, ty := range []string{"string", "number", "boolean", "object", "array"} {
		b := newObject()
		b.Set("type", ty)
		if ty == "object" {
			b.Set("properties", newObject())
		}
		if ty == "array" {
			it := newObject()
			it.Set("type", "string")
			b.Set("items", it)
		}
		alts = append(alts, b)
	}
	out.Set("anyOf", alts)
}
