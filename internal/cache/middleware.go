package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
			cr.param, cr.ok = v, wire.DiscoverEra(v)
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
	cr.ok = ir != nil && wire.DiscoverEra(ir.ProtocolVersion)
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

// Middleware is the response cache, as go-sdk sending middleware. Install
// it on every client, cache or not (a nil Cache): go-sdk v1.8.0 keeps list
// and read results of 2026-07-28 sessions for their ttlMs by itself, with
// no way to turn that off or to refresh, so the middleware hides the hints
// from go-sdk (ttlMs becomes 0 in the results callers see) and does the
// caching itself when there is a cache.
func (rc *Cache) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case methodDiscover, methodListTools, methodListPrompts, methodListResources, methodListTemplates, methodReadResource:
		default:
			return next(ctx, method, req)
		}
		cr := cacheRequest{}
		if rc != nil {
			cr = cacheRequestOf(method, req)
		}
		mode := ModeOf(ctx)
		if cr.ok && mode == Use {
			if res, ok := rc.lookup(ctx, cr); ok {
				return res, nil
			}
		}
		var gen cacheGen
		if cr.ok && mode != Bypass {
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
		if cr.ok && mode != Bypass {
			rc.put(ctx, cr, gen, res, ttlMs, scope, complete)
		}
		return res, nil
	}
}

// lookup returns a fresh cached result for cr: the caller's private
// entry, else the public one. Each hit is decoded anew, so callers (and
// go-sdk, which edits results) never share one.
func (rc *Cache) lookup(ctx context.Context, cr cacheRequest) (mcp.Result, bool) {
	now := time.Now()
	for _, part := range []string{rc.partition(ctx), rc.publicPart(ctx)} {
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
			rc.log.Warn("dropping an unreadable cache entry", "method", cr.method, "error", err)
			rc.store.Delete(ctx, key)
			continue
		}
		if hints, _ := hintsOf(res); hints != nil && cr.method != methodDiscover {
			hints.TTLMs = 0
		}
		if cr.method == methodListTools {
			// Tool schemas are handed out as the server wrote them, to
			// the observer of the request's connection (its principal's).
			wire.ObserverFrom(ctx).KeepSchemas(e.Value)
		}
		rc.log.Debug("served from the cache", "method", cr.method, "param", wire.RedactURLSecrets(cr.param), "scope", part)
		return res, true
	}
	return nil, false
}

// put stores res, the server's answer to cr with the hints ttlMs
// and scope, if they allow it and the entry's generation is still gen (the
// one read before the request was sent). An answer that may not be cached
// removes the entries it replaces.
func (rc *Cache) put(ctx context.Context, cr cacheRequest, gen cacheGen, res mcp.Result, ttlMs int, scope string, complete bool) {
	if !complete {
		return
	}
	ttl, private := rc.ttl(ttlMs, scope, rc.hasIdentity(ctx))
	if ttl <= 0 {
		rc.store.Delete(ctx, rc.key(cr.method, cr.param, rc.partition(ctx)))
		rc.store.Delete(ctx, rc.key(cr.method, cr.param, rc.publicPart(ctx)))
		return
	}
	if rc.generation(cr) != gen {
		rc.log.Debug("result not cached: invalidated while in flight", "method", cr.method, "param", wire.RedactURLSecrets(cr.param))
		return
	}
	value, err := rc.encode(wire.ObserverFrom(ctx), cr.method, res)
	if err != nil {
		rc.log.Debug("result not cached", "method", cr.method, "error", err)
		return
	}
	part := rc.publicPart(ctx)
	if private {
		part = rc.partition(ctx)
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
	rc.store.Set(ctx, key, Entry{Value: value, Expires: expires})
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

// listPagesKey carries a listing's *listPages from the caller that lists
// all pages (WithListPages), through go-sdk (which passes only the context
// on to its middleware), to Middleware.
type listPagesKey struct{}

// WithListPages returns a context for the requests of one paginated
// listing: its continuation pages are kept no longer than its first.
func WithListPages(ctx context.Context) context.Context {
	return context.WithValue(ctx, listPagesKey{}, &listPages{})
}

func listPagesOf(ctx context.Context) *listPages {
	lp, _ := ctx.Value(listPagesKey{}).(*listPages)
	return lp
}

// encode encodes res. A tool list is stored with the schemas as the
// server sent them, which go-sdk's decoding does not keep, as obs (the
// observer of the connection that listed them) saw them; a nil obs keeps
// go-sdk's encoding.
func (rc *Cache) encode(obs *wire.Observer, method string, res mcp.Result) ([]byte, error) {
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
		rawIn, rawOut, ok := obs.RawSchemas(name)
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
