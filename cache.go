package mcpadapter

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CacheConfig turns on a Client's response cache (ClientOptions.Cache).
// The zero value, &CacheConfig{}, is a ready default: results are kept as
// long as the server says, in an in-memory store of DefaultCacheEntries
// entries that belongs to the Client.
//
// The cache follows the caching hints of the 2026-07-28 protocol (SEP-2549):
// a result's ttlMs says how long it stays fresh and its cacheScope who may
// reuse it. Only the results that carry hints are cached: those of
// server/discover, tools/list, prompts/list, resources/list,
// resources/templates/list and resources/read. Tool calls, prompts,
// completions, errors, results that ask for input (input_required) and
// results with ttlMs 0 are never cached. Connections that speak the
// initialize-handshake era carry no hints, and the cache leaves them alone.
//
// "public" results are stored for any caller of the same server, so Clients
// sharing a Store share them. "private" results are stored for the caller's
// identity only: a hash of its bearer token and headers, or, when the
// identity is not known to this package (AuthFunc, OAuthHandler, a custom
// HTTPClient), the Client alone. The private results of a stdio or
// in-process server belong to the Client alone, whatever the Store. A
// server is known by its URL (with this host's name for a loopback or
// localhost URL), or by its resolved executable, arguments, environment,
// absolute working directory and this host's name. A server's list_changed
// notification drops that listing's entries, and an answer that was on its
// way when the notification came is not stored;
// notifications/resources/updated does the same for the resource's reads.
// WithCacheMode refreshes or bypasses the cache for one call.
//
// server/discover results are cached too: while one is fresh, Connect (and
// the reconnect after Close) does not contact the server at all, so it
// succeeds even if the server is down, and whether the server is alive is
// learned on the first real request; that request is retried once on a new
// connection if it was never sent. A connection lost unexpectedly (the
// server crashed, the HTTP session expired) drops the server's cached
// server/discover results, so the reconnect that follows asks the server.
//
// NewClient rejects negative durations and a negative MaxEntries.
type CacheConfig struct {
	// DefaultTTL is how long to keep a 2026-07-28 result that carries no
	// caching hints at all (neither ttlMs nor cacheScope; compliant servers
	// always send them). Such results are private. Zero means they are not
	// cached.
	DefaultTTL time.Duration
	// MaxTTL, if positive, caps how long any result is kept, whatever ttlMs
	// the server gives.
	MaxTTL time.Duration
	// MaxEntries is the size of the Client's own in-memory store; zero
	// means DefaultCacheEntries. It is ignored when Store is set: the
	// Store's own limits apply.
	MaxEntries int
	// Store holds the entries; nil means a new NewMemoryCacheStore for each
	// Client (and for each client an Adapter derives from it, such as the
	// copy WithElicitation makes). Give several Clients one Store to share
	// public results between them.
	Store CacheStore
}

// validate reports a setting NewClient rejects.
func (cfg *CacheConfig) validate() error {
	switch {
	case cfg == nil:
		return nil
	case cfg.DefaultTTL < 0:
		return fmt.Errorf("CacheConfig.DefaultTTL is negative (%v); want 0 (results without hints are not cached) or more", cfg.DefaultTTL)
	case cfg.MaxTTL < 0:
		return fmt.Errorf("CacheConfig.MaxTTL is negative (%v); want 0 (no cap) or more", cfg.MaxTTL)
	case cfg.MaxEntries < 0:
		return fmt.Errorf("CacheConfig.MaxEntries is negative (%d); want 0 (the default of %d) or more", cfg.MaxEntries, DefaultCacheEntries)
	}
	return nil
}

// CacheMode says how one call uses the response cache; see WithCacheMode.
type CacheMode int

const (
	// CacheUse serves a fresh cached result, else asks the server and
	// caches the answer. It is the default.
	CacheUse CacheMode = iota
	// CacheRefresh asks the server even if a fresh result is cached, and
	// caches the answer.
	CacheRefresh
	// CacheBypass asks the server and leaves the cache as it is.
	CacheBypass
)

// String returns "use", "refresh" or "bypass".
func (m CacheMode) String() string {
	switch m {
	case CacheUse:
		return "use"
	case CacheRefresh:
		return "refresh"
	case CacheBypass:
		return "bypass"
	}
	return fmt.Sprintf("CacheMode(%d)", int(m))
}

type cacheModeKey struct{}

// WithCacheMode returns a context that makes the requests made with it use
// the response cache as m says: pass it to Tools, ListTools, ListPrompts,
// ListResources, ListResourceTemplates, ReadResource or Connect (and to the
// Adapter's and Group's methods, which call them). It has no effect on a
// Client without a cache.
func WithCacheMode(ctx context.Context, m CacheMode) context.Context {
	return context.WithValue(ctx, cacheModeKey{}, m)
}

func cacheModeOf(ctx context.Context) CacheMode {
	m, _ := ctx.Value(cacheModeKey{}).(CacheMode)
	return m
}

// The methods whose results carry caching hints.
const (
	methodDiscover      = "server/discover"
	methodListTools     = "tools/list"
	methodListPrompts   = "prompts/list"
	methodListResources = "resources/list"
	methodListTemplates = "resources/templates/list"
	methodReadResource  = "resources/read"
)

// cacheKeyVersion starts every key, so that a store shared by different
// versions of this package never mixes encodings.
const cacheKeyVersion = "mcpadapter.cache/1"

// publicPartition is the partition of public entries.
const publicPartition = "public"

// responseCache is a Client's cache: the store and how to name entries.
type responseCache struct {
	store      CacheStore
	defaultTTL time.Duration
	maxTTL     time.Duration
	server     string // the server's identity: a hash, or a random id
	private    string // the partition of private entries

	// The generations of the cached methods and resources. An
	// invalidation increments them before it deletes entries; an answer
	// is stored only if its generation did not change while it was on its
	// way, so a listing computed before a change and received after its
	// list_changed is never cached.
	genMu   sync.Mutex
	gens    map[string]uint64 // by method
	resSeq  uint64            // counts resources/updated notifications
	resGens map[string]uint64 // the resSeq of the last update of a URI (a prefix of the URIs it covers)
}

// maxResourceGens bounds responseCache.resGens; past it the map is cleared
// and every read in flight counts as invalidated.
const maxResourceGens = 1024

// cacheGen is a snapshot of the generation of one request's entry.
type cacheGen struct {
	method   uint64 // the method's generation
	resource uint64 // for resources/read: the last update that covers the URI
}

// generation returns the current generation of cr's entry.
func (rc *responseCache) generation(cr cacheRequest) cacheGen {
	rc.genMu.Lock()
	defer rc.genMu.Unlock()
	g := cacheGen{method: rc.gens[cr.method]}
	if cr.method == methodReadResource {
		for prefix, seq := range rc.resGens {
			if seq > g.resource && strings.HasPrefix(cr.param, prefix) {
				g.resource = seq
			}
		}
	}
	return g
}

// bump starts a new generation of the methods.
func (rc *responseCache) bump(methods ...string) {
	rc.genMu.Lock()
	defer rc.genMu.Unlock()
	if rc.gens == nil {
		rc.gens = make(map[string]uint64)
	}
	for _, m := range methods {
		rc.gens[m]++
	}
}

// bumpResource starts a new generation of the reads of uri and of the
// resources under it.
func (rc *responseCache) bumpResource(uri string) {
	rc.genMu.Lock()
	defer rc.genMu.Unlock()
	if rc.resGens == nil || len(rc.resGens) >= maxResourceGens {
		if rc.gens == nil {
			rc.gens = make(map[string]uint64)
		}
		rc.gens[methodReadResource]++ // every read in flight is stale
		rc.resGens = make(map[string]uint64)
	}
	rc.resSeq++
	rc.resGens[uri] = rc.resSeq
}

// newResponseCache returns the cache for a client of ep with opts, or nil
// if opts turns no cache on.
func newResponseCache(ep *endpoint, opts *ClientOptions) *responseCache {
	cfg := opts.Cache
	if cfg == nil {
		return nil
	}
	store := cfg.Store
	if store == nil {
		store = NewMemoryCacheStore(max(cfg.MaxEntries, 0))
	}
	return &responseCache{
		store:      store,
		defaultTTL: max(cfg.DefaultTTL, 0),
		maxTTL:     max(cfg.MaxTTL, 0),
		server:     serverIdentity(ep, hostname()),
		private:    identityPartition(ep, opts),
	}
}

// methodPrefix is the start of every key of method on this server.
func (rc *responseCache) methodPrefix(method string) string {
	return cacheKeyVersion + "\x00" + rc.server + "\x00" + method + "\x00"
}

// key names the entry of method for param (a cursor, a URI or a protocol
// version) in partition.
func (rc *responseCache) key(method, param, partition string) string {
	return rc.methodPrefix(method) + strconv.Quote(param) + "\x00" + partition
}

// ttl decides how long a result with the hints ttlMs and scope is kept,
// and whether it is private. Zero means it is not cached.
func (rc *responseCache) ttl(ttlMs int, scope string) (time.Duration, bool) {
	var d time.Duration
	private := scope != "" && scope != "public"
	switch {
	case ttlMs == 0 && scope == "":
		// No hints at all.
		d, private = rc.defaultTTL, true
	case ttlMs <= 0:
		return 0, false
	case int64(ttlMs) > math.MaxInt64/int64(time.Millisecond):
		d = math.MaxInt64
	default:
		d = time.Duration(ttlMs) * time.Millisecond
	}
	if rc.maxTTL > 0 && d > rc.maxTTL {
		d = rc.maxTTL
	}
	return d, private
}

// invalidate drops every entry of this server for the methods, for every
// caller and page, and keeps the answers on their way from being stored.
func (rc *responseCache) invalidate(ctx context.Context, methods ...string) {
	rc.bump(methods...)
	for _, m := range methods {
		rc.store.DeletePrefix(ctx, rc.methodPrefix(m))
	}
}

// invalidateResource drops the cached reads of uri and of the resources
// under it.
func (rc *responseCache) invalidateResource(ctx context.Context, uri string) {
	rc.bumpResource(uri)
	rc.store.DeletePrefix(ctx, rc.methodPrefix(methodReadResource)+strings.TrimSuffix(strconv.Quote(uri), `"`))
}

// forgetDiscover drops this server's cached server/discover results, so
// that the next connect asks the server: the connection was lost without
// Close. It does nothing on a Client without a cache.
func (rc *responseCache) forgetDiscover(ctx context.Context) {
	if rc != nil {
		rc.invalidate(ctx, methodDiscover)
	}
}

// addCacheHandlers makes the server's change notifications invalidate the
// cache before the handlers in o see them. Having the handlers also makes
// go-sdk subscribe to the notifications on 2026-07-28 connections.
func (c *Client) addCacheHandlers(o *mcp.ClientOptions) {
	rc := c.cache
	if rc == nil {
		return
	}
	tools, prompts, resources, updated := o.ToolListChangedHandler, o.PromptListChangedHandler, o.ResourceListChangedHandler, o.ResourceUpdatedHandler
	o.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		rc.invalidate(ctx, methodListTools)
		if tools != nil {
			tools(ctx, req)
		}
	}
	o.PromptListChangedHandler = func(ctx context.Context, req *mcp.PromptListChangedRequest) {
		rc.invalidate(ctx, methodListPrompts)
		if prompts != nil {
			prompts(ctx, req)
		}
	}
	o.ResourceListChangedHandler = func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
		rc.invalidate(ctx, methodListResources, methodListTemplates)
		if resources != nil {
			resources(ctx, req)
		}
	}
	o.ResourceUpdatedHandler = func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		if req.Params != nil {
			rc.invalidateResource(ctx, req.Params.URI)
		}
		if updated != nil {
			updated(ctx, req)
		}
	}
}
