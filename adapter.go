package mcpadapter

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/servername"
)

// An Adapter turns the tools of one or more MCP servers into tools for an
// agent.
//
// An Adapter governs discovery, not the tools' lifetime: tools returned by
// Tools keep working after Close, reconnecting on their next call.
type Adapter struct {
	group *Group
	opts  Options

	shapes map[*Client]*serverShape // tool transforms by server; nil entries: none
	search *toolSearch              // the catalog behind Search and the search pair
}

// Options configures an Adapter. A nil *Options is the default: no
// elicitation, every tool, and Tools fails when a server does.
type Options struct {
	// Elicitation says what a tool does when its server asks the user a
	// question mid-call; the zero value, ElicitNone, advertises no
	// elicitation capability. With ElicitInterrupt the adapter clones the
	// client it is given (auth, headers, cache settings and handlers carry
	// over; cached entries and the caller's client are untouched) and
	// installs its own elicitation handling.
	Elicitation ElicitationMode
	// ParkTimeout is how long a handshake-era call waits, parked in this
	// process, for the answer to its server's question before the question
	// is cancelled; zero means DefaultParkTimeout.
	ParkTimeout time.Duration

	// ToolFilter, if set, keeps only the tools for which it returns true.
	// It sees each tool after its transforms and before prefixing: Name
	// is the server's name for it or the one a ToolTransform gives it,
	// OriginalName the server's.
	ToolFilter func(server string, tool *Tool) bool
	// AppTools makes Tools return the MCP Apps tools meant for the app
	// only (Tool.ModelVisible false) too, with their _meta.ui, for a
	// program that relays tools to a host rendering the apps (a gateway):
	// the host keeps them from its model. Leave it false when a model
	// sees the tools. With ToolSearch they are returned beside the pair,
	// which never searches nor calls them.
	AppTools bool

	// Prefix says when tool names start with their server's name:
	// PrefixAuto (with several servers), PrefixAlways or PrefixNever. A
	// server's own prefix (ServerTransform.Prefix, "prefix" in a config)
	// is always used.
	Prefix PrefixMode
	// Transforms shape what the model sees of each server's tools, by
	// server name (the config key, or ClientOptions.Name): see
	// ServerTransform. An entry's settings replace those of the server's
	// config entry, tool by tool. Tools applies them before any binding
	// sees the tools; calls still reach the server with its own names.
	// New checks and copies them: changing them afterwards has no effect.
	Transforms map[string]*ServerTransform

	// RequireTools makes a server that offers no tools (it lists none, or
	// filters and transforms leave none) a failure, a *NoToolsError,
	// instead of a warning in the log: usually a wrong URL path, wrong
	// credentials or a misconfigured server.
	RequireTools bool

	// SkipUnavailable makes Tools return the tools of the servers that
	// could be reached when others cannot, instead of failing. A server
	// left out is tried again by the next call to Tools.
	SkipUnavailable bool
	// OnUnavailable, if set, is told about each server SkipUnavailable
	// leaves out.
	OnUnavailable func(ServerFailure)

	// TransportErrorsAsResults makes the tools' calls, when their server
	// cannot be reached (it died, the network is down, it did not answer
	// in time), return a Result the model can read ("The "weather"
	// server is unavailable: ...") instead of a *TransportError, so that
	// an agent run goes on without that server. Result.Failure keeps the
	// *TransportError for the application. A call whose own context ends
	// still returns its error.
	TransportErrorsAsResults bool

	// ToolSearch, if set, makes Tools return the tool-search pair
	// (search_tools and call_tool) instead of the catalog when its
	// definitions are over ToolSearch.Threshold estimated tokens. See
	// ToolSearch and docs/tool-search.md.
	ToolSearch *ToolSearch
	// WatchTools subscribes to the servers' tool-list changes
	// (ClientOptions.WatchTools) for the clients New builds from a URL, a
	// Command, an *mcp.Server or a *Config; set ClientOptions.WatchTools
	// on a *Client or a *Group you build. ToolsVersion then counts the
	// changes, and the search catalog re-lists at once. See "Live tool
	// lists" in docs/tool-search.md.
	WatchTools bool
	// MaxResultBytes bounds the text of a tool's result that reaches a
	// model (Result.Text, Result.ModelContent, and so every binding):
	// past it the text is cut and ends with a note saying how much was
	// left out, while Result.Content, Result.FullText and the Artifact
	// stay whole for the application. Zero means DefaultMaxResultBytes
	// (about 25,000 tokens); a negative value, no limit. TokenBudget
	// turns a token count into bytes. A tool's own limit
	// (ToolTransform.MaxResultBytes, a config file's per-tool
	// "maxResultBytes") wins. At least 256 when set.
	MaxResultBytes int
}

// resultLimit returns the byte limit of the tools' results: 0 for none.
func (o *Options) resultLimit() int {
	switch {
	case o.MaxResultBytes < 0:
		return 0
	case o.MaxResultBytes == 0:
		return DefaultMaxResultBytes
	}
	return o.MaxResultBytes
}

// New returns an Adapter for target; opts may be nil. The transport is
// inferred:
//
//   - string or *url.URL: an http(s) URL. A path ending in /sse uses the
//     legacy HTTP+SSE transport; any other uses streamable HTTP, falling
//     back to HTTP+SSE when the server answers as a legacy server does. A
//     string never starts a process.
//   - Command (see also Script): a local server over stdio.
//   - *mcp.Server: a go-sdk server, run in-process.
//   - *Config: the servers of an mcpServers document, as a Group.
//   - *Client or *Group: built with NewClient or NewGroup and their options.
//
// New does not connect; Tools does.
func New(target any, opts *Options) (*Adapter, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var g *Group
	switch t := target.(type) {
	case *Group:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcpadapter.Group)", Reason: "want " + acceptedTargets}
		}
		g = t
	case *Config:
		var err error
		if g, err = NewGroup(t, &ClientOptions{WatchTools: o.WatchTools}); err != nil {
			return nil, err
		}
	case *Client:
		if t == nil {
			return nil, &TargetError{Target: "(nil *mcpadapter.Client)", Reason: "want " + acceptedTargets}
		}
		g = &Group{clients: []*Client{t}}
	default:
		c, err := NewClient(target, &ClientOptions{WatchTools: o.WatchTools})
		if err != nil {
			return nil, err
		}
		g = &Group{clients: []*Client{c}}
	}
	if o.MaxResultBytes > 0 && o.MaxResultBytes < minResultLimit {
		return nil, fmt.Errorf("Options.MaxResultBytes is %d: want at least %d (room for the truncation note), 0 for the default of %d, or a negative value for no limit", o.MaxResultBytes, minResultLimit, DefaultMaxResultBytes)
	}
	if o.Elicitation == ElicitInterrupt {
		g = g.cloneForInterrupt(o.ParkTimeout)
	}
	shapes, err := adapterShapes(g, o.Transforms)
	if err != nil {
		return nil, err
	}
	a := &Adapter{group: g, opts: o, shapes: shapes}
	a.search = &toolSearch{a: a}
	a.search.catalogs.Max = DefaultMaxSessions
	if o.ToolSearch != nil {
		a.search.opts = *o.ToolSearch
	}
	return a, nil
}

// Tools connects if needed and returns the tools of every server, named for
// a model: unprefixed with one server, "server_tool" with several (see
// Options.Prefix), and shaped by their transforms. Two tools of different
// servers that would get the same name are a *NameCollisionError; nothing
// is silently overwritten. When servers fail, Tools returns a *GroupError
// listing all of them, unless Options.SkipUnavailable is set. A server
// whose own tools clash (it lists one name twice) has failed: its
// *NameCollisionError is its failure, and SkipUnavailable leaves it out.
//
// With Options.ToolSearch, a catalog over its threshold is returned as
// the two tools search_tools and call_tool instead (see ToolSearch).
func (a *Adapter) Tools(ctx context.Context) ([]*Tool, error) {
	tools, err := a.list(ctx)
	if err != nil || a.opts.ToolSearch == nil {
		return tools, err
	}
	return a.search.offer(ctx, tools), nil
}

// list returns the tools of every server, named and checked (Tools
// without the search pair).
func (a *Adapter) list(ctx context.Context) ([]*Tool, error) {
	tools, failures := a.group.tools(ctx, a.prepare)
	tools, clashes := nameTools(tools, a.prefixOf, a.opts.ToolFilter)
	failures = append(failures, clashes...)
	if len(failures) > 0 {
		if !a.opts.SkipUnavailable || len(failures) == len(a.group.clients) {
			if len(a.group.clients) == 1 {
				return nil, failures[0].Err
			}
			return nil, &GroupError{Failures: failures}
		}
		if a.opts.OnUnavailable != nil {
			for _, f := range failures {
				a.opts.OnUnavailable(f)
			}
		}
	}
	if err := rejectCollisions(tools); err != nil {
		return nil, err
	}
	return tools, nil
}

// MetaOriginalName is the Tool.Meta key that holds the server's own name for
// a tool whose model-facing name had to be sanitised or shortened, or was
// given by a ToolTransform.
const MetaOriginalName = "io.mcpadapter/originalName"

// nameTools filters tools and gives them their model names (prefixOf says
// each one's prefix, "" for none). A server two of whose tools get the
// same name is left out, and returned as failed.
func nameTools(tools []*Tool, prefixOf func(*Tool) string, keep func(string, *Tool) bool) ([]*Tool, []ServerFailure) {
	out := tools[:0]
	seen := make(map[[2]string]*Tool, len(tools)) // by server and model name
	clashed := make(map[string]bool)
	var failures []ServerFailure
	for _, t := range tools {
		if keep != nil && !keep(t.Server, t) {
			continue
		}
		p := prefixOf(t)
		t.Name = servername.ToolName(p, t.Name) // the server's name or a transform's
		if t.Name != t.OriginalName && (p == "" || t.Name != p+"_"+t.OriginalName) {
			// Sanitised or shortened: keep the server's name where the
			// model's framework can see it.
			meta := make(map[string]any, len(t.Meta)+1)
			for k, v := range t.Meta {
				meta[k] = v
			}
			meta[MetaOriginalName] = t.OriginalName
			t.Meta = meta
		}
		key := [2]string{t.Server, t.Name}
		if prev, dup := seen[key]; dup {
			if !clashed[t.Server] {
				clashed[t.Server] = true
				failures = append(failures, ServerFailure{Server: t.Server, Err: &NameCollisionError{
					Name: t.Name, First: prev.Server + "/" + prev.OriginalName, Second: t.Server + "/" + t.OriginalName}})
			}
			continue
		}
		seen[key] = t
		out = append(out, t)
	}
	if len(clashed) > 0 {
		out = slices.DeleteFunc(out, func(t *Tool) bool { return clashed[t.Server] })
	}
	return out, failures
}

// rejectCollisions fails when tools of two servers got the same name.
func rejectCollisions(tools []*Tool) error {
	seen := make(map[string]*Tool, len(tools))
	for _, t := range tools {
		if prev, dup := seen[t.Name]; dup {
			return &NameCollisionError{Name: t.Name, First: prev.Server + "/" + prev.OriginalName, Second: t.Server + "/" + t.OriginalName}
		}
		seen[t.Name] = t
	}
	return nil
}

// Info describes an adapter's connections.
type Info struct {
	// Era is the protocol era of the adapter: that of its oldest server.
	Era Era
	// PulledDownBy names the handshake-era server that pulled a group of
	// servers down to the handshake era, or is "".
	PulledDownBy string
	// Servers describes each connected server.
	Servers []ServerInfo
	// Unavailable lists the servers that could not be connected.
	Unavailable []ServerFailure
}

// Info connects if needed and describes the connections. It fails only if
// no server can be connected.
func (a *Adapter) Info(ctx context.Context) (*Info, error) {
	if len(a.group.clients) == 1 {
		si, err := a.group.clients[0].Connect(ctx)
		if err != nil {
			return nil, err
		}
		return &Info{Era: si.Era, Servers: []ServerInfo{*si}}, nil
	}
	return a.group.Info(ctx)
}

// Client returns the client of an adapter with one server, for prompts,
// resources, completion and everything else the adapter does not wrap.
// With several servers it returns nil: use Group().Client(name).
func (a *Adapter) Client() *Client {
	if len(a.group.clients) == 1 {
		return a.group.clients[0]
	}
	return nil
}

// Group returns the adapter's servers as a Group (of one, for a single
// server).
func (a *Adapter) Group() *Group { return a.group }

// Close ends the adapter's live connections. Tools stay callable.
func (a *Adapter) Close() error { return a.group.Close() }

func (a *Adapter) String() string {
	return fmt.Sprintf("mcpadapter.Adapter(%d servers)", len(a.group.clients))
}
