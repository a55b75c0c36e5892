package testserver

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources and the template added by Options.Resources. Reading one
// returns the text "<uri> read <n>", n counting that URI's reads, so a
// test can tell a cached read from a fresh one. Clients may subscribe to
// them; mcp.Server.ResourceUpdated notifies them.
const (
	ResourceA        = "test://cache/a"
	ResourceB        = "test://cache/b"
	ResourceTemplate = "test://cache/{name}"
)

// addResources adds the resources, template and prompt of Options.Resources.
func addResources(srv *mcp.Server, st *State) {
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		n := st.recordRead(uri)
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: uri, MIMEType: "text/plain", Text: fmt.Sprintf("%s read %d", uri, n)},
		}}, nil
	}
	for _, uri := range []string{ResourceA, ResourceB} {
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri[len("test://cache/"):], MIMEType: "text/plain"}, read)
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: ResourceTemplate, Name: "cached", MIMEType: "text/plain"}, read)
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Says hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
}

// setCacheOptions sets the caching hints of opts in sopts, and accepts
// resource subscriptions when opts has resources.
func setCacheOptions(opts Options, sopts *mcp.ServerOptions) {
	if opts.Resources {
		sopts.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
		sopts.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	}
	if opts.CacheTTLMs == 0 && opts.CacheScope == "" {
		return
	}
	ttl, scope := opts.CacheTTLMs, opts.CacheScope
	sopts.SetCacheable = func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
		c.TTLMs = ttl
		if scope != "" {
			c.CacheScope = scope
		}
	}
}

// noHintsMiddleware blanks the caching hints of every result that has them.
func noHintsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		var c *mcp.Cacheable
		switch r := res.(type) {
		case *mcp.DiscoverResult:
			c = &r.Cacheable
		case *mcp.ListToolsResult:
			c = &r.Cacheable
		case *mcp.ListPromptsResult:
			c = &r.Cacheable
		case *mcp.ListResourcesResult:
			c = &r.Cacheable
		case *mcp.ListResourceTemplatesResult:
			c = &r.Cacheable
		case *mcp.ReadResourceResult:
			c = &r.Cacheable
		}
		if c != nil {
			*c = mcp.Cacheable{}
		}
		return res, err
	}
}

// RequireBearer returns a handler that answers 401 to every request whose
// Authorization header is not "Bearer " followed by one of tokens, and
// passes the others to h.
func RequireBearer(h http.Handler, tokens ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		if len(auth) < len("Bearer ") || !slices.Contains(tokens, auth[len("Bearer "):]) {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
