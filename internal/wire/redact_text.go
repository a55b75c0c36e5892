package wire

import (
	"regexp"
	"strconv"
	"strings"
)

// This file holds the forms of a secret in free text that follow a name
// rather than a regexp's literal: "name: value" (a header line, YAML, a
// JSON member quoted in an error), a command line's "--name value", and
// the password of a URL's userinfo. Each is found by a scan linear in the
// text, so that none adds a regexp pass over every text.

// maxNameLen is the longest name looked at before a colon or after a
// dash: longer runs of name letters are not a header, member or flag.
const maxNameLen = 128

// isNameByte reports whether b can be part of a header, member or flag
// name (bytes of non-ASCII letters included: (?i) folds the Kelvin sign).
func isNameByte(b byte) bool {
	return b >= 0x80 || b == '_' || b == '-' || b == '.' ||
		('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') || ('0' <= b && b <= '9')
}

// redactNamedValues hides the values that follow a secret name and a
// colon (isSensitiveKey, as for JSON members): a quoted name anywhere
// (`"password": "x"`, `\"api_key\":\"x\"`, `"otp": 123`), an unquoted one
// where a header or a key starts: the start of the text or of a line
// (after indentation), after { [ , or ; (a header dump, Go's printing of
// http.Header, `map[Cookie:[x]]`, after a space too when the value is
// bracketed), so that prose ("the token: it expired") is left alone.
// A quoted value is hidden to its closing quote, a bracketed one to its
// bracket, a bare one to the end of the line (a header's or YAML's
// value) or, after { [ , ;, to the next , } ] ; or space. Authorization
// headers are authHeader's (which keeps the scheme's name); null, true
// and false are kept.
func redactNamedValues(s string) string {
	var b strings.Builder
	last := 0 // s[:last] is written to b
	for i := 0; i < len(s); {
		c := strings.IndexByte(s[i:], ':')
		if c < 0 {
			break
		}
		c += i
		i = c + 1
		start, end, ok := namedValue(s, c)
		if !ok || start < last {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString("[REDACTED]")
		last = end
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// namedValue returns the extent s[start:end] of the value to hide after
// the colon at s[c], if the name before it is a secret one.
func namedValue(s string, c int) (start, end int, ok bool) {
	k := c - 1
	for k >= 0 && (s[k] == ' ' || s[k] == '\t') {
		k--
	}
	quotes := -1 // backslashes before the name's closing quote; -1: unquoted
	if k >= 0 && s[k] == '"' {
		quotes = 0
		for k--; k >= 0 && s[k] == '\\'; k-- {
			quotes++
		}
	}
	nameEnd := k + 1
	for k >= 0 && nameEnd-k <= maxNameLen && isNameByte(s[k]) {
		k--
	}
	name := s[k+1 : nameEnd]
	if name == "" || nameEnd-k > maxNameLen {
		return 0, 0, false
	}
	v := c + 1
	for v < len(s) && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	bare := byte('\n') // what ends a bare value: '\n' the line, ',' a list item
	if quotes >= 0 {
		// The opening quote, with as many backslashes.
		if k < 0 || s[k] != '"' || k < quotes || strings.Count(s[k-quotes:k], `\`) != quotes {
			return 0, 0, false
		}
		bare = ','
	} else {
		p := k
		for p >= 0 && (s[p] == ' ' || s[p] == '\t') {
			p--
		}
		switch {
		case p < 0 || s[p] == '\n' || s[p] == '\r':
		case s[p] == '{' || s[p] == '[' || s[p] == ',' || s[p] == ';':
			bare = ','
		case p < k && v == c+1 && v < len(s) && s[v] == '[': // map[A:[x] Cookie:[y]]
		default:
			return 0, 0, false
		}
	}
	if !isSensitiveKey(name) || strings.Contains(strings.ToLower(name), "authorization") {
		return 0, 0, false
	}
	end = valueEnd(s, v, bare)
	switch val := s[v:end]; val {
	case "", "null", "true", "false", "[REDACTED]", `"[REDACTED]"`:
		return 0, 0, false
	}
	if s[v] == '"' || s[v] == '\\' { // keep the quotes
		q := v
		for q < end && s[q] == '\\' {
			q++
		}
		if q < end && s[q] == '"' && s[end-1] == '"' && end-v >= 2*(q-v+1) {
			return q + 1, end - (q - v + 1), true
		}
	}
	return v, end, true
}

// valueEnd returns where the value starting at s[v] ends: after its
// closing quote (with as many backslashes as the opening one) or bracket,
// else at the end of the line or, if bare is ',', at , } ] ; or a space.
func valueEnd(s string, v int, bare byte) int {
	if v >= len(s) {
		return v
	}
	lineEnd := len(s)
	if n := strings.IndexAny(s[v:], "\r\n"); n >= 0 {
		lineEnd = v + n
	}
	q := v
	for q < lineEnd && s[q] == '\\' {
		q++
	}
	switch {
	case q < lineEnd && s[q] == '"':
		n := q - v
		for j := q + 1; j < lineEnd; j++ {
			if s[j] == '"' && j-n >= 0 && strings.Count(s[j-n:j], `\`) == n && (j-n-1 < 0 || s[j-n-1] != '\\') {
				return j + 1
			}
		}
		return lineEnd
	case q == v && s[v] == '[':
		if n := strings.IndexByte(s[v:lineEnd], ']'); n >= 0 {
			return v + n + 1
		}
		return lineEnd
	case bare == ',':
		if n := strings.IndexAny(s[v:lineEnd], ",}]; \t"); n >= 0 {
			return v + n
		}
	}
	return lineEnd
}

// redactFlags hides the value of a command line's flag whose name is a
// secret one, written apart from it ("--token x", "-api-key x"; the
// "--token=x" form is urlSecret's). A value that starts with a dash is
// the next flag, and kept.
func redactFlags(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		d := strings.IndexByte(s[i:], '-')
		if d < 0 {
			break
		}
		d += i
		i = d + 1
		if d > 0 && s[d-1] != ' ' && s[d-1] != '\t' && s[d-1] != '"' && s[d-1] != '\'' {
			continue
		}
		n := d + 1
		if n < len(s) && s[n] == '-' {
			n++
		}
		e := n
		for e < len(s) && e-n <= maxNameLen && isNameByte(s[e]) {
			e++
		}
		i = e
		v := e
		for v < len(s) && s[v] == ' ' {
			v++
		}
		if e == n || v == e || v >= len(s) || s[v] == '-' || s[v] == '\n' || !isSensitiveKey(s[n:e]) {
			continue
		}
		end := v
		for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' && s[end] != '\r' && s[end] != '"' {
			end++
		}
		if end == v || s[v:end] == "[REDACTED]" {
			continue
		}
		b.WriteString(s[last:v])
		b.WriteString("[REDACTED]")
		last, i = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// userinfo matches the password of a URL's userinfo
// ("https://ann:[REDACTED]@h"); $1 is what comes before it.
var userinfo = regexp.MustCompile(`(://[^/?#@\s"'<>:]*:)[^/?#@\s"'<>]+@`)

// redactUserinfo hides the passwords of the URLs in s.
func redactUserinfo(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") { // every match of userinfo holds both
		return s
	}
	return userinfo.ReplaceAllString(s, "${1}[REDACTED]@")
}

// asciiEscape matches a JSON escape of a letter, digit or one of = : _ .
// - (the characters of a scheme's or parameter's name and of its
// separator), which a server can write to hide "Bearer" or "token=" from
// a text search in the raw text of an error.
var asciiEscape = regexp.MustCompile(`\\u00(?:3[0-9ADad]|[46][1-9A-Fa-f]|[57][0-9Aa]|5[Ff]|2[DEde])`)

// unescapeASCII decodes the escapes asciiEscape matches.
func unescapeASCII(s string) string {
	if !strings.Contains(s, `\u00`) { // every match of asciiEscape holds it
		return s
	}
	return asciiEscape.ReplaceAllStringFunc(s, func(m string) string {
		n, err := strconv.ParseUint(m[2:], 16, 8)
		if err != nil {
			return m
		}
		return string(rune(n))
	})
}
