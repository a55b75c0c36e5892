package wire

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// sensitiveKey matches JSON member names whose values are secrets wherever
// the text appears in the name (accessToken, X-Api-Key, client_secret).
var sensitiveKey = regexp.MustCompile(`(?i)(authorization|token|secret|password|passwd|passphrase|api[-_]?key|access[-_]?key|private[-_]?key|cookie|credential|client[-_]?secret|session[-_]?id)`)

// sensitiveWords are words that make a member name secret when they are a
// whole word of it (auth, x-auth, authKey, user_pwd, OTP), but not inside
// another word (author, keyboard, compass).
var sensitiveWords = map[string]bool{
	"auth": true, "key": true, "keys": true, "pwd": true, "pass": true,
	"jwt": true, "otp": true, "pin": true, "sig": true, "signature": true,
}

// isSensitiveKey reports whether a member named k holds a secret.
func isSensitiveKey(k string) bool {
	if sensitiveKey.MatchString(k) {
		return true
	}
	for _, w := range nameWords(k) {
		if sensitiveWords[w] {
			return true
		}
	}
	return false
}

// nameWords splits a member name into lower-case words at punctuation and
// at case changes: "privateKey" → private, key; "JWTToken" → jwt, token.
func nameWords(k string) []string {
	var (
		words []string
		cur   []rune
	)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(k)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && len(cur) > 0:
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// RedactJSON returns the JSON text with the values of secret-looking
// members replaced by "[REDACTED]" (whole objects and arrays too; null and
// booleans, which cannot be secrets, are kept), and bearer or basic
// credentials, secret query or form parameters (?code=, &access_token=)
// and JSON Web Tokens inside strings hidden. Text that is not JSON is
// returned as "<not JSON>".
func RedactJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "<not JSON>"
	}
	v = redactValue(v)
	out, err := json.Marshal(v)
	if err != nil {
		return "<unprintable>"
	}
	return string(out)
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		var renamed map[string]any // members whose names held a secret, under their redacted names
		for k, x := range v {
			if isSensitiveKey(k) {
				switch x.(type) {
				case nil, bool:
				default:
					x = "[REDACTED]"
				}
			} else {
				x = redactValue(x)
			}
			if rk := redactText(k); rk != k {
				// A name can hold a secret too: a header line, a URL
				// with a token, as a map's key.
				delete(v, k)
				if renamed == nil {
					renamed = map[string]any{}
				}
				renamed[rk] = x
				continue
			}
			v[k] = x
		}
		for k, x := range renamed {
			v[k] = x
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x)
		}
	case string:
		return redactString(v)
	}
	return v
}

// redactString hides the credentials in the text of a JSON string: a
// string that is itself a JSON document (a tool's argument holding a
// request body or a config) is redacted as one, and written compactly;
// other text as redactText does.
func redactString(s string) string {
	if t := strings.TrimSpace(s); t != "" && (t[0] == '{' || t[0] == '[') && json.Valid([]byte(t)) {
		return RedactJSON([]byte(t))
	}
	return redactText(s)
}

// redactText hides the credentials in free text, as RedactURLSecrets.
func redactText(s string) string {
	return RedactURLSecrets(s)
}

// bearerText matches the credentials of an HTTP authentication scheme
// (RFC 9110 section 11, the IANA registry, and DPoP) after its name: a
// token, or a list of auth-params.
var bearerText = regexp.MustCompile(`(?i)\b(bearer|basic|dpop|digest|negotiate|ntlm|hoba|mutual|scram-sha-1|scram-sha-256|vapid|gnap|privatetoken|concealed|aws4-hmac-sha256)(?:[\s\p{Zs}]|%20)+([^\s\p{Zs},]+)(?:,\s*[A-Za-z0-9_-]+=(?:"[^"]*"|[^\s,]*))*`)

// authHeader matches an Authorization (or Proxy-Authorization) header
// written as text, "Authorization: <scheme> <credentials>", as a header
// dump or a JSON member holds it: the canonical name (or the name in
// capitals) anywhere, the name in any case (HTTP/2's lower case, a
// dump's upper or mixed case) only where a header starts (a line, a
// quote, a bracket, a comma), so that prose ("refused authorization:
// ...") is left alone. Whatever the scheme, what follows it is hidden, to
// the end of the line or of a quoted value.
var authHeader = regexp.MustCompile(`((?:\b(?:Proxy-)?Authorization|\b(?:PROXY-)?AUTHORIZATION|(?:^|[\n"'\[{,]\s*)(?i:(?:proxy-)?authorization))"?\s*:\s*"?)(?:([A-Za-z][A-Za-z0-9_.-]*)\s+)?[^\s"\\]+[^\r\n"\\]*`)

// mayHoldAuthHeader reports whether authHeader can match s: s holds
// "uthorization" in any case (its letters fold only to ASCII ones).
func mayHoldAuthHeader(s string) bool {
	return strings.Contains(strings.ToLower(s), "uthorization")
}

// jwtText matches a JSON Web Token (a base64url header that starts with
// {" and a payload, then a signature), glued to a word ("id_token_eyJ…")
// too.
var jwtText = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)

// redactBearer hides the credentials of an authorization scheme in s:
// "Bearer x", "Basic x", "DPoP x" and the other registered schemes
// anywhere, and whatever follows an "Authorization:" header, whatever its
// scheme. (An "authorization=" parameter is RedactURLSecrets'.)
func redactBearer(s string) string {
	if !mayHoldAuthHeader(s) {
		return redactSchemes(s)
	}
	s = authHeader.ReplaceAllStringFunc(s, func(m string) string {
		sub := authHeader.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[1] + sub[2] + " [REDACTED]"
		}
		return sub[1] + "[REDACTED]"
	})
	return redactSchemes(s)
}

// wordSchemes are the schemes whose names are English words. Their
// credentials are base64 (a multiple of 4 characters: Basic, Negotiate)
// or auth-params (k=v: Digest, Mutual, Concealed), so a lower-case word
// of another length after one of them is prose ("Basic usage:", "digest
// algorithm", "negotiate the version"), and kept.
var wordSchemes = map[string]bool{"basic": true, "digest": true, "negotiate": true, "mutual": true, "concealed": true}

// redactSchemes hides the credentials bearerText matches, as "$1
// [REDACTED]", except a word that follows a wordSchemes scheme; the
// search goes on from that word ("digest basic dXNl…").
func redactSchemes(s string) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		m := bearerText.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			m[i] += pos
		}
		if m[1] == m[5] && wordSchemes[strings.ToLower(s[m[2]:m[3]])] && proseWord(s[m[4]:m[5]]) {
			pos = m[4]
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(s[m[2]:m[3]])
		b.WriteString(" [REDACTED]")
		last, pos = m[1], m[1]
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// proseWord reports whether w is a lower-case word, with a punctuation
// mark after it, that no base64 credential can be: its letters are not a
// multiple of 4.
func proseWord(w string) bool {
	if n := len(w); n > 1 && strings.IndexByte(":.;)!?", w[n-1]) >= 0 {
		w = w[:n-1]
	}
	if w == "" || len(w)%4 == 0 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// urlSecret matches query, fragment or form parameters whose names say
// they carry secrets: after ?, &, # or a space, at the start of the text,
// or after what starts a quoted or bracketed text or a list item (" ' ( [
// { < , ;: Go's %q of a line, a cookie's pairs). A value in quotes is
// hidden to its closing quote ($2 and $3, or $4 and $5, the quotes).
var urlSecret = regexp.MustCompile(`(?i)((?:^|[?&#;,\s"'(\[{<])[^=&;,\s"'?#]*(?:key|token|secret|sig|signature|password|passwd|pwd|pass|auth|code|jwt|otp|credential|session)[^=&;,\s"'?#]*=)(?:(")[^"\r\n]*(")|(')[^'\r\n]*(')|[^&\s"'#]+)`)

// RedactURLSecrets hides the credentials in free text, such as an
// error's, a log line's or a server's stderr: the values of
// secret-looking query, fragment or form parameters of the URLs in s (and
// of name=value pairs of a form, a shell or free text), the passwords of
// URLs' userinfo, the credentials of any authorization scheme ("Bearer
// x", "DPoP x", "Authorization: <scheme> x"), the values after a secret
// name and a colon (a header line, YAML, a JSON member quoted in the
// text) or after a command line's secret flag ("--token x", curl's "-u
// user:password"), secret parameters of a percent-encoded URL inside
// another ("%3Ftoken%3Dx"), the bodies of PEM private keys, and JSON Web
// Tokens. JSON escapes of letters, digits and = : _ . - are decoded
// first, so that "Bear\u0065r x" is seen as "Bearer x".
func RedactURLSecrets(s string) string {
	s = unescapeASCII(s)
	s = redactBearer(s)
	if strings.Contains(s, ":") {
		s = redactNamedValues(s)
	}
	if mayHoldURLSecret(s) {
		s = urlSecret.ReplaceAllString(s, "${1}${2}${4}[REDACTED]${3}${5}")
	}
	if strings.Contains(s, "%") && strings.Contains(s, "=") { // every match of urlEscapedName holds both
		s = redactEscapedNames(s)
	}
	s = redactEncodedParams(s)
	s = redactUserinfo(s)
	if strings.Contains(s, "-") {
		s = redactFlags(s)
		s = redactPrivateKeys(s)
	}
	if strings.Contains(s, "eyJ") { // every match of jwtText holds it
		s = jwtText.ReplaceAllString(s, "[REDACTED]")
	}
	return s
}

// urlEscapedName matches a query, fragment or form parameter whose name
// is percent-encoded in part ("to%6Ben=", which a server reads as
// "token="), where urlSecret matches: $2 is the name.
var urlEscapedName = regexp.MustCompile(`((?:^|[?&#;,\s"'(\[{<])([^=&;,\s"'?#]*%[0-9A-Fa-f]{2}[^=&;,\s"'?#]*)=)[^&\s"'#]+`)

// urlSecretName matches the names urlSecret looks for.
var urlSecretName = regexp.MustCompile(`(?i)(?:key|token|secret|sig|signature|password|passwd|pwd|pass|auth|code|jwt|otp|credential|session)`)

// redactEscapedNames hides the values of the parameters of s whose
// percent-encoded names, decoded, say they carry secrets.
func redactEscapedNames(s string) string {
	return urlEscapedName.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlEscapedName.FindStringSubmatch(m)
		name, err := url.QueryUnescape(sub[2])
		if err != nil || !urlSecretName.MatchString(name) {
			return m
		}
		return sub[1] + "[REDACTED]"
	})
}

// urlSecretWords are the parts of the names urlSecret looks for: every
// name it matches holds one of them.
var urlSecretWords = []string{"key", "token", "secret", "sig", "pass", "pwd", "auth", "code", "jwt", "otp", "credential", "session"}

// mayHoldURLSecret reports whether urlSecret can match s: s has an "="
// and one of urlSecretWords in any case. It costs a few scans of s, where
// the regexp costs a second for 100 KiB of base64 under -race (a traced
// request with a large argument). Upper then lower case maps every letter
// (?i) folds into one of the words (K, the Kelvin sign; ſ, the long s) to
// the word's own.
func mayHoldURLSecret(s string) bool {
	if !strings.Contains(s, "=") {
		return false
	}
	folded := strings.ToLower(strings.ToUpper(s))
	for _, w := range urlSecretWords {
		if strings.Contains(folded, w) {
			return true
		}
	}
	return false
}
