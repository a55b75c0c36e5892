package schemaprofile

import "strings"

// geminiRepeat is how often one $ref is expanded inside itself before
// the Gemini profile cuts the recursion.
const geminiRepeat = 3

// geminiKeep are the keywords of genai.Schema, as JSON Schema spells them
// (the Gemini profile writes lower-case type names).
var geminiKeep = []string{"type", "format", "title", "description", "nullable", "enum",
	"maxItems", "minItems", "properties", "required", "minProperties", "maxProperties",
	"minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
	"default", "items", "minimum", "maximum"}

// geminiDescribe are validation keywords genai.Schema lacks: the profile
// writes them into the description, so the model still reads them.
var geminiDescribe = []string{"exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"uniqueItems", "contains", "minContains", "maxContains", "prefixItems",
	"additionalItems", "patternProperties", "additionalProperties", "propertyNames",
	"dependentRequired", "dependentSchemas", "dependencies", "not", "if", "then", "else",
	"unevaluatedItems", "unevaluatedProperties", "const", "examples"}

// geminiFormats are the formats Gemini accepts, per type.
var geminiFormats = map[string][]string{
	"string":  {"enum", "date-time"},
	"integer": {"int32", "int64"},
	"number":  {"float", "double"},
}

// geminiTypes are the type names of genai.Type, lower-case.
var geminiTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// gemini is the Gemini profile.
func (t *transform) gemini(root any) *object {
	o := t.rootObject(root)
	in := &inliner{t: t, root: o, maxRepeat: geminiRepeat, cut: func(ref string) *object {
		c := newObject()
		c.Set("type", "object")
		c.Set("description", "(recursive "+short(ref, 60)+", not expanded)")
		return c
	}}
	o = in.inline(o)
	return t.geminiNode(o, "")
}

// geminiNode rewrites one schema into genai.Schema's subset.
func (t *transform) geminiNode(v any, path string) *object {
	o, ok := asObject(v)
	if !ok {
		t.note(RuleBoolSchema, path, "%s is no schema: any value", short(text(v), 40))
		o = newObject()
	} else if _, isBool := v.(bool); isBool {
		t.note(RuleBoolSchema, path, "%v schema", v)
	}
	o = o.Clone()
	t.geminiCombinators(o, path)
	if !o.Has("type") && !o.Has("anyOf") {
		switch {
		case o.Has("properties"):
			o.Set("type", "object")
			t.note(RuleUntyped, path, "properties without type: type object")
		case o.Has("items"):
			o.Set("type", "array")
			t.note(RuleUntyped, path, "items without type: type array")
		}
	}
	out := newObject()
	for _, k := range o.Keys {
		t.geminiKeyword(o, out, k, path)
	}
	t.geminiType(o, out, path)
	t.geminiEnum(o, out, path)
	t.geminiFormat(out, path)
	if hasType(out, "object") {
		t.geminiObject(o, out, path)
	}
	if hasType(out, "array") {
		it, ok := o.Get("items")
		if !ok {
			t.note(RuleArrayItems, path, "items added (any scalar or object)")
			it = newObject()
		}
		out.Set("items", t.geminiNode(it, ptr(path, "items")))
	}
	if a, ok := o.Vals["anyOf"].([]any); ok {
		var alts []any
		for i, b := range a {
			alts = append(alts, t.geminiNode(b, ptr(path, "anyOf", itoa(i))))
		}
		out.Set("anyOf", alts)
	}
	t.geminiUntyped(out, path)
	return out
}

// geminiCombinators turns oneOf into anyOf and merges allOf.
func (t *transform) geminiCombinators(o *object, path string) {
	if a, ok := o.Vals["oneOf"].([]any); ok {
		o.Del("oneOf")
		if prev, ok := o.Vals["anyOf"].([]any); ok {
			t.note(RuleToDescription, ptr(path, "oneOf"), "oneOf beside anyOf: oneOf dropped")
			addDescription(o, "Exactly one of: "+text(a)+".")
			_ = prev
		} else {
			o.Set("anyOf", a)
			t.note(RuleOneOfAsAnyOf, ptr(path, "oneOf"), "oneOf sent as anyOf (one or more may match)")
		}
	}
	if _, ok := o.Vals["allOf"].([]any); ok {
		// Merged as the strict profiles merge it: the tighter of two
		// bounds, any other disagreement in the description.
		m := t.mergeAllOf(o, path)
		for _, k := range append([]string(nil), o.Keys...) {
			o.Del(k)
		}
		for _, k := range m.Keys {
			o.Set(k, m.Vals[k])
		}
		t.geminiCombinators(o, path) // a oneOf a branch brought
	}
}

// geminiKeyword copies, describes or drops keyword k.
func (t *transform) geminiKeyword(o, out *object, k, path string) {
	v := o.Vals[k]
	switch {
	case k == "properties" || k == "required" || k == "items" || k == "anyOf" || k == "type" || k == "enum":
	case k == "description" || k == "title" || k == "pattern" || k == "format":
		str, ok := v.(string)
		if !ok {
			t.note(RuleDropped, ptr(path, k), "%s is not a string", k)
			return
		}
		if d, ok := out.Str(k); ok && k == "description" {
			str = strings.TrimSpace(str + " " + d)
		}
		out.Set(k, str)
	case k == "nullable":
		if b, ok := v.(bool); ok {
			out.Set(k, b)
		}
	case k == "minimum" || k == "maximum":
		if isNumber(v) {
			out.Set(k, v)
		} else {
			t.note(RuleDropped, ptr(path, k), "%s is not a number", k)
		}
	case contains(geminiKeep, k) && k != "propertyOrdering":
		if k == "default" || k == "example" {
			out.Set(k, v)
		} else if isCount(v) {
			out.Set(k, v)
		} else {
			t.note(RuleDropped, ptr(path, k), "%s is not a count", k)
		}
	case contains(geminiDescribe, k):
		if k == "additionalProperties" && (v == true || isEmptyObject(v)) {
			t.note(RuleDropped, ptr(path, k), "additionalProperties %s (Gemini has no keyword for it)", text(v))
			return
		}
		if k == "examples" {
			if a, ok := v.([]any); ok && len(a) > 0 && !o.Has("example") {
				out.Set("example", a[0])
			}
		}
		addDescription(out, k+": "+text(v)+".")
		t.note(RuleToDescription, ptr(path, k), "%s %s", k, short(text(v), 80))
	default:
		t.note(RuleDropped, ptr(path, k), "%s (an annotation or unknown keyword)", short(k, 80))
	}
}

func isNumber(v any) bool {
	_, ok := v.(interface{ Float64() (float64, error) })
	return ok
}

// isCount reports whether v is a non-negative integer that fits int64.
func isCount(v any) bool {
	n, ok := v.(interface{ Int64() (int64, error) })
	if !ok {
		return false
	}
	i, err := n.Int64()
	return err == nil && i >= 0
}

func isEmptyObject(v any) bool {
	o, ok := v.(*object)
	return ok && len(o.Keys) == 0
}
