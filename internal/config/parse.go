package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// parser holds the state of one parse: the document, for positions,
// and the problems found so far.
type parser struct {
	file          string
	data          []byte
	lookup        func(string) (string, bool)
	checkRedirect func(string) error
	problems      []Problem // the first MaxProblems problems
	count         int       // all the problems found, shown or not
}

// errorf records a problem at byte offset off of the document; a negative
// off means the position is unknown. Past MaxProblems it only counts it.
func (p *parser) errorf(off int, path, format string, args ...any) {
	p.count++
	if len(p.problems) >= MaxProblems {
		return
	}
	e := Problem{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if off >= 0 {
		e.Line, e.Column = position(p.data, off)
	}
	p.problems = append(p.problems, e)
}

// position returns the 1-based line and byte column of offset off in data.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// document parses the whole document.
func (p *parser) document() *Document {
	whole, ok := p.json()
	if !ok {
		return nil
	}
	servers, ok := p.serversMember(whole)
	if !ok {
		return nil
	}
	root := servers.key
	doc := &Document{}
	list := p.members(servers.val, servers.off, root, "server name")
	for _, m := range list {
		if sc, ok := p.server(root, m); ok {
			doc.Servers = append(doc.Servers, sc)
		}
	}
	if p.count == 0 && len(doc.Servers) == 0 {
		if len(list) == 0 {
			p.errorf(servers.off, root, "no servers")
		} else {
			p.errorf(servers.off, root, "no servers: all %d are disabled", len(list))
		}
	}
	return doc
}

// json checks that the document is valid JSON and returns it; a syntax
// error is a problem at the offending byte.
func (p *parser) json() (json.RawMessage, bool) {
	var whole json.RawMessage
	err := json.Unmarshal(p.data, &whole)
	if err == nil {
		return whole, true
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		p.errorf(-1, "", "%v", err)
		return nil, false
	}
	off := int(se.Offset) - 1 // the offending byte was the last one read
	msg := se.Error()
	if strings.HasPrefix(msg, "unexpected end") {
		off = int(se.Offset)
	} else if strings.Contains(msg, "invalid character '/'") {
		msg += " (comments are not allowed in JSON)"
	}
	p.errorf(off, "", "invalid JSON: %s", msg)
	return nil, false
}

// serversMember returns the member of the document whole that holds the
// servers: "mcpServers", or "servers" as VS Code writes it. Its value is an
// object.
func (p *parser) serversMember(whole json.RawMessage) (member, bool) {
	start := skipSpace(p.data, 0)
	if whole[0] != '{' {
		p.errorf(start, "", `want a JSON object with an "mcpServers" member, not %s`, jsonKind(whole))
		return member{}, false
	}
	var servers *member
	for _, m := range p.members(whole, start, "", "member") {
		if m.key != "mcpServers" && m.key != "servers" {
			continue
		}
		if servers != nil {
			p.errorf(m.keyOff, "", `both "mcpServers" and "servers" are present; use one`)
			return member{}, false
		}
		servers = &m
	}
	if servers == nil {
		p.errorf(start, "", `no "mcpServers" member (or "servers", as VS Code writes it)`)
		return member{}, false
	}
	if servers.val[0] != '{' {
		p.errorf(servers.off, servers.key, "want an object of servers by name, not %s", jsonKind(servers.val))
		return member{}, false
	}
	return *servers, true
}

// member is one member of a JSON object, with the offsets in the document
// of its key and value.
type member struct {
	key    string
	keyOff int
	val    json.RawMessage
	off    int
}

// members returns the members of obj, a valid JSON object at offset off of
// the document, in order. A key given twice is a problem, reported as a
// duplicate what; its second member is left out.
func (p *parser) members(obj json.RawMessage, off int, path, what string) []member {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		p.errorf(off, path, "%v", err)
		return nil
	}
	var out []member
	seen := make(map[string]bool)
	for dec.More() {
		keyOff := off + skipSpace(obj, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			p.errorf(keyOff, path, "%v", err)
			return out
		}
		key, _ := tok.(string)
		valOff := off + skipSpace(obj, int(dec.InputOffset()))
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			p.errorf(valOff, path, "%v", err)
			return out
		}
		if seen[key] {
			p.errorf(keyOff, joinPath(path, key), "duplicate %s %q", what, key)
			continue
		}
		seen[key] = true
		out = append(out, member{key: key, keyOff: keyOff, val: val, off: valOff})
	}
	return out
}

// elements returns the elements of arr, a valid JSON array at offset off
// of the document, each as a member with no key.
func (p *parser) elements(arr json.RawMessage, off int, path string) []member {
	dec := json.NewDecoder(bytes.NewReader(arr))
	if _, err := dec.Token(); err != nil { // [
		p.errorf(off, path, "%v", err)
		return nil
	}
	var out []member
	for dec.More() {
		valOff := off + skipSpace(arr, int(dec.InputOffset()))
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			p.errorf(valOff, path, "%v", err)
			return out
		}
		out = append(out, member{val: val, off: valOff})
	}
	return out
}

// skipSpace returns the offset of the first byte at or after i in data that
// is neither white space nor a separator (',' or ':').
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// jsonKind names the kind of a valid JSON value, for messages.
func jsonKind(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// joinPath appends key to a JSON path: as .key when key is made of
// [A-Za-z0-9_-], else as ["key"].
func joinPath(path, key string) string {
	switch {
	case key == "" || strings.IndexFunc(key, func(r rune) bool { return r >= 0x80 || !isNameByte(byte(r)) }) >= 0:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	default:
		return path + "." + key
	}
}
