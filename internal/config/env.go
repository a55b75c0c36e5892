package config

import (
	"fmt"
	"slices"
	"strings"
)

// expandVars replaces ${VAR} and ${VAR:-default} in s, looking variables
// up with lookup, and returns the result and a message for each variable
// it could not expand. ${env:VAR} is ${VAR}.
//
// A default may hold variables in turn, ${A:-${B}}: it is expanded, and
// its variables looked up, only when it is used. Braces in a default must
// balance, so that the '}' that ends the reference is known:
// ${A:-{"x":1}} is A, else {"x":1}. Outside a default, braces are text.
// Defaults nest at most maxDefaultDepth deep.
func expandVars(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	x := &expander{s: s, lookup: lookup}
	out, _, problems, _ := x.text(0, false)
	return out, problems
}

// maxDefaultDepth is how deep defaults may nest: ${A:-${B:-${C}}} is 2
// deep. It bounds the expander's recursion.
const maxDefaultDepth = 16

// expander expands the variables of one string, s.
type expander struct {
	s       string
	lookup  func(string) (string, bool)
	depth   int  // how many defaults hold the reference being read
	tooDeep bool // a default nested deeper than maxDefaultDepth ended the expansion
}

// text expands s from offset i: to its end at the top level, or, in a
// default (nested), to the '}' that ends the default. It returns the
// expanded text, the offset of that '}' (len(s) at the top level) and the
// problems found. A reference without its '}' (or with defaults nested
// too deep) ends the expansion: at the top level it is a problem quoting s
// from its "${"; in a default, ok is false and the reference that holds
// the default is the one quoted.
func (x *expander) text(i int, nested bool) (out string, end int, problems []string, ok bool) {
	var b strings.Builder
	depth := 0 // unmatched '{' in a default
	for i < len(x.s) {
		c := x.s[i]
		switch {
		case c == '$' && strings.HasPrefix(x.s[i+1:], "{"):
			v, next, ps, closed := x.ref(i)
			if !closed {
				if nested {
					return b.String(), -1, problems, false
				}
				if x.tooDeep {
					problems = append(problems, fmt.Sprintf("defaults nested more than %d deep in %q", maxDefaultDepth, x.s[i:]))
				} else {
					problems = append(problems, fmt.Sprintf("unclosed ${ in %q", x.s[i:]))
				}
				return b.String(), len(x.s), problems, true
			}
			problems = append(problems, ps...)
			b.WriteString(v)
			i = next
			continue
		case nested && c == '{':
			depth++
		case nested && c == '}':
			if depth == 0 {
				return b.String(), i, problems, true
			}
			depth--
		}
		b.WriteByte(c)
		i++
	}
	if nested {
		return b.String(), -1, problems, false
	}
	return b.String(), len(x.s), problems, true
}

// ref expands the reference that starts with the "${" at offset i. It
// returns its value, the offset after it and the problems found, or
// closed false when the reference has no '}'.
func (x *expander) ref(i int) (v string, next int, problems []string, closed bool) {
	// The name runs to the first '}' or ":-", whichever comes first.
	j := i + 2
	for j < len(x.s) && x.s[j] != '}' && !strings.HasPrefix(x.s[j:], ":-") {
		j++
	}
	if j == len(x.s) {
		return "", 0, nil, false
	}
	name := x.s[i+2 : j]
	hasDef := x.s[j] == ':'
	next = j + 1
	var def string
	var defProblems []string
	if hasDef {
		if x.depth == maxDefaultDepth {
			x.tooDeep = true
			return "", 0, nil, false
		}
		x.depth++
		var end int
		def, end, defProblems, closed = x.text(j+2, true)
		x.depth--
		if !closed {
			return "", 0, nil, false
		}
		next = end + 1
	}
	ref := x.s[i:next]

	name = strings.TrimPrefix(name, "env:")
	switch {
	case strings.HasPrefix(name, "input:"):
		return "", next, []string{fmt.Sprintf("%s is a VS Code input, which only VS Code can prompt for; use an environment variable, as ${NAME}", ref)}, true
	case !validVarName(name):
		return "", next, []string{fmt.Sprintf("invalid variable name %q in %s; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'", name, ref)}, true
	}
	v, set := x.lookup(name)
	switch {
	case hasDef && v == "":
		return def, next, defProblems, true
	case set:
		return v, next, nil, true
	default:
		return "", next, []string{fmt.Sprintf("environment variable %s is not set", name)}, true
	}
}

// validVarName reports whether name is an environment variable name:
// a letter or '_', then letters, digits and '_'.
func validVarName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Variables returns the names of the variables s refers to, sorted, each
// once: those of ${VAR} and ${env:VAR}, and those in
// defaults (${A:-${B}} names A and B), whether or not a default would be
// used. It reads no environment: it says what expanding s could read.
func Variables(s string) []string {
	var names []string
	lookup := func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", false // so that every default is expanded, and read
	}
	expandVars(s, lookup)
	slices.Sort(names)
	return names
}
