package config

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// MaxServerName is the longest server name: names prefix tool names, which
// model APIs cap at 64 bytes.
const MaxServerName = 64

// ValidServerName reports whether name may name a server: 1 to
// MaxServerName bytes of [A-Za-z0-9_-].
func ValidServerName(name string) bool {
	if name == "" || len(name) > MaxServerName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}

// isNameByte reports whether c is one of [A-Za-z0-9_-].
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
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

// knownMember reports whether the parser reads the server member key; a
// null one counts as absent. ("disabled" is read before the others.)
func knownMember(key string) bool {
	switch key {
	case "command", "args", "env", "cwd", "url", "headers", "type", "transport", "auth", "timeout", "includeTools", "excludeTools", "cache",
		"maxConcurrentCalls", "prefix", "description", "tools", "tasks", "skipArgumentCheck":
		return true
	}
	return false
}

// serverState is what parsing one server's members learns besides the
// Server itself.
type serverState struct {
	path          string            // the server's JSON path
	present       map[string]member // the known members that are not null
	transportFrom string            // "type" or "transport", whichever came first
	transportRaw  string            // its value as written
	transportBad  bool              // the transport is unknown or contradicted
}

// server parses the server m of the object at root. It reports false when
// the server is disabled or has problems.
func (p *parser) server(root string, m member) (Server, bool) {
	path := joinPath(root, m.key)
	if m.val[0] != '{' {
		p.errorf(m.off, path, "want an object describing the server, not %s", jsonKind(m.val))
		return Server{}, false
	}
	before := p.count
	fields := p.members(m.val, m.off, path, "member")
	if p.disabled(fields, path) {
		return Server{}, false
	}
	if !ValidServerName(m.key) {
		p.errorf(m.keyOff, path, "server name %q is not allowed: names prefix tool names (weather_get_forecast), so they must match ^[A-Za-z0-9_-]+$ and be at most %d bytes", m.key, MaxServerName)
	}

	sc := Server{Name: m.key}
	st := &serverState{path: path, present: make(map[string]member)}
	for _, f := range fields {
		known := knownMember(f.key)
		if f.key == "disabled" || known && string(f.val) == "null" {
			continue
		}
		if known {
			st.present[f.key] = f
		}
		p.serverMember(&sc, st, f)
	}
	if !st.transportBad {
		p.checkTransport(&sc, st, m.keyOff)
	}
	return sc, p.count == before
}

// disabled reports whether the server's "disabled" member, among fields,
// is true.
func (p *parser) disabled(fields []member, path string) bool {
	for _, f := range fields {
		if f.key != "disabled" {
			continue
		}
		switch string(f.val) {
		case "true":
			return true
		case "false", "null":
		default:
			p.errorf(f.off, path+".disabled", "want true or false, not %s", jsonKind(f.val))
		}
	}
	return false
}

// serverMember parses the member f of a server into sc.
func (p *parser) serverMember(sc *Server, st *serverState, f member) {
	fpath := joinPath(st.path, f.key)
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
	case "inheritEnv":
		sc.InheritEnv = p.inheritEnv(f, fpath)
	case "cwd":
		sc.Cwd, _ = p.expandedString(f, fpath)
	case "url":
		if s, ok := p.expandedString(f, fpath); ok {
			if u, err := url.Parse(s); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
				// The text as written (an expanded ${VAR} may be a secret),
				// without an inline password or query values.
				p.errorf(f.off, fpath, "not an http(s) URL: %q", urlShown(rawString(f)))
			}
			sc.URL = s
		}
	case "headers":
		sc.Headers = p.stringMap(f, fpath)
	case "type", "transport":
		p.transport(sc, st, f, fpath)
	case "auth":
		sc.Auth = p.auth(f, fpath)
	case "timeout":
		sc.Timeout = p.timeout(f, fpath)
	case "maxTotalTimeout":
		sc.MaxTotalTimeout = p.timeout(f, fpath)
	case "resetTimeoutOnProgress":
		sc.ResetTimeoutOnProgress = p.boolean(f, fpath)
	case "includeTools":
		sc.IncludeTools = p.stringList(f, fpath, false)
	case "excludeTools":
		sc.ExcludeTools = p.stringList(f, fpath, false)
	case "cache":
		sc.Cache = p.cache(f, fpath)
	case "maxConcurrentCalls":
		sc.MaxConcurrentCalls = p.maxConcurrentCalls(f, fpath)
	case "tasks":
		sc.Tasks = p.taskMode(f, fpath)
	case "prefix":
		sc.Prefix = p.prefix(f, fpath)
	case "skipArgumentCheck":
		sc.SkipArgumentCheck = p.boolean(f, fpath)
	case "description":
		if f.val[0] != '"' {
			// Not the note this package reads: some other tool's member.
			p.extra(sc, f)
			return
		}
		sc.Description = rawString(f)
	case "tools":
		if f.val[0] != '{' {
			// Not this package's transforms: some other tool's member
			// (GitHub Copilot's list of allowed tools, "tools": ["*"]).
			p.extra(sc, f)
			return
		}
		sc.Tools = p.tools(f, fpath)
	default:
		p.extra(sc, f)
	}
}

// extra keeps the member f, which the parser does not read, in sc.Extra.
func (p *parser) extra(sc *Server, f member) {
	if sc.Extra == nil {
		sc.Extra = make(map[string]json.RawMessage)
	}
	sc.Extra[f.key] = f.val
}

// transport parses the member f, "type" or "transport", into sc.Transport;
// the two may both be given if they agree.
func (p *parser) transport(sc *Server, st *serverState, f member, fpath string) {
	if f.val[0] != '"' {
		p.errorf(f.off, fpath, "want a string, not %s", jsonKind(f.val))
		st.transportBad = true
		return
	}
	s := rawString(f)
	t, ok := transportNames[strings.ToLower(s)]
	switch {
	case !ok:
		p.errorf(f.off, fpath, `unknown transport %q; want "stdio", "http" (or "streamable-http") or "sse"`, s)
		st.transportBad = true
	case sc.Transport != "" && sc.Transport != t:
		p.errorf(f.off, fpath, `%s %q disagrees with %s %q`, f.key, s, st.transportFrom, st.transportRaw)
		st.transportBad = true
	case sc.Transport == "":
		sc.Transport, st.transportFrom, st.transportRaw = t, f.key, s
	}
}

// checkTransport infers sc.Transport when the document does not give it,
// and checks that the server's members fit it. off is the offset of the
// server's key.
func (p *parser) checkTransport(sc *Server, st *serverState, off int) {
	_, hasCommand := st.present["command"]
	_, hasURL := st.present["url"]
	given := sc.Transport
	switch {
	case hasCommand && hasURL:
		p.errorf(off, st.path, `has both "command" and "url": a server is either a local command (stdio) or a URL (http, sse)`)
		return
	case !hasCommand && !hasURL:
		p.errorf(off, st.path, `has neither "command" (a local server, over stdio) nor "url" (a remote one, over http or sse)`)
		return
	case given == "stdio" && !hasCommand:
		p.errorf(off, st.path, `transport "stdio" needs "command", not "url"`)
		return
	case given != "" && given != "stdio" && !hasURL:
		p.errorf(off, st.path, `transport %q needs "url", not "command"`, given)
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
	p.checkMembersFit(sc, st)
}

// checkMembersFit reports the members that do not apply to sc's transport.
func (p *parser) checkMembersFit(sc *Server, st *serverState) {
	misplaced := func(key, kind string) {
		f := st.present[key]
		p.errorf(f.off, joinPath(st.path, key), "%q applies to %s servers only, and this server is %s", key, kind, sc.Transport)
	}
	if sc.Transport == "stdio" {
		if len(sc.Headers) > 0 {
			misplaced("headers", "http and sse")
		}
		if sc.Auth != nil {
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
	if len(sc.InheritEnv) > 0 {
		misplaced("inheritEnv", "stdio")
	}
	if sc.Cwd != "" {
		misplaced("cwd", "stdio")
	}
}

// inheritEnv returns the "inheritEnv" member f: names of variables, a
// prefix ending in "*", or "*" alone. Nothing is expanded in it.
func (p *parser) inheritEnv(f member, path string) []string {
	list := p.stringList(f, path, false)
	for i, name := range list {
		n := strings.TrimSuffix(name, "*")
		if name == "*" || validVarName(n) {
			continue
		}
		p.errorf(f.off, fmt.Sprintf("%s[%d]", path, i), `%q: want a variable name, a prefix ending in "*" (AWS_*), or "*" for the whole environment`, name)
	}
	return list
}
