package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestExpandVars(t *testing.T) {
	env := map[string]string{"A": "1", "B": "two", "EMPTY": "", "PATH_X": "/x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		problems []string
	}{
		{"plain", "plain", nil},
		{"", "", nil},
		{"${A}", "1", nil},
		{"${env:A}", "1", nil},
		{"${A}${B}", "1two", nil},
		{"pre-${A}-mid-${B}-post", "pre-1-mid-two-post", nil},
		{"${UNSET:-def}", "def", nil},
		{"${EMPTY:-def}", "def", nil},
		{"${A:-def}", "1", nil},
		{"${UNSET:-}", "", nil},
		{"${EMPTY}", "", nil},
		{"${UNSET:-a b/c:d}", "a b/c:d", nil},
		{"${UNSET:-${A}", "", []string{`unclosed ${ in "${UNSET:-${A}"`}}, // the default is ${A}; the outer } is missing
		{"$A $ $$ $$$ a$", "$A $ $$ $$$ a$", nil},
		{"$${A}", "$1", nil},
		{"{A}}", "{A}}", nil},
		{"${PATH_X}/bin:${UNSET:-/usr/bin}", "/x/bin:/usr/bin", nil},
		{"${UNSET}", "", []string{"environment variable UNSET is not set"}},
		{"${U1}:${A}:${U2}", ":1:", []string{"environment variable U1 is not set", "environment variable U2 is not set"}},
		{"${A", "", []string{`unclosed ${ in "${A"`}},
		{"x${A}y${B", "x1y", []string{`unclosed ${ in "${B"`}},
		{"${}", "", []string{`invalid variable name "" in ${}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"${1A}", "", []string{`invalid variable name "1A" in ${1A}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"${A-def}", "", []string{`invalid variable name "A-def" in ${A-def}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
	}
	for _, tt := range tests {
		got, problems := expandVars(tt.in, lookup)
		if got != tt.want || !reflect.DeepEqual(problems, tt.problems) {
			t.Errorf("expandVars(%q) = %q, %q; want %q, %q", tt.in, got, problems, tt.want, tt.problems)
		}
	}
}

// TestExpandVarsNestedDefaults: a default may hold variables and braces;
// the reference ends at the '}' that matches its "${", never at the first
// '}' (which made ${A:-${B}} "alpha}").
func TestExpandVarsNestedDefaults(t *testing.T) {
	env := map[string]string{"A": "alpha", "B": "beta", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		in, want string
		problems []string
	}{
		{"${A:-${B}}", "alpha", nil},
		{"${UNSET:-${B}}", "beta", nil},
		{"${EMPTY:-${B}}", "beta", nil},
		{"${A:-{x}}", "alpha", nil},
		{"${UNSET:-{x}}", "{x}", nil},
		{`${UNSET:-{"a":{"b":1}}}`, `{"a":{"b":1}}`, nil},
		{"${UNSET:-${UNSET2:-${B}}}/x", "beta/x", nil},
		{"${UNSET:-pre-${B}-post}", "pre-beta-post", nil},
		{"${A:-${UNSET2}}", "alpha", nil}, // a default is looked up only when used
		{"${A:-${bad name}}", "alpha", nil},
		{"${UNSET:-${UNSET2}}", "", []string{"environment variable UNSET2 is not set"}},
		{"${UNSET:-${bad name}}", "", []string{`invalid variable name "bad name" in ${bad name}; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'`}},
		{"${input:x:-${B}}", "", []string{`${input:x:-${B}} is a VS Code input, which only VS Code can prompt for; use an environment variable, as ${NAME}`}},
		{"${A:-{x}", "", []string{`unclosed ${ in "${A:-{x}"`}},
		{"x-${A:-${B", "x-", []string{`unclosed ${ in "${A:-${B"`}},
		{"${A:-${B}", "", []string{`unclosed ${ in "${A:-${B}"`}},
		{"${A}}{", "alpha}{", nil}, // outside a default, braces are text
	}
	for _, tt := range tests {
		got, problems := expandVars(tt.in, lookup)
		if got != tt.want || !reflect.DeepEqual(problems, tt.problems) {
			t.Errorf("expandVars(%q) = %q, %q; want %q, %q", tt.in, got, problems, tt.want, tt.problems)
		}
	}
}

// TestExpandVarsDeepNesting: defaults nest up to maxDefaultDepth deep;
// deeper is a problem, not a deep recursion (a stack overflow is fatal).
func TestExpandVarsDeepNesting(t *testing.T) {
	unset := func(string) (string, bool) { return "", false }
	nest := func(n int) string { return strings.Repeat("${U:-", n) + "x" + strings.Repeat("}", n) }
	if got, problems := expandVars(nest(maxDefaultDepth), unset); got != "x" || problems != nil {
		t.Errorf("%d deep: %q, %q", maxDefaultDepth, got, problems)
	}
	s := "a" + nest(1000)
	got, problems := expandVars(s, unset)
	want := []string{fmt.Sprintf("defaults nested more than %d deep in %q", maxDefaultDepth, s[1:])}
	if got != "a" || !reflect.DeepEqual(problems, want) {
		t.Errorf("1000 deep: %.20q, %.200q", got, problems)
	}
}

func TestVariables(t *testing.T) {
	for in, want := range map[string]string{
		"${A}":                     "A",
		"x ${env:B} ${A:-${C}} $D": "A B C",
		"${A:-${B:-${C}}}${A}":     "A B C",
		"none":                     "",
		"${1BAD} ${input:x}":       "",
	} {
		if got := strings.Join(Variables(in), " "); got != want {
			t.Errorf("Variables(%q) = %q, want %q", in, got, want)
		}
	}
}
