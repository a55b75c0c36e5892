package argcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/internal/jsontree"
)

// Limits of one validation: a schema whose $refs loop without consuming
// the value, or a huge value, cannot make it run for long. Past a limit
// the rest is accepted.
const (
	maxRefDepth = 64
	maxSteps    = 200000
	// maxProblems bounds the problems one Error lists.
	maxProblems = 20
)

// A Problem is one way the arguments break the schema.
type Problem struct {
	// Path is the JSON Pointer of the offending value in the arguments
	// ("" is the arguments object itself; for a missing required
	// argument, where it belongs).
	Path string
	// Keyword is the schema keyword that refused it ("type", "required").
	Keyword string
	// Message says what was expected, for a model or a person.
	Message string
	// SchemaPath is the JSON Pointer of the refusing keyword's schema.
	SchemaPath string
}

// Arg returns Path as a JSONPath a model reads: $.stops[2].name.
func (p Problem) Arg() string {
	if p.Path == "" {
		return "$"
	}
	var b strings.Builder
	b.WriteByte('$')
	for _, tok := range strings.Split(p.Path[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		if _, ok := atoi(tok); ok {
			b.WriteString("[" + tok + "]")
		} else if plainName(tok) {
			b.WriteString("." + tok)
		} else {
			q, _ := json.Marshal(tok)
			b.WriteString("[" + string(q) + "]")
		}
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '-')
		if !ok {
			return false
		}
	}
	return true
}

func (p Problem) String() string { return p.Arg() + ": " + p.Message }

// An Error lists every problem found (at most 20; Truncated says how many
// more there were).
type Error struct {
	Problems  []Problem
	Truncated int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("argcheck: invalid arguments: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if e.Truncated > 0 {
		fmt.Fprintf(&b, "; and %d more", e.Truncated)
	}
	return b.String()
}

// Validate checks args (one JSON value, usually an object) against the
// schema: nil when they pass, an *Error listing each problem when not, or
// an error saying args are not JSON.
func (s *Schema) Validate(args json.RawMessage) error {
	v, err := jsontree.Parse(bytes.TrimSpace(args), maxDepth)
	if err != nil {
		return fmt.Errorf("argcheck: arguments are not JSON: %w", err)
	}
	return s.ValidateValue(v)
}

// ValidateValue is Validate for a decoded value: objects as
// *jsontree.Object or map[string]any, numbers as json.Number (float64
// and int are accepted too).
func (s *Schema) ValidateValue(v any) error {
	st := &state{}
	st.check(s.root, normalize(v), "")
	if len(st.problems) == 0 {
		return nil
	}
	e := &Error{Problems: st.problems}
	if len(e.Problems) > maxProblems {
		e.Truncated = len(e.Problems) - maxProblems
		e.Problems = e.Problems[:maxProblems]
	}
	return e
}

// state is one validation run.
type state struct {
	problems []Problem
	// quick stops at the first problem (a subschema whose verdict is
	// all that counts: not, if, oneOf).
	quick bool
	depth int
	steps *int
}

func (st *state) add(at string, n *node, keyword, format string, args ...any) {
	st.problems = append(st.problems, Problem{Path: at, Keyword: keyword, Message: fmt.Sprintf(format, args...), SchemaPath: n.path + "/" + keyword})
}

func (st *state) done() bool { return st.quick && len(st.problems) > 0 }

// sub returns a state for a subschema whose problems are weighed apart.
func (st *state) sub(quick bool) *state {
	return &state{quick: quick || st.quick, depth: st.depth, steps: st.steps}
}

// valid reports whether x passes n, stopping at the first problem.
func (st *state) valid(n *node, x any, at string) bool {
	s := st.sub(true)
	s.check(n, x, at)
	return len(s.problems) == 0
}

func (st *state) check(n *node, x any, at string) {
	if st.steps == nil {
		st.steps = new(int)
	}
	*st.steps++
	if *st.steps > maxSteps || n == nil {
		return
	}
	if n.always != nil {
		if !*n.always {
			st.add(at, n, "false", "no value is allowed here")
		}
		return
	}
	if n.refTo != nil && st.depth < maxRefDepth {
		st.depth++
		st.check(n.refTo, x, at)
		st.depth--
		if n.refAll || st.done() {
			return
		}
	} else if n.refAll {
		return
	}
	if n.types != nil && !typeOK(n.types, x) {
		st.add(at, n, "type", "expected %s, got %s", typeNames(n.types), describe(x))
		return
	}
	if n.hasConst && !equal(x, n.constVal) {
		st.add(at, n, "const", "expected exactly %s, got %s", short(x2json(n.constVal)), describe(x))
		if st.done() {
			return
		}
	}
	if n.hasEnum && !inList(x, n.enum) {
		st.add(at, n, "enum", "expected one of %s, got %s", enumText(n.enum), describe(x))
		if st.done() {
			return
		}
	}
	switch x := x.(type) {
	case json.Number:
		st.number(n, x, at)
	case string:
		st.str(n, x, at)
	case []any:
		st.array(n, x, at)
	case *jsontree.Object:
		st.object(n, x, at)
	}
	if !st.done() {
		st.combinators(n, x, at)
	}
}

func (st *state) number(n *node, x json.Number, at string) {
	v := num(x)
	if v == nil {
		return
	}
	switch {
	case n.minimum != nil && less(v, n.minimum):
		st.add(at, n, "minimum", "expected a number >= %s, got %s", n.minimum.text, x)
	case n.exclMin != nil && !less(n.exclMin, v):
		st.add(at, n, "exclusiveMinimum", "expected a number > %s, got %s", n.exclMin.text, x)
	}
	switch {
	case n.maximum != nil && less(n.maximum, v):
		st.add(at, n, "maximum", "expected a number <= %s, got %s", n.maximum.text, x)
	case n.exclMax != nil && !less(v, n.exclMax):
		st.add(at, n, "exclusiveMaximum", "expected a number < %s, got %s", n.exclMax.text, x)
	}
	if n.multipleOf != nil && !multipleOf(v, n.multipleOf) {
		st.add(at, n, "multipleOf", "expected a multiple of %s, got %s", n.multipleOf.text, x)
	}
}

func (st *state) str(n *node, x string, at string) {
	if n.minLength >= 0 || n.maxLength >= 0 {
		l := utf8.RuneCountInString(x)
		if n.minLength >= 0 && l < n.minLength {
			st.add(at, n, "minLength", "expected at least %d characters, got %d", n.minLength, l)
		}
		if n.maxLength >= 0 && l > n.maxLength {
			st.add(at, n, "maxLength", "expected at most %d characters, got %d", n.maxLength, l)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(x) {
		st.add(at, n, "pattern", "expected a string matching the pattern %s, got %s", short(n.patternSrc), describe(x))
	}
}

func (st *state) array(n *node, x []any, at string) {
	if n.minItems >= 0 && len(x) < n.minItems {
		st.add(at, n, "minItems", "expected at least %d items, got %d", n.minItems, len(x))
	}
	if n.maxItems >= 0 && len(x) > n.maxItems {
		st.add(at, n, "maxItems", "expected at most %d items, got %d", n.maxItems, len(x))
	}
	if n.uniqueItems {
		if i, j, dup := duplicate(x); dup {
			st.add(at, n, "uniqueItems", "expected unique items, but items %d and %d are equal", i, j)
		}
	}
	for i, item := range x {
		if st.done() {
			return
		}
		ip := at + "/" + itoa(i)
		switch {
		case i < len(n.prefixItems):
			st.check(n.prefixItems[i], item, ip)
		case n.items != nil:
			if n.items.always != nil && !*n.items.always {
				st.add(ip, n, "items", "expected at most %d items, got %d", len(n.prefixItems), len(x))
				break
			}
			st.check(n.items, item, ip)
		}
	}
	if n.contains != nil {
		matches := 0
		for i, item := range x {
			if st.valid(n.contains, item, at+"/"+itoa(i)) {
				matches++
			}
		}
		lo := 1
		if n.minContains >= 0 {
			lo = n.minContains
		}
		if matches < lo {
			st.add(at, n, "contains", "expected at least %d items matching %s, got %d", lo, summary(n.contains), matches)
		}
		if n.maxContains >= 0 && matches > n.maxContains {
			st.add(at, n, "maxContains", "expected at most %d items matching %s, got %d", n.maxContains, summary(n.contains), matches)
		}
	}
}

func (st *state) object(n *node, x *jsontree.Object, at string) {
	for _, r := range n.required {
		if !x.Has(r) {
			st.add(at+"/"+escape(r), n, "required", "required, missing")
			if st.done() {
				return
			}
		}
	}
	if n.minProps >= 0 && len(x.Keys) < n.minProps {
		st.add(at, n, "minProperties", "expected at least %d properties, got %d", n.minProps, len(x.Keys))
	}
	if n.maxProps >= 0 && len(x.Keys) > n.maxProps {
		st.add(at, n, "maxProperties", "expected at most %d properties, got %d", n.maxProps, len(x.Keys))
	}
	for _, k := range x.Keys {
		if st.done() {
			return
		}
		v, kp := x.Vals[k], at+"/"+escape(k)
		matched := false
		if p, ok := n.properties[k]; ok {
			matched = true
			st.check(p, v, kp)
		}
		for _, pp := range n.patternProps {
			if pp.re.MatchString(k) {
				matched = true
				st.check(pp.sub, v, kp)
			}
		}
		if !matched && n.additional != nil {
			if n.additional.always != nil && !*n.additional.always {
				st.add(kp, n, "additionalProperties", "unexpected property%s", allowedNames(n))
			} else {
				st.check(n.additional, v, kp)
			}
		}
		if n.propertyNames != nil {
			s := st.sub(false)
			s.check(n.propertyNames, k, kp)
			for _, p := range s.problems {
				p.Message = "property name " + p.Message
				st.problems = append(st.problems, p)
			}
		}
		for _, dep := range n.dependentRequired[k] {
			if !x.Has(dep) {
				st.add(at+"/"+escape(dep), n, "dependentRequired", "required when %q is given, missing", k)
			}
		}
		if d, ok := n.dependentSchemas[k]; ok {
			st.check(d, x, at)
		}
	}
}

// allowedNames lists an object's properties for a message.
func allowedNames(n *node) string {
	if len(n.propNames) == 0 {
		return ""
	}
	names := n.propNames
	more := ""
	if len(names) > 15 {
		names, more = names[:15], fmt.Sprintf(" and %d more", len(n.propNames)-15)
	}
	return "; the allowed properties are " + strings.Join(names, ", ") + more
}

func (st *state) combinators(n *node, x any, at string) {
	for _, b := range n.allOf {
		st.check(b, x, at)
		if st.done() {
			return
		}
	}
	if len(n.anyOf) > 0 {
		st.alternatives(n, "anyOf", n.anyOf, x, at)
		if st.done() {
			return
		}
	}
	if len(n.oneOf) > 0 {
		var matched []int
		for i, b := range n.oneOf {
			if st.valid(b, x, at) {
				matched = append(matched, i)
			}
		}
		switch {
		case len(matched) == 0:
			st.alternatives(n, "oneOf", n.oneOf, x, at)
		case len(matched) > 1 && !n.oneOf[matched[0]].uncertain && !n.oneOf[matched[1]].uncertain:
			st.add(at, n, "oneOf", "matches %d of the allowed forms (%s and %s), expected exactly one", len(matched), summary(n.oneOf[matched[0]]), summary(n.oneOf[matched[1]]))
		}
		if st.done() {
			return
		}
	}
	if n.not != nil && !n.not.uncertain && st.valid(n.not, x, at) {
		st.add(at, n, "not", "expected a value that is not %s", summary(n.not))
		if st.done() {
			return
		}
	}
	if n.ifNode != nil {
		if n.ifNode.uncertain {
			// Which branch applies is unknown: refuse only what
			// neither allows.
			if !st.valid(n.then, x, at) && !st.valid(n.els, x, at) {
				st.check(n.then, x, at)
			}
			return
		}
		if st.valid(n.ifNode, x, at) {
			st.check(n.then, x, at)
		} else {
			st.check(n.els, x, at)
		}
	}
}

// alternatives checks x against branches of which at least one must
// pass. When none does, the message is the one branch that x has the
// right type for (its own problems), or the forms x could have taken.
func (st *state) alternatives(n *node, keyword string, branches []*node, x any, at string) {
	var near [][]Problem
	for _, b := range branches {
		s := st.sub(false)
		s.check(b, x, at)
		if len(s.problems) == 0 {
			return
		}
		if st.quick {
			continue
		}
		if !(len(s.problems) == 1 && s.problems[0].Path == at && s.problems[0].Keyword == "type") {
			near = append(near, s.problems)
		}
	}
	if len(near) == 1 {
		st.problems = append(st.problems, near[0]...)
		return
	}
	forms := make([]string, 0, len(branches))
	for _, b := range branches {
		forms = append(forms, summary(b))
	}
	st.add(at, n, keyword, "expected %s, got %s", strings.Join(dedupe(forms), " or "), describe(x))
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		dup := false
		for _, y := range out {
			dup = dup || x == y
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}
