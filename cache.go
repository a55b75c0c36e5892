package mcpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
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

// cacheRequest is what the cache needs to know of one request.
type cacheRequest struct {
	method string
	param  string // the cursor, URI or protocol version the key names
	ok     bool   // the request may be answered from the cache
}

// cacheRequestOf describes req, a request for method. ok is false for the
// requests the cache never answers: other methods, continuations of a
// multi-round-trip request, and requests on handshake-era connections.
func cacheRequestOf(method string, req mcp.Request) cacheRequest {
	cr := cacheRequest{method: method}
	switch p := req.GetParams().(type) {
	case *mcp.DiscoverParams:
		if p != nil {
			v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
			cr.param, cr.ok = v, eraOf(v) == EraDiscover
		}
		return cr
	case *mcp.ListToolsParams:
		if p != nil {
			cr.param = p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			cr.param = p.Cursor
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			cr.param = p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			cr.param = p.Cursor
		}
	case *mcp.ReadResourceParams:
		if p == nil || len(p.InputResponses) > 0 || p.RequestState != "" {
			return cr
		}
		cr.param = p.URI
	default:
		return cr
	}
	cs, _ := req.GetSession().(*mcp.ClientSession)
	if cs == nil {
		return cr
	}
	ir := cs.InitializeResult()
	cr.ok = ir != nil && eraOf(ir.ProtocolVersion) == EraDiscover
	return cr
}

// newCacheResult returns an empty result for method, or nil if method has
// no cacheable result.
func newCacheResult(method string) mcp.Result {
	switch method {
	case methodDiscover:
		return &mcp.DiscoverResult{}
	case methodListTools:
		return &mcp.ListToolsResult{}
	case methodListPrompts:
		return &mcp.ListPromptsResult{}
	case methodListResources:
		return &mcp.ListResourcesResult{}
	case methodListTemplates:
		return &mcp.ListResourceTemplatesResult{}
	case methodReadResource:
		return &mcp.ReadResourceResult{}
	}
	return nil
}

// hintsOf returns the caching hints of res, and whether res is complete
// (not a request for input). It returns nil for results without hints.
func hintsOf(res mcp.Result) (*mcp.Cacheable, bool) {
	switch r := res.(type) {
	case *mcp.DiscoverResult:
		if r != nil {
			return &r.Cacheable, r.ResultType == "" || r.ResultType == "complete"
		}
	case *mcp.ListToolsResult:
		if r != nil {
			return &r.Cacheable, r.ResultType == "" || r.ResultType == "complete"
		}
	case *mcp.ListPromptsResult:
		if r != nil {
			return &r.Cacheable, r.ResultType == "" || r.ResultType == "complete"
		}
	case *mcp.ListResourcesResult:
		if r != nil {
			return &r.Cacheable, r.ResultType == "" || r.ResultType == "complete"
		}
	case *mcp.ListResourceTemplatesResult:
		if r != nil {
			return &r.Cacheable, r.ResultType == "" || r.ResultType == "complete"
		}
	case *mcp.ReadResourceResult:
		if r != nil {
			return &r.Cacheable, !r.NeedsInput() && len(r.InputRequests) == 0 && r.RequestState == ""
		}
	}
	return nil, false
}

// cacheMiddleware is the response cache, as go-sdk sending middleware. It
// is installed on every Client, cache or not: go-sdk v1.8.0 keeps list and
// read results of 2026-07-28 sessions for their ttlMs by itself, with no
// way to turn that off or to refresh, so the middleware hides the hints
// from go-sdk (ttlMs becomes 0 in the results callers see) and does the
// caching itself when the Client has a cache.
func (c *Client) cacheMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodDiscover, methodListTools, methodListPrompts, methodListResources, methodListTemplates, methodReadResource:
		default:
			return next(ctx, method, req)
		}
		rc := c.cache
		cr := cacheRequest{}
		if rc != nil {
			cr = cacheRequestOf(method, req)
		}
		mode := cacheModeOf(ctx)
		if cr.ok && mode == CacheUse {
			if res, ok := c.cacheLookup(ctx, cr); ok {
				return res, nil
			}
		}
		var gen cacheGen
		if cr.ok && mode != CacheBypass {
			gen = rc.generation(cr)
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		hints, complete := hintsOf(res)
		if hints == nil {
			return res, nil
		}
		ttlMs, scope := hints.TTLMs, hints.CacheScope
		if method != methodDiscover {
			hints.TTLMs = 0 // go-sdk's own cache drops what has no TTL
		}
		if cr.ok && mode != CacheBypass {
			c.cacheStore(ctx, cr, gen, res, ttlMs, scope, complete)
		}
		return res, nil
	}
}

// cacheLookup returns a fresh cached result for cr: the caller's private
// entry, else the public one. Each hit is decoded anew, so callers (and
// go-sdk, which edits results) never share one.
func (c *Client) cacheLookup(ctx context.Context, cr cacheRequest) (mcp.Result, bool) {
	rc := c.cache
	now := time.Now()
	for _, part := range []string{rc.private, publicPartition} {
		key := rc.key(cr.method, cr.param, part)
		e, ok := rc.store.Get(ctx, key)
		if !ok || !now.Before(e.Expires) {
			continue
		}
		if lp := listPagesOf(ctx); lp != nil && isListMethod(cr.method) && cr.param == "" {
			lp.first = e.Expires
		}
		res := newCacheResult(cr.method)
		if err := json.Unmarshal(e.Value, res); err != nil {
			c.log.Warn("dropping an unreadable cache entry", "method", cr.method, "error", err)
			rc.store.Delete(ctx, key)
			continue
		}
		if hints, _ := hintsOf(res); hints != nil && cr.method != methodDiscover {
			hints.TTLMs = 0
		}
		if cr.method == methodListTools {
			// Tool schemas are handed out as the server wrote them.
			c.obs.KeepSchemas(e.Value)
		}
		c.log.Debug("served from the cache", "method", cr.method, "param", wire.RedactURLSecrets(cr.param), "scope", part)
		return res, true
	}
	return nil, false
}

// cacheStore stores res, the server's answer to cr with the hints ttlMs
// and scope, if they allow it and the entry's generation is still gen (the
// one read before the request was sent). An answer that may not be cached
// removes the entries it replaces.
func (c *Client) cacheStore(ctx context.Context, cr cacheRequest, gen cacheGen, res mcp.Result, ttlMs int, scope string, complete bool) {
	rc := c.cache
	if !complete {
		return
	}
	ttl, private := rc.ttl(ttlMs, scope)
	if ttl <= 0 {
		rc.store.Delete(ctx, rc.key(cr.method, cr.param, rc.private))
		rc.store.Delete(ctx, rc.key(cr.method, cr.param, publicPartition))
		return
	}
	if rc.generation(cr) != gen {
		c.log.Debug("result not cached: invalidated while in flight", "method", cr.method, "param", wire.RedactURLSecrets(cr.param))
		return
	}
	value, err := c.encodeForCache(cr.method, res)
	if err != nil {
		c.log.Debug("result not cached", "method", cr.method, "error", err)
		return
	}
	part := publicPartition
	if private {
		part = rc.private
	}
	expires := time.Now().Add(ttl)
	if lp := listPagesOf(ctx); lp != nil && isListMethod(cr.method) {
		if cr.param == "" {
			lp.first = expires
		} else if !lp.first.IsZero() && lp.first.Before(expires) {
			// A continuation page never outlives the first page,
			// whose cursor led to it.
			expires = lp.first
		}
	}
	key := rc.key(cr.method, cr.param, part)
	rc.store.Set(ctx, key, CacheEntry{Value: value, Expires: expires})
	if rc.generation(cr) != gen {
		// Invalidated between the check and the Set: the invalidation's
		// DeletePrefix may have run before the Set.
		rc.store.Delete(ctx, key)
	}
}

// isListMethod reports whether method is a paginated listing.
func isListMethod(method string) bool {
	switch method {
	case methodListTools, methodListPrompts, methodListResources, methodListTemplates:
		return true
	}
	return false
}

// listPages is the state of one paginated listing, which the cache uses
// to keep continuation pages no longer than the first.
type listPages struct {
	first time.Time // when the first page's entry expires; zero if unknown
}

type listPagesKey struct{}

func withListPages(ctx context.Context) context.Context {
	return context.WithValue(ctx, listPagesKey{}, &listPages{})
}

func listPagesOf(ctx context.Context) *listPages {
	lp, _ := ctx.Value(listPagesKey{}).(*listPages)
	return lp
}

// encodeForCache encodes res. A tool list is stored with the schemas as
// the server sent them, which go-sdk's decoding does not keep.
func (c *Client) encodeForCache(method string, res mcp.Result) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil || method != methodListTools {
		return b, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, err
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(top["tools"], &tools); err != nil {
		return nil, err
	}
	for _, t := range tools {
		var name string
		if json.Unmarshal(t["name"], &name) != nil {
			continue
		}
		rawIn, rawOut, ok := c.obs.RawSchemas(name)
		if !ok {
			continue
		}
		if len(rawIn) > 0 {
			t["inputSchema"] = rawIn
		}
		if len(rawOut) > 0 && string(rawOut) != "null" {
			t["outputSchema"] = rawOut
		}
	}
	if top["tools"], err = marshalNoEscape(tools); err != nil {
		return nil, err
	}
	return marshalNoEscape(top)
}

// marshalNoEscape is json.Marshal without HTML escaping, so that raw
// schemas keep their bytes (but for insignificant white space).
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
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
