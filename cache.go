package mcpadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/cache"
	"github.com/mcpadapter/mcpadapter/internal/engine"
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
// in-process server belong to the Client alone, whatever the Store.
//
// With a CallIdentity on the request (a principal, or identity headers), a
// result that carries a ttlMs but no cacheScope is private to that
// principal: the protocol's default is "public", but a server that
// answers each user differently (its own tools, schemas, resources) may
// not say so, and a per-user listing served to everyone is a leak; only
// an explicit "public" is shared between principals. Public results are
// shared only between requests with the same identity headers, since a
// server may tell tenants apart by a header on one URL. A
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
type CacheMode = cache.Mode

const (
	// CacheUse serves a fresh cached result, else asks the server and
	// caches the answer. It is the default.
	CacheUse = cache.Use
	// CacheRefresh asks the server even if a fresh result is cached, and
	// caches the answer.
	CacheRefresh = cache.Refresh
	// CacheBypass asks the server and leaves the cache as it is.
	CacheBypass = cache.Bypass
)

// WithCacheMode returns a context that makes the requests made with it use
// the response cache as m says: pass it to Tools, ListTools, ListPrompts,
// ListResources, ListResourceTemplates, ReadResource or Connect (and to the
// Adapter's and Group's methods, which call them). It has no effect on a
// Client without a cache.
func WithCacheMode(ctx context.Context, m CacheMode) context.Context {
	return cache.WithMode(ctx, m)
}

// A CacheStore holds the entries of the response cache (see CacheConfig).
// Its methods may be called by many goroutines at once.
//
// Keys are opaque strings made by this package. They name the server (by a
// hash of its URL or command), the method, the page cursor or resource URI
// and, for private entries, a hash of the caller's credentials; they never
// hold a credential in clear. Keys that share a server and a method share a
// prefix, which DeletePrefix uses to invalidate a listing on every page and
// for every caller at once.
//
// A store shared by several Clients (or processes, for a remote store) lets
// them share "public" results. A store may drop entries at any time; the
// cache checks CacheEntry.Expires itself, so a store need not. Its methods
// are Get(ctx, key) (CacheEntry, bool), Set(ctx, key, CacheEntry),
// Delete(ctx, key) and DeletePrefix(ctx, prefix).
type CacheStore = cache.Store

// A CacheEntry is one cached result: Value, the result encoded as JSON,
// and Expires, when the entry stops being fresh.
type CacheEntry = cache.Entry

// DefaultCacheEntries is the size of the in-memory store a Client makes
// when CacheConfig.Store is nil and CacheConfig.MaxEntries is zero.
const DefaultCacheEntries = cache.DefaultEntries

// NewMemoryCacheStore returns an in-memory CacheStore that holds at most
// maxEntries entries (DefaultCacheEntries if maxEntries <= 0), dropping the
// least recently used first, and expired entries as it finds them. It is
// safe for concurrent use, so several Clients may share it.
func NewMemoryCacheStore(maxEntries int) CacheStore { return cache.NewMemoryStore(maxEntries) }

// newResponseCache returns the cache of c, a client of ep with opts, or
// nil if opts turns no cache on.
func (c *Client) newResponseCache(ep *engine.Endpoint, opts *ClientOptions) *cache.Cache {
	cfg := opts.Cache
	if cfg == nil {
		return nil
	}
	srv := cache.Server{Stdio: ep.Kind == engine.Stdio, HTTP: ep.HTTP(), URL: ep.URL}
	if srv.Stdio {
		srv.Path, srv.Args, srv.Env, srv.InheritEnv, srv.Dir = ep.Command.Path, ep.Command.Args, ep.Command.Env, ep.Command.InheritEnv, ep.Command.Dir
	}
	cred := cache.Credentials{Known: opts.OAuthHandler == nil && opts.HTTPClient == nil, Headers: opts.Headers}
	switch a := opts.Auth.(type) {
	case nil:
	case bearerAuth:
		cred.Token = string(a)
	default:
		cred.Known = false
	}
	return cache.New(cache.Config{
		Store:      cfg.Store,
		MaxEntries: cfg.MaxEntries,
		DefaultTTL: cfg.DefaultTTL,
		MaxTTL:     cfg.MaxTTL,
		Server:     cache.ServerID(srv),
		Private:    cache.PrivatePartition(srv, cred),
		Principal: func(ctx context.Context) (string, map[string]string) {
			if id := CallIdentityFrom(ctx); id != nil {
				return id.Principal, id.Headers
			}
			return "", nil
		},
		Log: c.log,
	})
}
