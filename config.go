package mcpadapter

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Config is an mcpServers document: several servers to use together.
//
// The document is the JSON that Claude Desktop, Cursor, Claude Code
// (.mcp.json), VS Code (.vscode/mcp.json) and FastMCP read:
//
//	{
//	  "mcpServers": {
//	    "weather": {"url": "https://weather.example.com/mcp"},
//	    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
//	  }
//	}
//
// The servers are under "mcpServers", or under "servers" as VS Code writes
// it; other members of the document (such as VS Code's "inputs") are
// ignored. See ParseConfigEnv for what a server may contain.
type Config struct {
	// Servers are the servers by name, in the order the document lists them.
	Servers []*ServerConfig
}

// ServerConfig is one server of a Config.
type ServerConfig struct {
	// Name is the server's key in the document. It prefixes the names of
	// the server's tools, so it matches ^[A-Za-z0-9_-]{1,64}$.
	Name string

	// Command is the program of a stdio server.
	Command string
	// Args are the program's arguments.
	Args []string
	// Env holds variables added to the program's environment.
	Env map[string]string
	// Cwd is the program's working directory; empty means this process's.
	Cwd string

	// URL is the absolute http(s) URL of an HTTP or SSE server.
	URL string
	// Headers are added to every HTTP request.
	Headers map[string]string

	// Transport is "stdio", "http" (streamable HTTP) or "sse", after normalisation and inference.
	Transport string
	// Auth is "" (none), "oauth", or a bearer token.
	Auth string
	// OAuth holds the settings of an "auth" object; nil for a string.
	OAuth *OAuthSettings
	// Timeout bounds each request to this server; 0 means no limit.
	Timeout time.Duration
	// IncludeTools, if non-empty, keeps only these tools; ExcludeTools drops these. Names are the server's own tool names.
	IncludeTools []string
	// ExcludeTools drops these tools; see IncludeTools.
	ExcludeTools []string
	// Cache is the server's "cache" member, true or an object: the response
	// cache is on, with these settings over those of ClientOptions.Cache.
	// nil means the member is absent or false.
	Cache *CacheConfig
	// NoCache is set by "cache": false: the response cache is off for this
	// server, whatever ClientOptions.Cache says.
	NoCache bool

	// Extra holds the members this package does not know, kept verbatim.
	Extra map[string]json.RawMessage
}

// OAuthSettings are the OAuth client settings a config may give a server:
// "auth": {"type": "oauth", "clientId": "...", "clientSecret": "${SECRET}",
// "issuer": "https://auth.example.com", "scopes": ["..."],
// "redirectUrl": "http://127.0.0.1:8976/callback"}.
// Anything not set comes from the *OAuth in ClientOptions.Auth, if any.
type OAuthSettings struct {
	ClientID     string
	ClientSecret string
	Issuer       string
	Scopes       []string
	RedirectURL  string
}

// ConfigError reports a problem in a config document. A document with
// several problems yields all of them, in document order, joined with
// errors.Join; errors.As finds the first.
type ConfigError struct {
	// File is the file the document was read from, or "" when it was
	// parsed from bytes.
	File string
	// Path is the JSON path of the offending member, such as
	// "mcpServers.weather.url", or "" for the document as a whole. A key
	// that is not a plain name is quoted: mcpServers["my server"].
	Path string
	// Line and Column give the 1-based position of the offending byte
	// (Column counts bytes), or 0 when unknown.
	Line, Column int
	// Msg says what is wrong.
	Msg string
}

// Error returns the problem as "file:line:column: path: message", leaving
// out the parts that are unknown.
func (e *ConfigError) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Column)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Path != "" {
		fmt.Fprintf(&b, "%s: ", e.Path)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// LoadConfig reads and parses the config document in the file at path, as
// ParseConfig does. Its *ConfigErrors name the file; failing to read the
// file is the *fs.PathError of os.ReadFile.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(path, data, os.LookupEnv)
}

// ParseConfig parses a config document, expanding variables from the
// environment of this process. See ParseConfigEnv.
func ParseConfig(data []byte) (*Config, error) {
	return parseConfig("", data, os.LookupEnv)
}

// ParseConfigEnv parses a config document, looking variables up with
// lookup, which reports whether a variable is set, as os.LookupEnv does.
//
// A server has either "command" (with "args", "env" and "cwd"), which runs
// it over stdio, or "url" (with "headers"), which reaches it over streamable
// HTTP or, when the URL's path ends in /sse, over legacy HTTP+SSE. "type"
// or "transport" may say so explicitly: "stdio", "http" (or
// "streamable-http", "streamableHttp", "streamable_http") or "sse". A
// server may also have "auth" ("oauth" or a bearer token), "timeout" (a
// number of seconds, or a duration such as "30s"), "includeTools" and
// "excludeTools" (lists of tool names), "cache" (true, false, or an object
// {"defaultTtl": "30s", "maxTtl": "10m", "maxEntries": 500}: see
// CacheConfig, whose DefaultTTL, MaxTTL and MaxEntries these are), and "disabled" (true
// drops the server). Other members are kept in ServerConfig.Extra. A member whose
// value is null counts as absent.
//
// In command, args, env values, cwd, url, header values and auth, ${VAR}
// is replaced by the variable VAR, which must be set, and ${VAR:-default}
// by VAR, or by default when VAR is unset or empty. ${env:VAR}, as Cursor
// and VS Code write it, is ${VAR}. A "$" not followed by "{" is kept as
// is. Variables are not looked up in disabled servers.
//
// Any problem makes ParseConfigEnv return no Config and every problem in
// the document, each a *ConfigError, joined with errors.Join when there are
// several.
func ParseConfigEnv(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	return parseConfig("", data, lookup)
}
