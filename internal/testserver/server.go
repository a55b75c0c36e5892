package testserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultName is the server name used when Options.Name is empty.
const DefaultName = "testserver"

// Options configures a test server built by [New] or [NewWithState].
type Options struct {
	// Name is the server's implementation name (default [DefaultName]).
	Name string
	// Version is the server's implementation version (default "1.0.0").
	Version string
	// Era selects the protocol generation; the zero value is [Modern].
	Era Era
	// PageSize, if positive, sets mcp.ServerOptions.PageSize so that
	// tools/list paginates.
	PageSize int
	// ManyTools adds the trivial tools extra_01 … extra_25 (see
	// [ManyToolsCount]), to exercise pagination.
	ManyTools bool
	// Instructions is returned to clients on connection.
	Instructions string
	// Logger receives go-sdk's server logs; nil discards them.
	Logger *slog.Logger
	// OnCrash, if set, is called by the crash tool (the mcptestserver
	// command uses it to exit the process). If nil, or if it returns, the
	// crash tool fails the call with a protocol error.
	OnCrash func()

	// CacheTTLMs and CacheScope, unless both are zero, are the caching
	// hints (SEP-2549) of every server/discover, list and resources/read
	// result (mcp.ServerOptions.SetCacheable); CacheScope "" keeps go-sdk's
	// default, "public". Without them go-sdk sends ttlMs 0.
	CacheTTLMs int
	CacheScope string
	// NoCacheHints sends those results with ttlMs 0 and an empty
	// cacheScope, as a server that gives no hints is read.
	NoCacheHints bool
	// Resources adds the resources [ResourceA] and [ResourceB], the
	// template [ResourceTemplate] and the prompt "greet", and accepts
	// resource subscriptions.
	Resources bool
	// WhoamiResource adds the resource [ResourceWhoami].
	WhoamiResource bool
	// OneCallAtATime makes the server handle one tools/call at a time, as
	// a single-threaded server or one with a single upstream connection
	// does: a call that arrives while another is in flight gets an error
	// result starting with [BusyMessage] (see [State.Overlaps]).
	OneCallAtATime bool
	// Mutable adds the tools tool_add and tool_remove, which change the
	// server's tool list while clients use it (see addMutableTools).
	Mutable bool
	// Skills serves a skill over the skills extension (extensions.go);
	// SkillTamper ("digest", "size", "frontmatter") serves a SKILL.md
	// that fails that check.
	Skills      bool
	SkillTamper string
	// Apps adds two MCP Apps tools, one visible to the app only, and
	// their ui:// view (extensions.go).
	Apps bool
	// Notify adds the tool notify, which sends a log message and a
	// progress report and answers at once (tools_notify.go).
	Notify bool
}

// RecvPrefix starts the stderr lines of an mcptestserver run with
// -log-methods: one "recv PID METHOD" line per message read from stdin,
// in order, PID being the process's.
const RecvPrefix = "recv "

// BusyMessage starts the error result of a call refused by a server with
// Options.OneCallAtATime.
const BusyMessage = "busy: another tool call is in flight"

// New returns a go-sdk server with the test tools, configured by opts.
func New(opts Options) *mcp.Server {
	srv, _ := NewWithState(opts)
	return srv
}

// NewWithState is like [New] and also returns the [State] recording what the
// server observes.
func NewWithState(opts Options) (*mcp.Server, *State) {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	version := opts.Version
	if version == "" {
		version = "1.0.0"
	}
	sopts := &mcp.ServerOptions{
		Instructions:              opts.Instructions,
		Logger:                    opts.Logger,
		SupportedProtocolVersions: opts.Era.supportedVersions(),
	}
	if opts.PageSize > 0 {
		sopts.PageSize = opts.PageSize
	}
	setCacheOptions(opts, sopts)
	if opts.Notify {
		sopts.CompletionHandler = notifyComplete
	}
	if ext := extensionCapabilities(opts); len(ext) > 0 {
		sopts.Capabilities = &mcp.ServerCapabilities{Extensions: ext}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: version}, sopts)
	st := newState()
	if opts.OneCallAtATime {
		srv.AddReceivingMiddleware(oneAtATimeMiddleware(st))
	}
	srv.AddReceivingMiddleware(recordingMiddleware(st)) // outermost: sees refused calls too
	if opts.NoCacheHints {
		srv.AddReceivingMiddleware(noHintsMiddleware)
	}
	addBasicTools(srv, st, opts)
	addContentTools(srv)
	addElicitTools(srv)
	addIdentityTools(srv)
	if opts.ManyTools {
		addManyTools(srv)
	}
	if opts.Resources {
		addResources(srv, st)
	}
	if opts.Mutable {
		addMutableTools(srv)
	}
	if opts.WhoamiResource {
		addWhoamiResource(srv, st)
	}
	if opts.Skills {
		addSkills(srv, opts.SkillTamper)
	}
	if opts.Apps {
		addApps(srv)
	}
	if opts.Notify {
		addNotifyTool(srv)
		addNotifyFeatures(srv)
	}
	return srv, st
}

// recordingMiddleware counts requests by method in st, and remembers the
// HTTP headers of each call.
func recordingMiddleware(st *State) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			st.recordRequest(method)
			switch method {
			case "tools/list":
				st.recordList()
			case "tools/call":
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
					st.recordCall(p.Name, requestHeader(req), p.Arguments)
				}
			}
			return next(ctx, method, req)
		}
	}
}

// oneAtATimeMiddleware refuses a tools/call while another is in flight,
// counting the refusals and the most calls it saw at once in st.
func oneAtATimeMiddleware(st *State) mcp.Middleware {
	var inflight atomic.Int32
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			n := inflight.Add(1)
			defer inflight.Add(-1)
			st.recordInFlight(int(n))
			if n > 1 {
				msg := fmt.Sprintf("%s (%d calls at once; this server handles one at a time)", BusyMessage, n)
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{text(msg)}}, nil
			}
			return next(ctx, method, req)
		}
	}
}

// requestHeader returns the HTTP header of req, or nil if it did not arrive
// over HTTP.
func requestHeader(req mcp.Request) http.Header {
	if extra := req.GetExtra(); extra != nil {
		return extra.Header
	}
	return nil
}

// NewMinimal returns a small server with only the echo and slow tools,
// for benchmarks where the server's own start-up should cost little.
func NewMinimal(opts Options) *mcp.Server {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: opts.Era.supportedVersions()})
	addMinimalTools(srv)
	return srv
}
