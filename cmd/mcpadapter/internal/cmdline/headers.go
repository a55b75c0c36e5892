package cmdline

import "strings"

// parseHeader parses the value of one --header flag (the n-th, counting
// from 1): "Name: value", or "Name=value". The name ends at the first ':'
// or '=', neither of which a header name may contain, so a value may hold
// either ("Authorization: Bearer abc==", "X-Url=http://h/"). Errors name
// the flag by its position and the header by its name, never quoting the
// value: it is often a credential.
func parseHeader(h string, n int) (name, value string, err error) {
	i := strings.IndexAny(h, ":=")
	if i < 0 {
		return "", "", Usagef("--header #%d: want \"Name: value\" (or Name=value); it has neither ':' nor '='", n)
	}
	name, value = strings.TrimSpace(h[:i]), strings.TrimSpace(h[i+1:])
	if !validHeaderName(name) {
		return "", "", Usagef("--header #%d: the text before %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", n, h[i])
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return "", "", Usagef("--header %s: the value has a line break or NUL byte", name)
	}
	return name, value, nil
}

// validHeaderName reports whether s is an HTTP field name: one or more
// token characters (RFC 9110, section 5.1).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
