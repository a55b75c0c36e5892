package searchpair

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/toolsearch"
)

// Catalog is one principal's catalog of tools of type T: the tools by the
// name a model calls them, their index, the tools removed since the last
// listing, and when it was listed and at which version of the servers'
// tool lists. Hold Mu while listing, so that one listing serves all.
type Catalog[T any] struct {
	Mu      sync.Mutex
	Tools   map[string]T
	Removed map[string]string // tool name → server, of tools gone since the last listing
	Index   *toolsearch.Index
	Size    int // the catalog's estimated tokens
	at      time.Time
	version uint64
}

// Set rebuilds the catalog from a fresh listing: tools, by the names
// name gives them, the documents docs the index knows of each, the
// servers' version of their tool lists, and the listing's size. Call it
// with Mu held.
func (c *Catalog[T]) Set(tools []T, name, server func(T) string, docs []toolsearch.Doc, version uint64, size int) {
	byName := make(map[string]T, len(tools))
	for _, t := range tools {
		byName[name(t)] = t
	}
	c.Removed = Removed(c.Tools, byName, c.Removed, server)
	c.Tools, c.Index = byName, toolsearch.New(docs)
	c.at, c.version, c.Size = time.Now(), version, size
}

// Stale reports whether the catalog must be listed again: it never was,
// the servers' tool lists changed since (version), or it is older than
// maxAge. Call it with Mu held.
func (c *Catalog[T]) Stale(version uint64, maxAge time.Duration) bool {
	return c.Index == nil || version != c.version || time.Since(c.at) > maxAge
}

// ParseSearch reads search_tools' arguments: the query, and the number
// of tools to return (the model's, else def, else DefaultLimit; at most
// MaxLimit). A problem is the text of the error result the model reads.
func ParseSearch(args json.RawMessage, def int) (query string, limit int, problem string) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := DecodeObject(args, &in); err != nil {
		return "", 0, fmt.Sprintf("search_tools: %v; send {\"query\": \"what you want to do\"}", err)
	}
	if strings.TrimSpace(in.Query) == "" {
		return "", 0, `search_tools: "query" is empty; say in a few words what you want to do`
	}
	limit = in.Limit
	if limit <= 0 {
		if limit = def; limit <= 0 {
			limit = DefaultLimit
		}
	}
	return in.Query, min(limit, MaxLimit), ""
}

// Search is search_tools' answer to query from c: the best limit tools,
// each as match describes it, or NoMatch naming the catalog's servers.
// Call it with the catalog's tools and index taken under Mu.
func Search[T any](tools map[string]T, ix *toolsearch.Index, query string, limit int, match func(T) Match, server func(T) string) (string, error) {
	hits := ix.Search(query, limit)
	if len(hits) == 0 {
		servers := make([]string, 0, len(tools))
		for _, t := range tools {
			servers = append(servers, server(t))
		}
		return NoMatch(query, len(tools), servers), nil
	}
	matches := make([]Match, len(hits))
	for i, h := range hits {
		matches[i] = match(tools[h.ID])
	}
	return Answer(matches, hits[0].Fits)
}

// ParseCall reads call_tool's arguments: the name of the tool to call
// and its arguments. A problem is the text of the error result the
// model reads; self names the pair's own tools, which call_tool does not
// call.
func ParseCall(args json.RawMessage, self ...string) (name string, arguments json.RawMessage, problem string) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := DecodeObject(args, &in); err != nil {
		return "", nil, fmt.Sprintf("call_tool: %v; send {\"name\": \"a tool from search_tools\", \"arguments\": {...}}", err)
	}
	for _, s := range self {
		if in.Name == s {
			return "", nil, fmt.Sprintf("call_tool: call %s directly, not through call_tool", in.Name)
		}
	}
	return in.Name, in.Arguments, ""
}

// Resolve finds the tool call_tool names in a catalog's tools (removed:
// those gone since the last listing; ix: their index), or says why not:
// a problem is the text of the error result the model reads.
func Resolve[T any](tools map[string]T, removed map[string]string, ix *toolsearch.Index, name string, arguments json.RawMessage) (t T, problem string) {
	t, ok := tools[name]
	switch {
	case !ok:
		if server, gone := removed[name]; gone {
			return t, fmt.Sprintf("Tool %q was removed by server %q; use search_tools to find another.", name, server)
		}
		var near []string
		for _, h := range ix.Search(name, 3) {
			near = append(near, h.ID)
		}
		return t, Unknown(name, near)
	case NotObject(arguments):
		return t, fmt.Sprintf("call_tool: \"arguments\" for %q must be a JSON object, following its input schema", name)
	}
	return t, ""
}
