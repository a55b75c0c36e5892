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

// strictDescribe are validation keywords strict mode lacks: the profile
// writes them into the description, for the model, and the adapter
// checks the arguments against the server's own schema before the call
// (package argcheck), so what they forbid still never reaches the server.
var strictDescribe = []string{"minLength", "maxLength", "uniqueItems", "contains",
	"minContains", "maxContains", "additionalItems", "unevaluatedItems",
	"unevaluatedProperties", "propertyNames", "minProperties", "maxProperties",
	"dependentRequired", "dependentSchemas", "dependencies", "not", "if", "then", "else"}

// strictRefuse are keywords whose meaning the profile cannot keep in
// strict form: their presence keeps the schema non-strict.
var strictRefuse = []string{"prefixItems"}

// strict is one run of a strict profile (OpenAIStrict or
// AnthropicStrict).
type strict struct {
	t       *transform
	rules   *strictRules
	reasons []Change
	props   int
	enums   int
	// optional and unions count the optional properties and the
	// properties with a union type (anyOf or a type list): Anthropic
	// bounds both.
	optional, unions int
}

// strictRules are one provider's strict mode.
type strictRules struct {
	// keep are the keywords it takes as they are, besides those the
	// object and array parts handle.
	keep []string
	// formats are the string formats it takes.
	formats []string
	// optional: optional properties stay optional (Anthropic); without
	// it every property is required and the optional ones nullable
	// (OpenAI).
	optional bool
	// maxOptional and maxUnions bound the optional properties and the
	// union-typed ones (0: no bound).
	maxOptional, maxUnions int
	// minItemsMax is the largest minItems kept (-1: any).
	minItemsMax int
	// safePattern reports whether a pattern can be kept (nil: any).
	safePattern func(string) bool
}

var openAIStrictRules = &strictRules{keep: strictKeep, formats: strictFormats, minItemsMax: -1}

// Anthropic strict tool use ("JSON Schema limitations" of Structured
// Outputs): no numeric bounds, string lengths or array bounds beyond
// minItems 0 or 1; additionalProperties false on every object; at most
// 24 optional properties and 16 union-typed ones; no recursion.
var anthropicStrictRules = &strictRules{
	keep:     []string{"type", "description", "title", "enum", "const", "anyOf", "pattern", "default", "minItems"},
	formats:  []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	optional: true, maxOptional: AnthropicMaxOptional, maxUnions: AnthropicMaxUnions, minItemsMax: 1,
	safePattern: func(p string) bool {
		// no lookaround, backreferences or word boundaries
		return !strings.Contains(strings.ReplaceAll(p, "(?:", ""), "(?") &&
			!strings.Contains(p, `\b`) && !strings.Contains(p, `\B`) && !hasBackref(p)
	},
}

// Anthropic's limits of strict tool use, per request: the profile holds
// each schema to them, and a request of several strict tools shares them
// (Result.Optional and Result.Unions say what one schema takes).
const (
	AnthropicMaxStrictTools = 20
	AnthropicMaxOptional    = 24
	AnthropicMaxUnions      = 16
)

// hasBackref reports whether a pattern has a backreference (\1 .. \9).
func hasBackref(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '\\' {
			if p[i+1] >= '1' && p[i+1] <= '9' {
				return true
			}
			i++
		}
	}
	return false
}

func (s *strict) refuse(path, format string, args ...any) {
	s.reasons = append(s.reasons, Change{Rule: RuleNotStrict, Path: path, Detail: fmt.Sprintf(format, args...)})
}

// applyStrict runs OpenAIStrict, falling back to OpenAI with the reasons.
func applyStrict(root any) (*Result, error) {
	t := &transform{profile: OpenAIStrict}
	s := &strict{t: t, rules: openAIStrictRules}
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
		m.compileAlts(map[*argMap]bool{})
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
	ft.args.compileAlts(map[*argMap]bool{})
	return &Result{Profile: OpenAIStrict, Schema: encode(fo), NotStrict: strings.Join(why, "; "),
		Changes: append(ft.changes, s.reasons...), args: ft.args}, nil
}

// node makes one schema strict; it returns the new schema and how to
// restore arguments written against it.
func (s *strict) node(v any, path string, depth int) (*object, *argMap) {
	o, ok := asObject(v)
	if !ok {
		s.refuse(path, "schema %s: strict mode wants a typed schema", short(text(v), 40))
		return newObject(), nil
	}
	if b, isBool := v.(bool); isBool && !b {
		s.refuse(path, "a false schema (no value allowed)")
		return newObject(), nil
	}
	o = s.t.mergeAllOf(o, path)
	if o.Has("oneOf") && !o.Has("anyOf") {
		o = o.Clone()
		o.ReplaceKey("oneOf", "anyOf")
		addDescription(o, "Exactly one of the forms must match.")
		s.t.note(RuleOneOfAsAnyOf, ptr(path, "oneOf"), "oneOf sent as anyOf; the adapter checks that exactly one matches")
	} else if o.Has("oneOf") {
		s.refuse(ptr(path, "oneOf"), "oneOf beside anyOf")
	}
	if anyValue(o) {
		return s.jsonText(o, path), &argMap{jsonText: true}
	}
	if mo, mm, ok := s.mapObject(o, path, depth); ok {
		return mo, mm
	}
	out := newObject()
	for _, k := range o.Keys {
		s.keyword(o, out, k, path)
	}
	ts := types(o)
	if ts == nil && !o.Has("type") && o.Has("properties") {
		ts = []string{"object"}
		out.Set("type", "object")
	}
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
	if nonNull := len(ts) - btoi(contains(ts, "null")); nonNull > 1 || o.Has("anyOf") {
		s.unions++
	}
	m := &argMap{}
	if contains(ts, "object") {
		s.object(o, out, path, depth, m)
	} else if o.Has("properties") {
		s.refuse(path, "properties without type object")
	}
	if contains(ts, "array") {
		it, ok := o.Get("items")
		if _, tuple := it.([]any); !ok || tuple {
			if tuple {
				s.refuse(ptr(path, "items"), "items as a list (a tuple)")
			}
			it = newObject() // any item
		}
		items, im := s.node(it, ptr(path, "items"), depth+1)
		out.Set("items", items)
		m.items = im
	}
	if a, ok := o.Vals["anyOf"].([]any); ok {
		var alts []any
		for i, b := range a {
			bo, bm := s.node(b, ptr(path, "anyOf", itoa(i)), depth)
			alts = append(alts, bo)
			m.alts = append(m.alts, alt{schema: bo, m: bm})
		}
		out.Set("anyOf", alts)
	}
	if e, ok := o.Vals["enum"].([]any); ok {
		s.enums += len(e)
		if s.enums > strictMaxEnum && s.enums-len(e) <= strictMaxEnum {
			s.refuse(ptr(path, "enum"), "more than %d enum values in all", strictMaxEnum)
		}
	}
	return out, m
}

// keyword copies, describes, drops or refuses keyword k of o.
func (s *strict) keyword(o, out *object, k, path string) {
	v := o.Vals[k]
	switch {
	case k == "properties" || k == "required" || k == "additionalProperties" || k == "items" || k == "anyOf" || k == "patternProperties":
		// the object, array and anyOf parts
	case k == "format":
		f, _ := v.(string)
		if contains(s.rules.formats, f) {
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
	case k == "pattern" && s.rules.safePattern != nil && !s.rules.safePattern(fmt.Sprint(v)):
		addDescription(out, "Pattern: "+short(text(v), 120)+".")
		s.t.note(RuleToDescription, ptr(path, k), "pattern %s (the adapter checks it before the call)", short(text(v), 80))
	case k == "minItems" && s.rules.minItemsMax >= 0 && !(v == nil || text(v) == "0" || text(v) == "1"):
		addDescription(out, "At least "+text(v)+" items.")
		s.t.note(RuleToDescription, ptr(path, k), "minItems %s (the adapter checks it before the call)", short(text(v), 80))
	case contains(s.rules.keep, k):
		out.Set(k, v)
	case s.rules.optional && contains(numericKeywords, k):
		addDescription(out, numericText(k, v))
		s.t.note(RuleToDescription, ptr(path, k), "%s %s (the adapter checks it before the call)", k, short(text(v), 80))
	case k == "default" || k == "examples" || k == "example" || k == "maxItems":
		label := map[string]string{"default": "Default", "examples": "Examples", "example": "Example", "maxItems": "At most this many items"}[k]
		addDescription(out, label+": "+text(v)+".")
		s.t.note(RuleToDescription, ptr(path, k), "%s %s", k, short(text(v), 80))
	case contains(strictDescribe, k):
		addDescription(out, constraintText(k, v))
		s.t.note(RuleToDescription, ptr(path, k), "%s %s (the adapter checks it before the call)", k, short(text(v), 80))
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
	// A required name no property declares: strict mode allows only the
	// declared ones, so it is declared, taking any value.
	if r, ok := o.Vals["required"].([]any); ok {
		cloned := false
		for _, x := range r {
			name, ok := x.(string)
			if !ok || props != nil && props.Has(name) {
				continue
			}
			if ap == false {
				s.refuse(ptr(path, "required"), "required %q is not a property, and no other is allowed", short(name, 80))
				continue
			}
			if props == nil {
				props, cloned = newObject(), true
			} else if !cloned {
				props, cloned = props.Clone(), true
			}
			props.Set(name, newObject())
			s.t.note(RuleRequiredDeclared, ptr(path, "required"), "required %q declared as a property of any value", short(name, 80))
		}
	}
	switch apo, isObj := ap.(*object); {
	case ap == false:
	case !hasAP || ap == true || (isObj && len(apo.Keys) == 0):
		if props == nil || len(props.Keys) == 0 {
			if path != "" {
				s.refuse(path, "an object without properties takes any keys")
			}
		} else if o.Has("patternProperties") {
			s.refuse(ptr(path, "patternProperties"), "patternProperties beside properties")
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
			if s.rules.optional {
				if !required[k] {
					s.optional++
				}
				outProps.Set(k, p)
				if required[k] {
					req = append(req, k)
				}
				if !pm.empty() {
					m.setProp(k, pm)
				}
				continue
			}
			if !required[k] {
				if !acceptsNull(p) {
					makeNullable(p)
				} else {
					addDescription(p, "null leaves it out.")
				}
				if m.dropNull == nil {
					m.dropNull = map[string]bool{}
				}
				m.dropNull[k] = true
				s.t.note(RuleOptionalNullable, ptr(path, "properties", k), "optional %q made required and nullable (null means absent)", short(k, 80))
			}
			outProps.Set(k, p)
			req = append(req, k)
			if !pm.empty() {
				m.setProp(k, pm)
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

// numericKeywords are the number bounds Anthropic's strict mode lacks.
var numericKeywords = []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}

func numericText(k string, v any) string {
	n := text(v)
	switch k {
	case "minimum":
		return "At least " + n + "."
	case "maximum":
		return "At most " + n + "."
	case "exclusiveMinimum":
		return "More than " + n + "."
	case "exclusiveMaximum":
		return "Less than " + n + "."
	}
	return "A multiple of " + n + "."
}

// applyAnthropicStrict runs AnthropicStrict: the root flattened as the
// Anthropic profile does, every schema made strict under Anthropic's
// rules, then bad property names renamed. When the schema cannot be
// strict (recursion, Anthropic's limits), it is the Anthropic profile's,
// with the reasons.
func applyAnthropicStrict(root any) (*Result, error) {
	t := &transform{profile: AnthropicStrict}
	s := &strict{t: t, rules: anthropicStrictRules}
	o := t.rootObject(root)
	t.flattenRoot(o)
	in := &inliner{t: t, root: o, maxRepeat: 1, cut: func(string) *object { return newObject() }}
	o = in.inline(o)
	if in.recursive {
		s.refuse("", "recursive $ref (inlined here, so not strict)")
	}
	out, m := s.node(o, "", 0)
	if s.optional > AnthropicMaxOptional {
		s.refuse("", "%d optional properties, more than the %d strict tool use allows", s.optional, AnthropicMaxOptional)
	}
	if s.unions > AnthropicMaxUnions {
		s.refuse("", "%d properties with a union type, more than the %d strict tool use allows", s.unions, AnthropicMaxUnions)
	}
	if len(s.reasons) == 0 && !t.truncated {
		t.refs = nil
		names := t.renameProps(out, "")
		names.compileAlts(map[*argMap]bool{})
		m.compileAlts(map[*argMap]bool{})
		return &Result{Profile: AnthropicStrict, Schema: encode(out), Strict: true, Changes: t.changes, names: names, args: m,
			Optional: s.optional, Unions: s.unions}, nil
	}
	ft := &transform{profile: AnthropicStrict}
	fo := ft.anthropic(root)
	ft.args.compileAlts(map[*argMap]bool{})
	var why []string
	for i, r := range s.reasons {
		if i == 3 {
			why = append(why, fmt.Sprintf("and %d more", len(s.reasons)-3))
			break
		}
		why = append(why, r.String())
	}
	return &Result{Profile: AnthropicStrict, Schema: encode(fo), NotStrict: strings.Join(why, "; "),
		Changes: append(ft.changes, s.reasons...), args: ft.args}, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
