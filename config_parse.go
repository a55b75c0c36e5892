package mcpadapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/oauthflow"
)

// configParser holds the state of one parse: the document, for positions,
// and the problems found so far.
type configParser struct {
	file   string
	data   []byte
	lookup func(string) (string, bool)
	errs   []error
}

func parseConfig(file string, data []byte, lookup func(string) (string, bool)) (*Config, error) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		// A byte order mark, as Windows editors write. Blank it rather than
		// cut it, so that offsets stay those of the file.
		data = append([]byte("   "), data[3:]...)
	}
	p := &configParser{file: file, data: data, lookup: lookup}
	cfg := p.document()
	switch len(p.errs) {
	case 0:
		return cfg, nil
	case 1:
		return nil, p.errs[0]
	default:
		return nil, errors.Join(p.errs...)
	}
}

// errorf records a problem at byte offset off of the document; a negative
// off means the position is unknown.
func (p *configParser) errorf(off int, path, format string, args ...any) {
	e := &ConfigError{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if off >= 0 {
		e.Line, e.Column = position(p.data, off)
	}
	p.errs = append(p.errs, e)
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
func (p *configParser) document() *Config {
	var whole json.RawMessage
	if err := json.Unmarshal(p.data, &whole); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			p.errorf(-1, "", "%v", err)
			return nil
		}
		off := int(se.Offset) - 1 // the offending byte was the last one read
		msg := se.Error()
		if strings.HasPrefix(msg, "unexpected end") {
			off = int(se.Offset)
		} else if strings.Contains(msg, "invalid character '/'") {
			msg += " (comments are not allowed in JSON)"
		}
		p.errorf(off, "", "invalid JSON: %s", msg)
		return nil
	}
	start := skipSpace(p.data, 0)
	if whole[0] != '{' {
		p.errorf(start, "", `want a JSON object with an "mcpServers" member, not %s`, jsonKind(whole))
		return nil
	}

	var servers *member
	for _, m := range p.members(whole, start, "", "member") {
		if m.key != "mcpServers" && m.key != "servers" {
			continue
		}
		if servers != nil {
			p.errorf(m.keyOff, "", `both "mcpServers" and "servers" are present; use one`)
			return nil
		}
		servers = &m
	}
	if servers == nil {
		p.errorf(start, "", `no "mcpServers" member (or "servers", as VS Code writes it)`)
		return nil
	}
	root := servers.key
	if servers.val[0] != '{' {
		p.errorf(servers.off, root, "want an object of servers by name, not %s", jsonKind(servers.val))
		return nil
	}

	cfg := &Config{}
	list := p.members(servers.val, servers.off, root, "server name")
	for _, m := range list {
		if sc := p.server(root, m); sc != nil {
			cfg.Servers = append(cfg.Servers, sc)
		}
	}
	if len(p.errs) == 0 && len(cfg.Servers) == 0 {
		if len(list) == 0 {
			p.errorf(servers.off, root, "no servers")
		} else {
			p.errorf(servers.off, root, "no servers: all %d are disabled", len(list))
		}
	}
	return cfg
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
func (p *configParser) members(obj json.RawMessage, off int, path, what string) []member {
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
func (p *configParser) elements(arr json.RawMessage, off int, path string) []member {
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

// transportNames maps the accepted spellings of a transport, lower-cased,
// to the normal one.
var transportNames = map[string]string{
	"stdio":           "stdio",
	"http":            "http",
	"streamable-http": "http",
	"streamablehttp":  "http",
	"streamable_http": "http",
	"sse":             "sse",
}

// server parses the server m of the object at root. It returns nil when
// the server is disabled or has problems.
func (p *configParser) server(root string, m member) *ServerConfig {
	path := joinPath(root, m.key)
	if m.val[0] != '{' {
		p.errorf(m.off, path, "want an object describing the server, not %s", jsonKind(m.val))
		return nil
	}
	nerrs := len(p.errs)
	fields := p.members(m.val, m.off, path, "member")
	for _, f := range fields {
		if f.key == "disabled" {
			switch string(f.val) {
			case "true":
				return nil
			case "false", "null":
			default:
				p.errorf(f.off, path+".disabled", "want true or false, not %s", jsonKind(f.val))
			}
		}
	}
	if !validServerName(m.key) {
		p.errorf(m.keyOff, path, "server name %q is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most %d bytes", m.key, maxToolName)
	}

	sc := &ServerConfig{Name: m.key}
	present := make(map[string]member) // the known members that are not null
	var (
		transportFrom string // "type" or "transport", whichever came first
		transportRaw  string // its value as written
		transportBad  bool   // the transport is unknown or contradicted
	)
	for _, f := range fields {
		fpath := joinPath(path, f.key)
		known := true
		switch f.key {
		case "command", "args", "env", "cwd", "url", "headers", "type", "transport", "auth", "timeout", "includeTools", "excludeTools", "cache":
			if string(f.val) == "null" {
				continue
			}
		case "disabled":
			continue
		default:
			known = false
		}
		if known {
			present[f.key] = f
		}
		switch f.key {
		case "command":
			if s, ok := p.expandedString(f, fpath); ok {
				if s == "" {
					p.errorf(f.off, fpath, "empty command")
				}
				sc.Command = s
			}
		case "args":
			sc.Args = p.stringList(f, fpath, true)
		case "env":
			sc.Env = p.stringMap(f, fpath)
		case "cwd":
			sc.Cwd, _ = p.expandedString(f, fpath)
		case "url":
			if s, ok := p.expandedString(f, fpath); ok {
				if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
					p.errorf(f.off, fpath, "not an http(s) URL: %q", s)
				}
				sc.URL = s
			}
		case "headers":
			sc.Headers = p.stringMap(f, fpath)
		case "type", "transport":
			if f.val[0] != '"' {
				p.errorf(f.off, fpath, "want a string, not %s", jsonKind(f.val))
				transportBad = true
				break
			}
			var s string
			_ = json.Unmarshal(f.val, &s)
			t, ok := transportNames[strings.ToLower(s)]
			switch {
			case !ok:
				p.errorf(f.off, fpath, `unknown transport %q; want "stdio", "http" (or "streamable-http") or "sse"`, s)
				transportBad = true
			case sc.Transport != "" && sc.Transport != t:
				p.errorf(f.off, fpath, `%s %q disagrees with %s %q`, f.key, s, transportFrom, transportRaw)
				transportBad = true
			case sc.Transport == "":
				sc.Transport, transportFrom, transportRaw = t, f.key, s
			}
		case "auth":
			sc.Auth, sc.OAuth = p.auth(f, fpath)
		case "timeout":
			sc.Timeout = p.timeout(f, fpath)
		case "includeTools":
			sc.IncludeTools = p.stringList(f, fpath, false)
		case "excludeTools":
			sc.ExcludeTools = p.stringList(f, fpath, false)
		case "cache":
			sc.Cache, sc.NoCache = p.cache(f, fpath)
		default:
			if sc.Extra == nil {
				sc.Extra = make(map[string]json.RawMessage)
			}
			sc.Extra[f.key] = f.val
		}
	}

	if !transportBad {
		p.checkTransport(sc, path, m.keyOff, present)
	}
	if len(p.errs) > nerrs {
		return nil
	}
	return sc
}

// checkTransport infers sc.Transport when the document does not give it,
// and checks that the server's members fit it.
func (p *configParser) checkTransport(sc *ServerConfig, path string, off int, present map[string]member) {
	_, hasCommand := present["command"]
	_, hasURL := present["url"]
	given := sc.Transport
	switch {
	case hasCommand && hasURL:
		p.errorf(off, path, `has both "command" and "url": a server is either a local command (stdio) or a URL (http, sse)`)
		return
	case !hasCommand && !hasURL:
		p.errorf(off, path, `has neither "command" (a local server, over stdio) nor "url" (a remote one, over http or sse)`)
		return
	case given == "stdio" && !hasCommand:
		p.errorf(off, path, `transport "stdio" needs "command", not "url"`)
		return
	case given != "" && given != "stdio" && !hasURL:
		p.errorf(off, path, `transport %q needs "url", not "command"`, given)
		return
	case given != "":
	case hasCommand:
		sc.Transport = "stdio"
	default:
		sc.Transport = "http"
		if u, err := url.Parse(sc.URL); err == nil && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
			sc.Transport = "sse"
		}
	}

	misplaced := func(key, kind string) {
		f := present[key]
		p.errorf(f.off, joinPath(path, key), "%q applies to %s servers only, and this server is %s", key, kind, sc.Transport)
	}
	if sc.Transport == "stdio" {
		if len(sc.Headers) > 0 {
			misplaced("headers", "http and sse")
		}
		if sc.Auth != "" {
			misplaced("auth", "http and sse")
		}
		return
	}
	if len(sc.Args) > 0 {
		misplaced("args", "stdio")
	}
	if len(sc.Env) > 0 {
		misplaced("env", "stdio")
	}
	if sc.Cwd != "" {
		misplaced("cwd", "stdio")
	}
}

// expandedString returns the string value of f with its variables
// expanded. It reports false when f is not a string or a variable could
// not be expanded.
func (p *configParser) expandedString(f member, path string) (string, bool) {
	if f.val[0] != '"' {
		p.errorf(f.off, path, "want a string, not %s", jsonKind(f.val))
		return "", false
	}
	var s string
	_ = json.Unmarshal(f.val, &s) // valid JSON, known to be a string
	out, problems := expandVars(s, p.lookup)
	for _, msg := range problems {
		p.errorf(f.off, path, "%s", msg)
	}
	return out, len(problems) == 0
}

// stringList returns the array of strings f, expanding variables in its
// elements if expand is set. It returns nil for an empty array.
func (p *configParser) stringList(f member, path string, expand bool) []string {
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
		var s string
		if expand {
			s, _ = p.expandedString(e, epath)
		} else {
			_ = json.Unmarshal(e.val, &s)
		}
		out = append(out, s)
	}
	return out
}

// stringMap returns the object of strings f, with variables expanded in
// its values. It returns nil for an empty object.
func (p *configParser) stringMap(f member, path string) map[string]string {
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

// auth returns the "auth" member f: "oauth", a bearer token, or an object
// {"type": "oauth", "clientId", "clientSecret", "issuer", "scopes",
// "redirectUrl"}.
func (p *configParser) auth(f member, path string) (string, *OAuthSettings) {
	switch f.val[0] {
	case '"':
		s, _ := p.expandedString(f, path)
		if strings.EqualFold(s, "oauth") {
			s = "oauth"
		}
		return s, nil
	case '{':
	default:
		p.errorf(f.off, path, `want "oauth", a bearer token or an OAuth object, not %s`, jsonKind(f.val))
		return "", nil
	}
	o := &OAuthSettings{}
	typ := ""
	for _, e := range p.members(f.val, f.off, path, "key") {
		epath := joinPath(path, e.key)
		switch e.key {
		case "type":
			typ, _ = p.expandedString(e, epath)
			if !strings.EqualFold(typ, "oauth") {
				p.errorf(e.off, epath, `unknown auth type %q; want "oauth"`, typ)
			}
		case "clientId":
			o.ClientID, _ = p.expandedString(e, epath)
		case "clientSecret":
			o.ClientSecret, _ = p.expandedString(e, epath)
		case "scopes":
			o.Scopes = p.stringList(e, epath, true)
		case "issuer":
			o.Issuer, _ = p.expandedString(e, epath)
		case "redirectUrl":
			var ok bool
			if o.RedirectURL, ok = p.expandedString(e, epath); ok {
				if err := oauthflow.CheckRedirectURL(o.RedirectURL); err != nil {
					p.errorf(e.off, epath, "%v", err)
				}
			}
		default:
			p.errorf(e.keyOff, epath, "unknown auth member %q; want type, clientId, clientSecret, issuer, scopes or redirectUrl", e.key)
		}
	}
	if typ == "" {
		p.errorf(f.off, path, `an auth object needs "type": "oauth"`)
	}
	if (o.ClientSecret != "" || o.Issuer != "") && o.ClientID == "" {
		p.errorf(f.off, path, `"clientSecret" and "issuer" need "clientId"`)
	}
	return "oauth", o
}

// maxTimeoutSeconds is the longest timeout a time.Duration can hold.
const maxTimeoutSeconds = float64(math.MaxInt64 / int64(time.Second))

// timeout returns the timeout f: a number of seconds, or a duration string.
func (p *configParser) timeout(f member, path string) time.Duration {
	return p.duration(f, path, " a timeout", "negative timeout %s; use 0, or leave it out, for no limit")
}

// duration returns f, a number of seconds or a duration string such as
// "30s". what ends the too-long and too-short messages; negative is the
// message (with %s for the value) for a negative one.
func (p *configParser) duration(f member, path, what, negative string) time.Duration {
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
