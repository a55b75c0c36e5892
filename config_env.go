package mcpadapter

import (
	"fmt"
	"strings"
)

// expandVars replaces ${VAR} and ${VAR:-default} in s, looking variables
// up with lookup, and returns the result and a message for each variable
// it could not expand. ${env:VAR} is ${VAR}.
func expandVars(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var problems []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			problems = append(problems, fmt.Sprintf("unclosed ${ in %q", s[i:]))
			break
		}
		ref := s[i : i+end+1]
		body := ref[2 : len(ref)-1]
		s = s[i+end+1:]

		name, def, hasDef := strings.Cut(body, ":-")
		name = strings.TrimPrefix(name, "env:")
		switch {
		case strings.HasPrefix(name, "input:"):
			problems = append(problems, fmt.Sprintf("%s is a VS Code input, which only VS Code can prompt for; use an environment variable, as ${NAME}", ref))
		case !validVarName(name):
			problems = append(problems, fmt.Sprintf("invalid variable name %q in %s; want ${NAME} or ${NAME:-default}, with NAME made of letters, digits and '_'", name, ref))
		default:
			v, ok := lookup(name)
			switch {
			case hasDef && v == "":
				b.WriteString(def)
			case ok:
				b.WriteString(v)
			default:
				problems = append(problems, fmt.Sprintf("environment variable %s is not set", name))
			}
		}
	}
	return b.String(), problems
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
