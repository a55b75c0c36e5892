package cache

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mode says how one request uses the cache; see WithMode.
type Mode int

const (
	// Use serves a fresh cached result, else asks the server and
	// caches the answer. It is the default.
	Use Mode = iota
	// Refresh asks the server even if a fresh result is cached, and
	// caches the answer.
	Refresh
	// Bypass asks the server and leaves the cache as it is.
	Bypass
)

// String returns "use", "refresh" or "bypass".
func (m Mode) String() string {
	switch m {
	case Use:
		return "use"
	case Refresh:
		return "refresh"
	case Bypass:
		return "bypass"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

type modeKey struct{}

// WithMode returns a context whose requests use the cache as m says.
func WithMode(ctx context.Context, m Mode) context.Context {
	return context.WithValue(ctx, modeKey{}, m)
}

// ModeOf returns the Mode of ctx (Use when none was set).
func ModeOf(ctx context.Context) Mode {
	m, _ := ctx.Value(modeKey{}).(Mode)
	return m
}

// Config is what a Cache needs: plain values from the client.
type Config struct {
	// Store holds the entries; nil means a new NewMemoryStore of
	// MaxEntries entries.
	Store      Store
	MaxEntries int
	// DefaultTTL is how long a result without any hints is kept (zero:
	// not cached); MaxTTL, if positive, caps every TTL.
	DefaultTTL, MaxTTL time.Duration
	// Server names the server (ServerID), and Private the partition of
	// the client's private entries (PrivatePartition).
	Server, Private string
	// Principal, if set, returns the principal of a request's context and
	// the headers that go with it: private entries are kept apart per
	// principal (see partition).
	Principal func(context.Context) (principal string, headers map[string]string)
	// Log receives the cache's debug records and warnings.
	Log *slog.Logger
}

// New returns the cache cfg describes.
func New(cfg Config) *Cache {
	store := cfg.Store
	if store == nil {
		store = NewMemoryStore(max(cfg.MaxEntries, 0))
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Cache{
		store:      store,
		defaultTTL: max(cfg.DefaultTTL, 0),
		maxTTL:     max(cfg.MaxTTL, 0),
		server:     cfg.Server,
		private:    cfg.Private,
		principal:  cfg.Principal,
		log:        log,
	}
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

// A Cache is one client's response cache: the store and how to name
// entries. A nil *Cache caches nothing (its Middleware still hides the
// hints from go-sdk).
type Cache struct {
	store      Store
	defaultTTL time.Duration
	maxTTL     time.Duration
	server     string // the server's identity: a hash, or a random id
	private    string // the partition of private entries
	principal  func(context.Context) (string, map[string]string)
	log        *slog.Logger

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

// maxResourceGens bounds Cache.resGens; past it the map is cleared
// and every read in flight counts as invalidated.
const maxResourceGens = 1024

// cacheGen is a snapshot of the generation of one request's entry.
type cacheGen struct {
	method   uint64 // the method's generation
	resource uint64 // for resources/read: the last update that covers the URI
}

// generation returns the current generation of cr's entry.
func (rc *Cache) generation(cr cacheRequest) cacheGen {
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
func (rc *Cache) bump(methods ...string) {
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
func (rc *Cache) bumpResource(uri string) {
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

// methodPrefix is the start of every key of method on this server.
func (rc *Cache) methodPrefix(method string) string {
	return cacheKeyVersion + "\x00" + rc.server + "\x00" + method + "\x00"
}

// key names the entry of method for param (a cursor, a URI or a protocol
// version) in partition.
func (rc *Cache) key(method, param, partition string) string {
	return rc.methodPrefix(method) + strconv.Quote(param) + "\x00" + partition
}

// ttl decides how long a result with the hints ttlMs and scope is kept,
// and whether it is private. Zero means it is not cached. identity says
// the request was made for a principal (or with identity headers): a
// result without a scope is then private, since a server that answers
// each user differently may not say so, and only an explicit "public"
// shares it.
func (rc *Cache) ttl(ttlMs int, scope string, identity bool) (time.Duration, bool) {
	var d time.Duration
	private := scope != "public" && (scope != "" || identity)
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
func (rc *Cache) invalidate(ctx context.Context, methods ...string) {
	rc.bump(methods...)
	for _, m := range methods {
		rc.store.DeletePrefix(ctx, rc.methodPrefix(m))
	}
}

// invalidateResource drops the cached reads of uri and of the resources
// under it.
func (rc *Cache) invalidateResource(ctx context.Context, uri string) {
	rc.bumpResource(uri)
	rc.store.DeletePrefix(ctx, rc.methodPrefix(methodReadResource)+strings.TrimSuffix(strconv.Quote(uri), `"`))
}

// ForgetDiscover drops this server's cached server/discover results, so
// that the next connect asks the server: the connection was lost without
// Close. It does nothing on a nil Cache.
func (rc *Cache) ForgetDiscover(ctx context.Context) {
	if rc != nil {
		rc.invalidate(ctx, methodDiscover)
	}
}

// AddHandlers makes the server's change notifications invalidate the
// cache before the handlers in o see them. Having the handlers also makes
// go-sdk subscribe to the notifications on 2026-07-28 connections. It does
// nothing on a nil Cache.
func (rc *Cache) AddHandlers(o *mcp.ClientOptions) {
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
