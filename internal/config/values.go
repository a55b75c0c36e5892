package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// rawString returns the string f, a JSON string, as written: without
// expanding its variables.
func rawString(f member) string {
	var s string
	_ = json.Unmarshal(f.val, &s) // valid JSON, known to be a string
	return s
}

// expandedString returns the string value of f with its variables
// expanded. It reports false when f is not a string or a variable could
// not be expanded.
func (p *parser) expandedString(f member, path string) (string, bool) {
	if f.val[0] != '"' {
		p.errorf(f.off, path, "want a string, not %s", jsonKind(f.val))
		return "", false
	}
	out, problems := expandVars(rawString(f), p.lookup)
	for _, msg := range problems {
		p.errorf(f.off, path, "%s", msg)
	}
	return out, len(problems) == 0
}

// stringList returns the array of strings f, expanding variables in its
// elements if expand is set. It returns nil for an empty array.
func (p *parser) stringList(f member, path string, expand bool) []string {
	if f.val[0] != '[' {
		p.errorf(f.off, path, "want an array of strings, not %s", jsonKind(f.val))
		return nil
	}
	var out []string
	for i, e := range p.elements(f.val, f.off, path) {
		epath := fmt.Sprintf("%s[%d]", path, i)
		if e.val[0] != '"' {
			p.errorf(e.off, epath, "want a string, not %s", jsonKind(e.val))
			continue
		}
		s := rawString(e)
		if expand {
			s, _ = p.expandedString(e, epath)
		}
		out = append(out, s)
	}
	return out
}

// stringMap returns the object of strings f, with variables expanded in
// its values. It returns nil for an empty object.
func (p *parser) stringMap(f member, path string) map[string]string {
	if f.val[0] != '{' {
		p.errorf(f.off, path, "want an object of strings, not %s", jsonKind(f.val))
		return nil
	}
	var out map[string]string
	for _, e := range p.members(f.val, f.off, path, "key") {
		s, ok := p.expandedString(e, joinPath(path, e.key))
		if !ok {
			continue
		}
		if out == nil {
			out = make(map[string]string)
		}
		out[e.key] = s
	}
	return out
}

// maxTimeoutSeconds is the longest timeout a time.Duration can hold.
const maxTimeoutSeconds = float64(math.MaxInt64 / int64(time.Second))

// timeout returns the timeout f: a number of seconds, or a duration string.
func (p *parser) timeout(f member, path string) time.Duration {
	return p.duration(f, path, " a timeout", "negative timeout %s; use 0, or leave it out, for no limit")
}

// duration returns f, a number of seconds or a duration string such as
// "30s". what ends the too-long and too-short messages; negative is the
// message (with %s for the value) for a negative one.
func (p *parser) duration(f member, path, what, negative string) time.Duration {
	var d time.Duration
	switch f.val[0] {
	case '"':
		var s string
		_ = json.Unmarshal(f.val, &s)
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			p.errorf(f.off, path, `want a number of seconds or a duration such as "30s": %v`, err)
			return 0
		}
	case '{', '[', 't', 'f':
		p.errorf(f.off, path, `want a number of seconds or a duration such as "30s", not %s`, jsonKind(f.val))
		return 0
	default:
		// A valid JSON number; one out of range parses as an infinity.
		secs, _ := strconv.ParseFloat(string(f.val), 64)
		if secs > maxTimeoutSeconds {
			p.errorf(f.off, path, "%s seconds is too long%s", f.val, what)
			return 0
		}
		d = time.Duration(math.Round(max(secs, -maxTimeoutSeconds) * float64(time.Second)))
		if secs > 0 && d == 0 {
			p.errorf(f.off, path, "%s seconds is too short%s (under a nanosecond)", f.val, what)
			return 0
		}
	}
	if d < 0 {
		p.errorf(f.off, path, negative, f.val)
		return 0
	}
	return d
}

// urlShown is a URL as written, for an error: the password of its
// userinfo and the values of its query are replaced by [REDACTED], as a
// URL may carry a credential written inline.
func urlShown(s string) string {
	start := 0 // where the authority starts: after "://", else at once
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	rest := s[start:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 {
			s = s[:start] + rest[:colon+1] + "[REDACTED]" + rest[at:]
		}
	}
	q := strings.Index(s, "?")
	if q < 0 {
		return s
	}
	query, frag := s[q+1:], ""
	if h := strings.Index(query, "#"); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=[REDACTED]"
		}
	}
	return s[:q+1] + strings.Join(parts, "&") + frag
}
