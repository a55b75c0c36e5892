package wire

import (
	"bytes"
	"encoding/json"
	"regexp"
)

// sensitiveKey matches JSON member names whose values are secrets.
var sensitiveKey = regexp.MustCompile(`(?i)(authorization|token|secret|password|passwd|api[-_]?key|cookie|credential|client[-_]?secret|session[-_]?id)`)

// RedactJSON returns the JSON text with the values of secret-looking
// members replaced by "[REDACTED]", and bearer or basic credentials inside
// strings hidden. Text that is not JSON is returned as "<not JSON>".
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
		for k, x := range v {
			if sensitiveKey.MatchString(k) {
				if _, isObj := x.(map[string]any); !isObj {
					v[k] = "[REDACTED]"
					continue
				}
			}
			v[k] = redactValue(x)
		}
	case []any:
		for i, x := range v {
			v[i] = redactValue(x)
		}
	case string:
		return redactBearer(v)
	}
	return v
}

var bearerText = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)

// redactBearer hides the credentials of "Bearer x" and "Basic x" in s.
func redactBearer(s string) string {
	return bearerText.ReplaceAllString(s, "$1 [REDACTED]")
}

// urlSecret matches query parameters of a URL that carry secrets.
var urlSecret = regexp.MustCompile(`(?i)([?&][^=&\s"]*(?:key|token|secret|sig|signature|password|auth|code)[^=&\s"]*=)[^&\s"]+`)

// RedactURLSecrets hides the values of secret-looking query parameters of
// the URLs in s, free text such as a net/http error.
func RedactURLSecrets(s string) string {
	return urlSecret.ReplaceAllString(s, "${1}[REDACTED]")
}
