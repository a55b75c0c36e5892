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
// (`"password": "x"`, `\"api_key\":\"x\"`, `"otp": 123`, a Python dict's
// `'password': 'x'`), an unquoted one where a header or a key starts: the
// start of the text or of a line (after indentation), after { [ , or ; (a
// header dump, Go's printing of http.Header, `map[Cookie:[x]]`, after a
// space too when the value is bracketed), right after a quote (`-H
// "X-Api-Key: x"`), so that prose ("the token: it expired") is left
// alone. A quoted value is hidden to its closing quote, a bracketed one
// to its bracket, a bare one to the end of the line (a header's or YAML's
// value, with the lines after it indented more than its name: a folded
// header, a YAML block) or, after { [ , ;, to the next , } ] ; or space,
// or, after a quote, to that quote. Authorization headers are
// authHeader's (which keeps the scheme's name); null, true and false are
// kept.
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
	var qc byte  // the name's quote: " or '
	if k >= 0 && (s[k] == '"' || s[k] == '\'') {
		quotes, qc = 0, s[k]
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
	bare := byte('\n') // what ends a bare value: '\n' the line, ',' a list item, a quote the quoted text
	indent := 0        // the name's indentation, where it starts a line
	lineStart := false // the name starts a line: its value goes on, folded, on lines indented more
	if quotes >= 0 {
		// The opening quote, with as many backslashes.
		if k < 0 || s[k] != qc || k < quotes || strings.Count(s[k-quotes:k], `\`) != quotes {
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
			indent, lineStart = k-p, true
		case s[p] == '{' || s[p] == '[' || s[p] == ',' || s[p] == ';':
			bare = ','
		case p == k && (s[p] == '"' || s[p] == '\''): // -H "X-Api-Key: x"
			bare = s[p]
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
	case "null", "true", "false", "[REDACTED]", `"[REDACTED]"`, `'[REDACTED]'`:
		return 0, 0, false
	case "", "|", ">", "|-", ">-", "|+", ">+":
		// The value is on the lines after, indented (a YAML block, a
		// header folded onto its next line).
		if end = foldedEnd(s, end, indent); end == v || strings.HasPrefix(strings.TrimLeft(s[v:end], " \t\r\n|>+-"), "[REDACTED]") {
			return 0, 0, false
		}
		return v, end, true
	}
	if lineStart && bare == '\n' {
		end = foldedEnd(s, end, indent) // Cookie: a=1;\n b=2
	}
	if s[v] == '"' || s[v] == '\'' || s[v] == '\\' { // keep the quotes
		q := v
		for q < end && s[q] == '\\' {
			q++
		}
		if q < end && (s[q] == '"' || s[q] == '\'') && s[end-1] == s[q] && end-v >= 2*(q-v+1) {
			return q + 1, end - (q - v + 1), true
		}
	}
	return v, end, true
}

// foldedEnd returns where the lines after the one ending at s[e] that
// are indented more than indent (spaces or tabs) end, continuing the
// value of a header (obs-fold) or YAML key: e if the next line is not.
func foldedEnd(s string, e, indent int) int {
	end := e
	for end < len(s) {
		n := end
		if s[n] == '\r' {
			n++
		}
		if n >= len(s) || s[n] != '\n' {
			break
		}
		w := n + 1
		for w < len(s) && (s[w] == ' ' || s[w] == '\t') {
			w++
		}
		if w-(n+1) <= indent || w >= len(s) || s[w] == '\n' || s[w] == '\r' {
			break
		}
		next := strings.IndexAny(s[w:], "\r\n")
		if next < 0 {
			return len(s)
		}
		end = w + next
	}
	return end
}

// valueEnd returns where the value starting at s[v] ends: after its
// closing quote (with as many backslashes as the opening one) or bracket,
// else at the end of the line or, if bare is ',', at , } ] ; or a space,
// or, if bare is a quote, at that quote. It reads s only up to that end,
// so that a text of many values on one line is scanned once.
func valueEnd(s string, v int, bare byte) int {
	if v >= len(s) {
		return v
	}
	q := v
	for q < len(s) && s[q] == '\\' {
		q++
	}
	switch {
	case q < len(s) && (s[q] == '"' || (q == v && s[q] == '\'')):
		qc, n := s[q], q-v
		run := 0 // backslashes right before s[j]
		for j := q + 1; j < len(s); j++ {
			switch s[j] {
			case '\r', '\n':
				return j
			case '\\':
				run++
				continue
			case qc:
				if run == n {
					return j + 1
				}
			}
			run = 0
		}
		return len(s)
	case q == v && s[v] == '[':
		for j := v; j < len(s); j++ {
			switch s[j] {
			case ']':
				return j + 1
			case '\r', '\n':
				return j
			}
		}
		return len(s)
	}
	stop := "\r\n"
	switch bare {
	case ',':
		stop = "\r\n,}]; \t"
	case '"', '\'':
		stop = "\r\n" + string(bare)
	}
	if n := strings.IndexAny(s[v:], stop); n >= 0 {
		return v + n
	}
	return len(s)
}

// redactFlags hides the value of a command line's flag whose name is a
// secret one, written apart from it ("--token x", "-api-key x"; the
// "--token=x" form is urlSecret's), and the password of curl's "-u
// user:password" (or --user). A value that starts with a dash is
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
		user := s[n:e] == "u" || s[n:e] == "user" // curl -u user:password
		if e == n || v == e || v >= len(s) || s[v] == '-' || s[v] == '\n' || (!user && !isSensitiveKey(s[n:e])) {
			continue
		}
		end := v
		for end < len(s) && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' && s[end] != '\r' && s[end] != '"' {
			end++
		}
		if user {
			c := strings.IndexByte(s[v:end], ':')
			if c < 0 {
				continue
			}
			v += c + 1
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

// privateKey matches a PEM block of a private key ("-----BEGIN RSA
// PRIVATE KEY-----", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY"), to
// its END line or, cut, to the end of the text: $1 and $2 are its lines
// of BEGIN and END.
var privateKey = regexp.MustCompile(`(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?s:.*?)(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)

// redactPrivateKeys hides the bodies of the PEM private keys in s.
func redactPrivateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY-----") { // every match of privateKey holds it
		return s
	}
	return privateKey.ReplaceAllString(s, "${1}[REDACTED]${2}")
}

// urlEncodedSecret matches a secret-named parameter written inside a
// percent-encoded URL, as a redirect or a nested URL carries it
// ("?next=https%3A%2F%2Fh%2Fcb%3Ftoken%3Dx"): the name after an encoded
// ? & # or space (or where urlSecret's start), then an encoded "=" and
// the value, which ends at an encoded "&".
var urlEncodedSecret = regexp.MustCompile(`(?i)((?:^|[?&#;,=\s"'(\[{<]|%3F|%26|%23|%20)[^=&;,\s"'?#%]*(?:key|token|secret|sig|signature|password|passwd|pwd|pass|auth|code|jwt|otp|credential|session)[^=&;,\s"'?#%]*%3D)(?:[^&\s"'#%]|%[013-9A-F][0-9A-F]|%2[0-57-9A-F])+`)

// redactEncodedParams hides the values urlEncodedSecret matches.
func redactEncodedParams(s string) string {
	if !strings.Contains(s, "%3D") && !strings.Contains(s, "%3d") { // every match holds one
		return s
	}
	return urlEncodedSecret.ReplaceAllString(s, "${1}[REDACTED]")
}
