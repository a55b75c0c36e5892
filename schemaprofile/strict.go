package schemaprofile

import (
	"fmt"
	"strings"
)

// OpenAI strict mode limits (Structured Outputs, "Supported schemas").
const (
	strictMaxDepth      = 10   // object nesting
	strictMaxProperties = 5000 // properties in all
	strictMaxEnum       = 1000 // enum values in all
)

// strictFormats are the string formats strict mode accepts.
var strictFormats = []string{"date-time", "time", "date", "duration", "email",
	"hostname", "ipv4", "ipv6", "uuid"}

// strictKeep are the keywords strict mode accepts, besides those the
// object and array parts handle.
var strictKeep = []string{"type", "description", "title", "enum", "const", "anyOf",
	"pattern", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
	"exclusiveMinimum", "minItems", "maxItems"}

// strictRefuse are validation keywords strict mode lacks: dropping them
// would change what the schema accepts, so their presence keeps the
// schema non-strict.
var strictRefuse = []string{"minLength", "maxLength", "uniqueItems", "contains",
	"minContains", "maxContains", "prefixItems", "additionalItems",
	"unevaluatedItems", "unevaluatedProperties", "patternProperties",
	"propertyNames", "minProperties", "maxProperties", "dependentRequired",
	"dependentSchemas", "dependencies", "allOf", "oneOf", "not", "if", "then", "else"}

// strict is one run of the OpenAIStrict profile.
type strict struct {
	t       *transform
	reasons []Change
	props   int
	enums   int
}

func (s *strict) refuse(path, format string, args ...any) {
	s.reasons = append(s.reasons, Change{Rule: RuleNotStrict, Path: path, Detail: fmt.Sprintf(format, args...)})
}

// applyStrict runs OpenAIStrict, falling back to OpenAI with the reasons.
func applyStrict(root any) (*Result, error) {
	t := &transform{profile: OpenAIStrict}
	s := &strict{t: t}
	o := t.rootObject(root)
	for _, kw := range []string{"anyOf", "oneOf", "allOf", "not", "enum", "const"} {
		if o.Has(kw) {
			s.refuse(ptr("", kw), "%s at the root: strict mode wants one object", kw)
		}
	}
	in := &inliner{t: t, root: o, maxRepeat: 1, cut: func(string) *object { return newObject() }}
	o = in.inline(o)
	if in.recursive {
		s.refuse("", "recursive $ref (inlined here, so not strict)")
	}
	out, m := s.node(o, "", 0)
	if len(s.reasons) == 0 && !t.truncated {
		return &Result{Profile: OpenAIStrict, Schema: encode(out), Strict: true, Changes: t.changes, args: m}, nil
	}
	ft := &transform{profile: OpenAIStrict}
	fo := ft.openAI(root)
	var why []string
	for i, r := range s.reasons {
		if i == 3 {
			why = append(why, fmt.Sprintf("and %d more", len(s.reasons)-3))
			break
		}
		why = append(why, r.String())
	}
	return &Result{Profile: OpenAIStrict, Schema: encode(fo), NotStrict: strings.Join(why, "; "),
		Changes: append(ft.changes, s.reasons...), args: ft.args}, nil
}

// node makes one schema strict; it returns the new schema and how to
// restore arguments written against it.
func (s *strict) node(v any, path string, depth int) (*object, *argMap) {
	o, ok := v.(*object)
	if !ok {
		s.refuse(path, "schema %s: strict mode wants a typed schema", short(text(v), 40))
		return newObject(), nil
	}
	out := newObject()
	for _, k := range o.Keys {
		s.keyword(o, out, k, path)
	}
	ts := types(o)
	if o.Has("type") && ts == nil {
		s.refuse(ptr(path, "type"), "type %s is not a type name or list", short(text(o.Vals["type"]), 40))
	}
	for _, ty := range ts {
		if !contains([]string{"string", "number", "integer", "boolean", "object", "array", "null"}, ty) {
			s.refuse(ptr(path, "type"), "unknown type %q", short(ty, 40))
		}
	}
	if ts == nil && !o.Has("anyOf") && !o.Has("enum") && !o.Has("const") {
		s.refuse(path, "no type: strict mode wants every schema typed")
	}
	m := &argMap{}
	if contains(ts, "object") {
		s.object(o, out, path, depth, m)
	} else if o.Has("properties") {
		s.refuse(path, "properties without type object")
	}
	if contains(ts, "array") {
		if it, ok := o.Get("items"); ok {
			items, im := s.node(it, ptr(path, "items"), depth+1)
			out.Set("items", items)
			m.items = im
		} else {
			s.refuse(path, "array without items")
		}
	}
	if a, ok := o.Vals["anyOf"].([]any); ok {
		var alts []any
		for i, b := range a {
			bo, bm := s.node(b, ptr(path, "anyOf", itoa(i)), depth)
			alts = append(alts, bo)
			m.alts = append(m.alts, bm)
		}
		out.Set("anyOf", alts)
	}
	if e, ok := o.Vals["enum"].([]any); ok {
		s.enums += len(e)
		if s.enums > strictMaxEnum {
			s.refuse(ptr(path, "enum"), "more than %d enum values in all", strictMaxEnum)
		}
	}
	return out, m
}

// keyword copies, describes, drops or refuses keyword k of o.
func (s *strict) keyword(o, out *object, k, path string) {
	v := o.Vals[k]
	switch {
	case k == "properties" || k == "required" || k == "additionalProperties" || k == "items" || k == "anyOf":
		// the object, array and anyOf parts
	case k == "format":
		f, _ := v.(string)
		if contains(strictFormats, f) {
			out.Set(k, v)
		} else {
			addDescription(out, "Format: "+short(text(v), 80)+".")
			s.t.note(RuleToDescription, ptr(path, k), "format %s", short(text(v), 80))
		}
	case k == "description" || k == "title":
		if str, ok := v.(string); ok {
			if d, ok := out.Str(k); ok && k == "description" {
				str = strings.TrimSpace(str + " " + d)
			}
			out.Set(k, str)
		} else {
			s.t.note(RuleDropped, ptr(path, k), "%s is not a string", k)
		}
	case contains(strictKeep, k):
		out.Set(k, v)
	case k == "default" || k == "examples" || k == "example":
		label := map[string]string{"default": "Default", "examples": "Examples", "example": "Example"}[k]
		addDescription(out, label+": "+text(v)+".")
		s.t.note(RuleToDescription, ptr(path, k), "%s %s", k, short(text(v), 80))
	case contains(strictRefuse, k):
		s.refuse(ptr(path, k), "%s is not supported in strict mode", k)
	default:
		s.t.note(RuleDropped, ptr(path, k), "%s (an annotation or unknown keyword)", short(k, 80))
	}
}

// object makes the object part strict: every property required (optional
// ones nullable) and additionalProperties false.
func (s *strict) object(o, out *object, path string, depth int, m *argMap) {
	if depth >= strictMaxDepth {
		s.refuse(path, "objects nested deeper than %d", strictMaxDepth)
		return
	}
	props, _ := o.Obj("properties")
	if o.Has("properties") && props == nil {
		s.refuse(ptr(path, "properties"), "properties is not an object")
	}
	required := map[string]bool{}
	if r, ok := o.Vals["required"].([]any); ok {
		for _, x := range r {
			if str, ok := x.(string); ok {
				required[str] = true
			}
		}
	}
	ap, hasAP := o.Get("additionalProperties")
	switch apo, isObj := ap.(*object); {
	case ap == false:
	case !hasAP || ap == true || (isObj && len(apo.Keys) == 0):
		if props == nil || len(props.Keys) == 0 {
			if path != "" {
				s.refuse(path, "an object without properties takes any keys")
			}
		} else {
			s.t.note(RuleAdditionalFalse, path, "additionalProperties false (only the listed properties)")
		}
	default:
		s.refuse(ptr(path, "additionalProperties"), "additionalProperties is a schema (a map of any keys)")
	}
	outProps := newObject()
	var req []any
	if props != nil {
		for _, k := range props.Keys {
			s.props++
			p, pm := s.node(props.Vals[k], ptr(path, "properties", k), depth+1)
			if !required[k] {
				if !acceptsNull(p) {
					makeNullable(p)
					if m.dropNull == nil {
						m.dropNull = map[string]bool{}
					}
					m.dropNull[k] = true
				}
				s.t.note(RuleOptionalNullable, ptr(path, "properties", k), "optional %q made required and nullable (null means absent)", short(k, 80))
			}
			outProps.Set(k, p)
			req = append(req, k)
			if !pm.empty() {
				*m.prop(k) = *pm
			}
		}
	}
	if s.props > strictMaxProperties {
		s.refuse(path, "more than %d properties in all", strictMaxProperties)
	}
	for r := range required {
		if props == nil || !props.Has(r) {
			s.t.note(RuleRequiredUndefined, ptr(path, "required"), "required %q has no property", short(r, 80))
		}
	}
	out.Set("properties", outProps)
	out.Set("required", append([]any{}, req...))
	out.Set("additionalProperties", false)
}

// makeNullable lets o accept null too.
func makeNullable(o *object) {
	if e, ok := o.Vals["enum"].([]any); ok {
		o.Set("enum", append(e, nil))
	}
	if c, ok := o.Get("const"); ok {
		o.Del("const")
		o.Set("enum", []any{c, nil})
	}
	switch t := o.Vals["type"].(type) {
	case string:
		o.Set("type", []any{t, "null"})
		return
	case []any:
		o.Set("type", append(t, "null"))
		return
	}
	if a, ok := o.Vals["anyOf"].([]any); ok {
		n := newObject()
		n.Set("type", "null")
		o.Set("anyOf", append(a, n))
	}
}
