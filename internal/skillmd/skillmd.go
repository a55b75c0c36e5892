// Package skillmd checks the files of a skill served over MCP (the skills
// extension, SEP-2640) against the server's listing: the byte size, the
// SHA-256 digest, and the YAML frontmatter of SKILL.md field by field.
//
// The frontmatter parser reads the subset of YAML that skill frontmatter
// uses: a mapping of keys to plain or quoted scalars, block or flow lists
// of scalars, and nested mappings of those. Anything else (anchors, tags,
// block scalars, multi-document streams) is an error: content that cannot
// be compared is not loaded.
//
// It also holds skills/list on the wire (ListParams, ListResult) and
// checks each listed entry (Entry.Check) and the one content of a read
// file (ResourceBytes). It imports go-sdk's mcp package for the wire
// types, and nothing of this module.
package skillmd

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CheckSize reports whether content is size bytes long.
func CheckSize(content []byte, size int64) error {
	if int64(len(content)) != size {
		return fmt.Errorf("size mismatch: the listing says %d bytes, the server sent %d", size, len(content))
	}
	return nil
}

// CheckDigest reports whether content has digest, "sha256:" and 64 hex
// digits (case-insensitive).
func CheckDigest(content []byte, digest string) error {
	alg, want, ok := strings.Cut(digest, ":")
	if !ok || !strings.EqualFold(alg, "sha256") {
		return fmt.Errorf("digest %q is not sha256:<hex>", clip(digest))
	}
	sum := sha256.Sum256(content)
	got := hex.EncodeToString(sum[:])
	if !strings.EqualFold(want, got) {
		return fmt.Errorf("digest mismatch: the listing says sha256:%s, the content is sha256:%s", clip(want), got)
	}
	return nil
}

// Split returns the YAML frontmatter of a SKILL.md (between a first line
// "---" and the next "---" line) and the body after it. ok is false when
// the document has no frontmatter.
func Split(doc string) (front, body string, ok bool) {
	rest, found := strings.CutPrefix(doc, "---\n")
	if !found {
		if rest, found = strings.CutPrefix(doc, "---\r\n"); !found {
			return "", doc, false
		}
	}
	for i := 0; i <= len(rest); {
		j := strings.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if strings.TrimRight(line, "\r") == "---" {
			if j < 0 {
				return rest[:i], "", true
			}
			return rest[:i], rest[i+j+1:], true
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return "", doc, false
}

// CheckFrontmatter compares the frontmatter of the SKILL.md doc with the
// listing's, field by field: the same keys, with equal values (as JSON).
func CheckFrontmatter(doc string, listed map[string]any) error {
	front, _, ok := Split(doc)
	if !ok {
		return errors.New("SKILL.md has no frontmatter")
	}
	got, err := Parse(front)
	if err != nil {
		return fmt.Errorf("SKILL.md frontmatter: %w", err)
	}
	want, err := normalize(listed)
	if err != nil {
		return fmt.Errorf("the listed frontmatter: %w", err)
	}
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var diffs []string
	for _, k := range names {
		g, inGot := got[k]
		w, inWant := want[k]
		switch {
		case !inGot:
			diffs = append(diffs, fmt.Sprintf("%q is listed but not in SKILL.md", clip(k)))
		case !inWant:
			diffs = append(diffs, fmt.Sprintf("%q is in SKILL.md but not listed", clip(k)))
		case !reflect.DeepEqual(g, w):
			diffs = append(diffs, fmt.Sprintf("%q differs", clip(k)))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("frontmatter mismatch: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// normalize makes v compare with Parse's output: a JSON round trip.
func normalize(v map[string]any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]any{}
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "..."
	}
	return s
}

// Parse reads YAML frontmatter (the subset described in the package
// documentation) into JSON-like values: map[string]any, []any, string,
// float64, bool and nil.
func Parse(src string) (map[string]any, error) {
	if !utf8.ValidString(src) {
		return nil, errors.New("not UTF-8")
	}
	var lines []line
	for n, raw := range strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n") {
		text := strings.TrimRight(raw, " \t")
		trimmed := strings.TrimLeft(text, " ")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.HasPrefix(trimmed, "\t") {
			return nil, fmt.Errorf("line %d: tab indentation", n+1)
		}
		lines = append(lines, line{no: n + 1, indent: len(text) - len(trimmed), text: trimmed})
	}
	if len(lines) > 0 && lines[0].indent != 0 {
		return nil, fmt.Errorf("line %d: the first key is indented", lines[0].no)
	}
	p := &parser{lines: lines}
	m, err := p.mapping(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.lines) {
		return nil, fmt.Errorf("line %d: unexpected indentation", p.lines[p.i].no)
	}
	return m, nil
}

type line struct {
	no, indent int
	text       string
}

type parser struct {
	lines []line
	i     int
	depth int
}

// mapping reads "key: value" lines at indent.
func (p *parser) mapping(indent int) (map[string]any, error) {
	if p.depth++; p.depth > 16 {
		return nil, errors.New("nested too deep")
	}
	defer func() { p.depth-- }()
	m := map[string]any{}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent {
		l := p.lines[p.i]
		if strings.HasPrefix(l.text, "- ") || l.text == "-" {
			return nil, fmt.Errorf("line %d: a list item where a key was expected", l.no)
		}
		key, rest, err := splitKey(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.no, err)
		}
		if _, dup := m[key]; dup {
			return nil, fmt.Errorf("line %d: key %q repeated", l.no, clip(key))
		}
		p.i++
		if rest != "" {
			v, err := scalarOrFlow(rest)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", l.no, err)
			}
			m[key] = v
			continue
		}
		// A nested block, a block list, or null.
		if p.i >= len(p.lines) || p.lines[p.i].indent < indent ||
			(p.lines[p.i].indent == indent && !strings.HasPrefix(p.lines[p.i].text, "-")) {
			m[key] = nil
			continue
		}
		next := p.lines[p.i]
		if strings.HasPrefix(next.text, "- ") || next.text == "-" {
			v, err := p.list(next.indent)
			if err != nil {
				return nil, err
			}
			m[key] = v
			continue
		}
		v, err := p.mapping(next.indent)
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
	return m, nil
}

// list reads "- scalar" lines at indent.
func (p *parser) list(indent int) ([]any, error) {
	out := []any{}
	for p.i < len(p.lines) && p.lines[p.i].indent == indent && (strings.HasPrefix(p.lines[p.i].text, "- ") || p.lines[p.i].text == "-") {
		l := p.lines[p.i]
		item := strings.TrimSpace(strings.TrimPrefix(l.text, "-"))
		if item == "" {
			return nil, fmt.Errorf("line %d: an empty or nested list item is not supported", l.no)
		}
		if _, _, err := splitKey(item); err == nil && !strings.HasPrefix(item, `"`) && !strings.HasPrefix(item, "'") {
			return nil, fmt.Errorf("line %d: a mapping in a list is not supported", l.no)
		}
		v, err := scalarOrFlow(item)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.no, err)
		}
		out = append(out, v)
		p.i++
	}
	return out, nil
}

// splitKey splits "key: rest" (the key plain or quoted).
func splitKey(s string) (key, rest string, err error) {
	if s[0] == '"' || s[0] == '\'' {
		q, n, err := quoted(s)
		if err != nil {
			return "", "", err
		}
		after := s[n:]
		if !strings.HasPrefix(after, ":") {
			return "", "", errors.New("a quoted key is not followed by ':'")
		}
		return q, strings.TrimSpace(after[1:]), nil
	}
	i := strings.Index(s, ": ")
	if i < 0 {
		if strings.HasSuffix(s, ":") {
			i = len(s) - 1
		} else {
			return "", "", errors.New("not a 'key: value' line")
		}
	}
	key = strings.TrimSpace(s[:i])
	if key == "" || strings.ContainsAny(key[:1], "&*!|>%@`{}[],?#") {
		return "", "", fmt.Errorf("key %q is not supported", clip(key))
	}
	return key, strings.TrimSpace(s[i+1:]), nil
}

// scalarOrFlow reads a scalar or a flow list "[a, b]".
func scalarOrFlow(s string) (any, error) {
	if strings.HasPrefix(s, "[") {
		if !strings.HasSuffix(s, "]") {
			return nil, errors.New("an unterminated flow list")
		}
		inner := strings.TrimSpace(s[1 : len(s)-1])
		out := []any{}
		if inner == "" {
			return out, nil
		}
		for _, item := range strings.Split(inner, ",") {
			item = strings.TrimSpace(item)
			if item == "" || strings.ContainsAny(item, "[]{}") {
				return nil, errors.New("a flow list item is not supported")
			}
			v, err := scalar(item)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return scalar(s)
}

// scalar reads a plain or quoted scalar; a comment after it is dropped.
func scalar(s string) (any, error) {
	switch s[0] {
	case '"', '\'':
		q, n, err := quoted(s)
		if err != nil {
			return nil, err
		}
		if rest := strings.TrimSpace(s[n:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return nil, errors.New("text after a quoted value")
		}
		return q, nil
	case '&', '*', '!', '|', '>', '{', '%', '@', '`':
		return nil, fmt.Errorf("YAML %q values are not supported", s[:1])
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	switch s {
	case "null", "Null", "NULL", "~":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && looksNumeric(s) {
		return f, nil
	}
	return s, nil
}

// looksNumeric excludes what ParseFloat takes but YAML does not ("Inf",
// "0x1p3", "1_000").
func looksNumeric(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789+-.eE", c) {
			return false
		}
	}
	return true
}

// quoted reads a single- or double-quoted scalar at the start of s and
// returns it with the bytes it took.
func quoted(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '\'' && c == '\'':
			if i+1 < len(s) && s[i+1] == '\'' {
				b.WriteByte('\'')
				i++
				continue
			}
			return b.String(), i + 1, nil
		case q == '"' && c == '"':
			return b.String(), i + 1, nil
		case q == '"' && c == '\\':
			if i+1 >= len(s) {
				return "", 0, errors.New("an unterminated escape")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case '"', '\\', '/':
				b.WriteByte(s[i])
			default:
				return "", 0, fmt.Errorf("escape \\%c is not supported", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("an unterminated quoted value")
}
