package mcpadapter

import (
	"encoding/json"
	"os"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/config"
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
	// Env holds variables set in the program's environment.
	Env map[string]string
	// InheritEnv is "inheritEnv": variables of this process's environment
	// the program gets besides the safe set every stdio server gets (see
	// Command.InheritEnv): names, prefixes ending in "*", or "*" for all.
	InheritEnv []string
	// Cwd is the program's working directory; empty means this process's.
	Cwd string

	// URL is the absolute http(s) URL of an HTTP or SSE server.
	URL string
	// Headers are added to every HTTP request.
	Headers map[string]string

	// Transport is "stdio", "http" (streamable HTTP) or "sse", after normalisation and inference.
	Transport string
	// Auth is the server's "auth" member: nil for none, else a bearer
	// token or OAuth settings (see ServerAuth).
	Auth *ServerAuth
	// Timeout bounds each request to this server; 0 means no limit.
	Timeout time.Duration
	// MaxTotalTimeout is "maxTotalTimeout": ClientOptions.MaxTotalTimeout
	// for this server; 0 means the ClientOptions' setting.
	MaxTotalTimeout time.Duration
	// ResetTimeoutOnProgress is "resetTimeoutOnProgress": true turns on
	// ClientOptions.ResetTimeoutOnProgress for this server.
	ResetTimeoutOnProgress bool
	// IncludeTools, if non-empty, keeps only these tools; ExcludeTools drops these. Names are the server's own tool names.
	IncludeTools []string
	// ExcludeTools drops these tools; see IncludeTools.
	ExcludeTools []string
	// Cache is the server's "cache" member, one of three settings: nil
	// (the member is absent or null) leaves the response cache to
	// ClientOptions.Cache; Off ("cache": false) turns it off for this
	// server, whatever ClientOptions.Cache says; any other value ("cache":
	// true or an object) turns it on, with its non-zero settings over
	// those of ClientOptions.Cache.
	Cache *ServerCache
	// MaxConcurrentCalls is "maxConcurrentCalls": the cap on the server's
	// tool calls in flight (ClientOptions.MaxConcurrentCalls); 0 means
	// the ClientOptions' setting.
	MaxConcurrentCalls int
	// Tasks is "tasks": the server's TaskMode ("auto", "prefer",
	// "never"); TaskDefault keeps ClientOptions.Tasks.Mode.
	Tasks TaskMode

	// Prefix is "prefix": what starts the names of the server's tools
	// instead of Name (ServerTransform.Prefix).
	Prefix string
	// Description is "description" when it is a string: a note put before
	// the description of each of the server's tools
	// (ServerTransform.Description).
	Description string
	// Tools is "tools" when it is an object: transforms of the server's
	// tools, by the server's name for each (ServerTransform.Tools).
	Tools map[string]*ToolTransform
	// SkipArgumentCheck is "skipArgumentCheck": true sends the model's
	// arguments to every tool of the server unchecked
	// (ServerTransform.SkipArgumentCheck; per tool, "skipArgumentCheck"
	// in its "tools" entry).
	SkipArgumentCheck bool

	// Extra holds the members this package does not know, kept verbatim.
	Extra map[string]json.RawMessage
}

// ServerAuth is a server's "auth" member: exactly one of Bearer, OAuth
// and Grant is set (Grant by an auth object of type "client_credentials",
// "jwt_bearer", "enterprise", "token_exchange" or "signin": see GrantSettings). "auth": "<token>" sets Bearer; "auth": "oauth" sets OAuth
// to empty settings, and an auth object {"type": "oauth", ...} to its
// members. NewGroup refuses a ServerAuth with both or neither.
type ServerAuth struct {
	// Bearer is a bearer token, sent as "Authorization: Bearer <token>".
	Bearer string
	// OAuth runs the OAuth flow of ClientOptions.Auth's *OAuth (the
	// template) for this server, with these settings over the template's.
	OAuth *OAuthSettings
	// Grant runs a grant that needs no user (config_grants.go).
	Grant *GrantSettings
}

// OAuthSettings are the OAuth client settings a config may give a server:
// "auth": {"type": "oauth", "clientId": "...", "clientSecret": "${SECRET}",
// "issuer": "https://auth.example.com", "scopes": ["..."],
// "redirectUrl": "http://127.0.0.1:8976/callback"}.
// Anything not set comes from the *OAuth in ClientOptions.Auth, if any.
type OAuthSettings struct {
	// ClientID is "clientId": a client registered with the authorization
	// server in advance; empty means dynamic registration (see
	// OAuth.ClientID). The template's own ClientID, ClientSecret and
	// Issuer are never used for a config's server.
	ClientID string
	// ClientSecret is "clientSecret", the secret of ClientID.
	ClientSecret string
	// Issuer is "issuer", the authorization server ClientID is registered with.
	Issuer string
	// Scopes is "scopes"; non-empty, it replaces the template's Scopes.
	Scopes []string
	// RedirectURL is "redirectUrl", a loopback http URL with a port;
	// non-empty, it replaces the template's RedirectURL.
	RedirectURL string
	// DPoPKeyFile is "dpopKeyFile", a PEM private key: tokens are bound
	// to it (OAuth.DPoPKey).
	DPoPKeyFile string
}

// ServerCache is a server's "cache" member when present: false (Off) or
// true or an object {"defaultTtl": "30s", "maxTtl": "10m",
// "maxEntries": 500}. The settings are CacheConfig's fields of the same
// names; zero ones come from ClientOptions.Cache.
type ServerCache struct {
	// Off turns the response cache off for the server; the settings are
	// then ignored.
	Off bool
	// DefaultTTL is "defaultTtl"; see CacheConfig.DefaultTTL.
	DefaultTTL time.Duration
	// MaxTTL is "maxTtl"; see CacheConfig.MaxTTL.
	MaxTTL time.Duration
	// MaxEntries is "maxEntries"; see CacheConfig.MaxEntries.
	MaxEntries int
}

// ConfigError reports a problem in a config document. A document with
// several problems yields all of them, in document order, joined with
// errors.Join; errors.As finds the first. Past 100 problems, a last
// ConfigError says how many more there are.
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
	return config.Problem(*e).String()
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
// A server has either "command" (with "args", "env", "inheritEnv" and
// "cwd"), which runs it over stdio, or "url" (with "headers"), which reaches it over streamable
// HTTP or, when the URL's path ends in /sse, over legacy HTTP+SSE. "type"
// or "transport" may say so explicitly: "stdio", "http" (or
// "streamable-http", "streamableHttp", "streamable_http") or "sse". A
// server may also have "auth" ("oauth", a bearer token, or an OAuth object:
// see OAuthSettings), "timeout" (a number of seconds, or a duration such as
// "30s"), "includeTools" and "excludeTools" (lists of tool names), "cache"
// (true, false, or an object {"defaultTtl": "30s", "maxTtl": "10m",
// "maxEntries": 500}: see ServerCache), "maxConcurrentCalls" (a whole
// number: see ClientOptions.MaxConcurrentCalls), "resetTimeoutOnProgress"
// (true or false) and "maxTotalTimeout" (a duration: see
// ClientOptions.ResetTimeoutOnProgress, MaxTotalTimeout), "tasks" ("auto",
// "prefer" or "never": the TaskMode of the server's calls, and of one
// tool's in "tools"), "disabled" (true drops the server), and the tool
// transforms of ServerTransform: "prefix" (a
// name), "description" (a string) and "tools", an object of tools by the
// server's name for each: {"search": {"name": "search_docs",
// "description": "...", "enabled": true, "arguments": {"limit":
// {"default": 10}, "tenant": {"hide": true, "default": "acme"}, "q":
// {"name": "query", "description": "..."}}, "timeout": "2m",
// "maxResultBytes": 20000, "skipArgumentCheck": true}} (see
// ToolTransform), and "skipArgumentCheck" (true: the server's tools get
// the model's arguments unchecked, see ServerTransform). Other members, and a
// "description" or "tools" of another shape (as other programs write
// them), are kept in ServerConfig.Extra. A member whose value is null
// counts as absent.
//
// In command, args, env values, cwd, url, header values and auth, ${VAR}
// is replaced by the variable VAR, which must be set, and ${VAR:-default}
// by VAR, or by default when VAR is unset or empty. A default may hold
// variables in turn, ${VAR:-${OTHER}}, looked up only when the default is
// used; braces in a default must balance (${VAR:-{"a":1}} defaults to
// {"a":1}). ${env:VAR}, as Cursor and VS Code write it, is ${VAR}. A "$"
// not followed by "{" is kept as is. Variables are not looked up in
// disabled servers. Messages quote values as written, never as expanded.
//
// Any problem makes ParseConfigEnv return no Config and every problem in
// the document, each a *ConfigError, joined with errors.Join when there are
// several (past 100, one last *ConfigError says how many more there are).
func ParseConfigEnv(data []byte, lookup func(string) (string, bool)) (*Config, error) {
	return parseConfig("", data, lookup)
}
