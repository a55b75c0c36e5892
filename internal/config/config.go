package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MaxProblems is how many problems Parse reports with their positions.
// Past it, one last problem says how many more the document has: a
// document with thousands of mistakes gets a readable answer, quickly.
const MaxProblems = 100

// DefaultCacheEntries is the size of a response cache whose "maxEntries"
// is 0 or absent, as the messages about "maxEntries" quote it. It equals
// mcpadapter.DefaultCacheEntries (a test in that package checks).
const DefaultCacheEntries = 1024

// Options are what Parse needs besides the document.
type Options struct {
	// File names the document in problems: the file it was read from, or
	// "" when it was given as bytes.
	File string
	// Lookup looks up a variable for ${VAR} expansion and reports whether
	// it is set, as os.LookupEnv does. nil means no variable is set.
	Lookup func(name string) (string, bool)
	// CheckRedirectURL, if set, checks the "redirectUrl" of an auth object
	// after expansion; its error becomes a problem at that member, quoting
	// the value as written rather than as expanded.
	CheckRedirectURL func(url string) error
}

// Document is a parsed mcpServers document.
type Document struct {
	// Servers are the servers that are not disabled, in document order.
	Servers []Server
}

// Server is one server of a Document.
type Server struct {
	// Name is the server's key, which matches ValidServerName.
	Name string

	// Command, Args, Env and Cwd describe a stdio server's program.
	Command string
	// Args are the program's arguments.
	Args []string
	// Env holds variables added to the program's environment.
	Env map[string]string
	// InheritEnv is "inheritEnv": more variables of this process's
	// environment the program gets (names, prefixes ending in "*", or
	// "*").
	InheritEnv []string
	// Cwd is the program's working directory.
	Cwd string

	// URL is the absolute http(s) URL of an HTTP or SSE server.
	URL string
	// Headers are added to every HTTP request.
	Headers map[string]string

	// Transport is "stdio", "http" or "sse", as given or inferred.
	Transport string
	// Auth is the "auth" member; nil when absent, null or "".
	Auth *Auth
	// Timeout bounds each request; 0 means no limit.
	Timeout time.Duration
	// MaxTotalTimeout is "maxTotalTimeout": a tool call's overall bound.
	MaxTotalTimeout time.Duration
	// ResetTimeoutOnProgress is "resetTimeoutOnProgress".
	ResetTimeoutOnProgress bool
	// IncludeTools keeps only these tools when non-empty.
	IncludeTools []string
	// ExcludeTools drops these tools.
	ExcludeTools []string
	// Cache is the "cache" member; nil when absent or null.
	Cache *Cache
	// MaxConcurrentCalls is "maxConcurrentCalls"; 0 means no cap.
	MaxConcurrentCalls int
	// Tasks is "tasks": "auto", "prefer" or "never" (MCP tasks), or "".
	Tasks string
	// Prefix is "prefix": what starts the names of the server's tools
	// instead of its name; it matches ValidServerName, or is "".
	Prefix string
	// Description is "description" when it is a string: a note put
	// before each tool's description. (Another value is kept in Extra.)
	Description string
	// Tools is "tools": transforms of the server's tools, by the server's
	// name for each.
	Tools map[string]*Tool
	// SkipArgumentCheck is "skipArgumentCheck": the model's arguments
	// go to every tool of the server unchecked.
	SkipArgumentCheck bool

	// Extra holds the members the parser does not know, verbatim.
	Extra map[string]json.RawMessage
}

// Auth is a server's "auth" member: exactly one of Bearer, OAuth and Grant
// is set.
type Auth struct {
	// Bearer is the token of "auth": "<token>".
	Bearer string
	// OAuth is set by "auth": "oauth" (all fields empty) or by an auth
	// object {"type": "oauth", ...}.
	OAuth *OAuth
	// Grant is set by an auth object of a grant that needs no user
	// (grant.go).
	Grant *Grant
}

// OAuth holds the members of an auth object.
type OAuth struct {
	// ClientID is "clientId".
	ClientID string
	// ClientSecret is "clientSecret".
	ClientSecret string
	// Issuer is "issuer".
	Issuer string
	// Scopes is "scopes".
	Scopes []string
	// RedirectURL is "redirectUrl".
	RedirectURL string
	// DPoPKeyFile is "dpopKeyFile".
	DPoPKeyFile string
}

// Cache is a server's "cache" member: false (Off), true (all settings
// zero) or an object of settings.
type Cache struct {
	// Off is set by "cache": false; the settings are then zero.
	Off bool
	// DefaultTTL is "defaultTtl".
	DefaultTTL time.Duration
	// MaxTTL is "maxTtl".
	MaxTTL time.Duration
	// MaxEntries is "maxEntries".
	MaxEntries int
}

// Problem is one thing wrong with a document. Its fields are those of
// mcpadapter.ConfigError, in the same order, so that one converts to the
// other.
type Problem struct {
	// File is Options.File.
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

// String returns the problem as "file:line:column: path: message", leaving
// out the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	switch {
	case p.File != "" && p.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", p.File, p.Line, p.Column)
	case p.File != "":
		fmt.Fprintf(&b, "%s: ", p.File)
	case p.Line > 0:
		fmt.Fprintf(&b, "line %d, column %d: ", p.Line, p.Column)
	}
	if p.Path != "" {
		fmt.Fprintf(&b, "%s: ", p.Path)
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Parse parses the mcpServers document data. It returns the document and
// no problems, or no document and every problem found, in document order
// (the first MaxProblems of them, then one saying how many more there are).
func Parse(data []byte, opts Options) (*Document, []Problem) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		// A byte order mark, as Windows editors write. Blank it rather than
		// cut it, so that offsets stay those of the file.
		data = append([]byte("   "), data[3:]...)
	}
	lookup := opts.Lookup
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	p := &parser{file: opts.File, data: data, lookup: lookup, checkRedirect: opts.CheckRedirectURL}
	doc := p.document()
	if p.count == 0 {
		return doc, nil
	}
	switch more := p.count - len(p.problems); {
	case more == 1:
		p.problems = append(p.problems, Problem{File: p.file, Msg: "and 1 more problem, not shown"})
	case more > 1:
		p.problems = append(p.problems, Problem{File: p.file, Msg: fmt.Sprintf("and %d more problems, not shown", more)})
	}
	return nil, p.problems
}
