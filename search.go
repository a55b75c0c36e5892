package mcpadapter

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/searchpair"
	"github.com/mcpadapter/mcpadapter/toolsearch"
)

// DefaultToolSearchThreshold is the estimated tokens of tool definitions
// (see EstimateTokens) above which an Adapter with Options.ToolSearch
// hands the model the search pair instead of every tool: about 50 tools
// with ordinary descriptions and schemas, the size at which model vendors
// report that tool choice degrades and tool search starts to pay off.
const DefaultToolSearchThreshold = 10000

// DefaultToolSearchMaxAge is how long the search catalog serves a listing
// before listing again, when no change notification came first.
const DefaultToolSearchMaxAge = time.Minute

// The names of the tool-search pair.
const (
	SearchToolsName = "search_tools"
	CallToolName    = "call_tool"
)

// ToolSearch configures tool search for large catalogs (Options.ToolSearch).
//
// Above Threshold, Adapter.Tools returns two tools instead of the
// catalog: search_tools (a query → the best matching tools, with their
// descriptions and input schemas) and call_tool (a tool's name and
// arguments → its result). Their definitions never change, so a
// provider's prompt cache stays valid from turn to turn; the catalog
// behind them follows the servers (see MaxAge).
type ToolSearch struct {
	// Threshold is the estimated tokens of all tool definitions above
	// which the pair replaces them; zero means
	// DefaultToolSearchThreshold, a negative value always.
	Threshold int
	// Limit is how many tools search_tools returns when the model does
	// not say; zero means 5. The model may ask for up to 20.
	Limit int
	// MaxAge is how long a listing serves the catalog before the servers
	// are listed again; zero means DefaultToolSearchMaxAge. A server's
	// change notification (Options.WatchTools) makes the next search or
	// call list again at once, and Tools always lists.
	MaxAge time.Duration
}

// EstimateTokens estimates the tokens tools' definitions take in a model's
// prompt: a quarter of the bytes of each name, description and input
// schema (the usual rule of thumb for English and JSON under BPE
// tokenizers), plus 8 per tool for the framing a provider adds. It is an
// estimate, for thresholds and comparisons, not any provider's count.
func EstimateTokens(tools []*Tool) int {
	n := 0
	for _, t := range tools {
		n += 8 + (len(t.Name)+len(t.Description)+len(t.InputSchema)+3)/4
	}
	return n
}

// A SearchHit is a tool the catalog search found.
type SearchHit struct {
	// Tool is the tool, named as the model would call it.
	Tool *Tool
	// Score is its score; higher matches better, within one query.
	Score float64
	// Fits reports whether the tool plausibly does what the query asks
	// (toolsearch.MinFit): false for the best of the tools when none
	// does, as for "book a flight" in a catalog of developer tools.
	Fits bool
}

// localTool is a tool answered in this process: the search pair.
type localTool interface {
	call(context.Context, json.RawMessage, *CallOptions) (*Result, error)
	resume(context.Context, *PendingCall, *elicitation.Resume) (*Result, error)
}

// toolSearch holds an adapter's catalogs: one per principal (and
// identity headers, see CallIdentity), since each may be shown other tools
// under the same names; at most DefaultMaxSessions, the one searched least
// recently is forgotten first.
type toolSearch struct {
	a        *Adapter
	opts     ToolSearch
	catalogs searchpair.Partitions[searchpair.Catalog[*Tool]] // by partitionOf; Max set by New
}

// catalogOf returns the catalog of ctx's principal.
func (s *toolSearch) catalogOf(ctx context.Context) *searchpair.Catalog[*Tool] {
	return s.catalogs.Of(partitionOf(ctx))
}

// setCatalog rebuilds c from a fresh listing. Call with c.Mu held.
func setCatalog(c *searchpair.Catalog[*Tool], tools []*Tool, version uint64) {
	c.Set(tools, func(t *Tool) string { return t.Name }, func(t *Tool) string { return t.Server }, searchDocs(tools), version, EstimateTokens(tools))
}

// searchDocs returns what the index knows of each tool.
func searchDocs(tools []*Tool) []toolsearch.Doc {
	docs := make([]toolsearch.Doc, 0, len(tools))
	for _, t := range tools {
		docs = append(docs, toolsearch.Doc{ID: t.Name, Name: t.Name, Title: t.Title, Description: t.Description, Args: argDocs(t.InputSchema)})
	}
	return docs
}

// SearchTools ranks tools against query as Adapter.Search does and
// returns the best k (k <= 0: all that match), for a list of tools you
// hold (the tools of several adapters, a filtered list). It indexes the
// tools on every call; Adapter.Search keeps its index.
func SearchTools(tools []*Tool, query string, k int) []SearchHit {
	docs := searchDocs(tools)
	for i := range docs {
		docs[i].ID = strconv.Itoa(i) // names may repeat in a list you hold
	}
	hits := toolsearch.New(docs).Search(query, k)
	out := make([]SearchHit, len(hits))
	for i, h := range hits {
		n, _ := strconv.Atoi(h.ID)
		out[i] = SearchHit{Tool: tools[n], Score: h.Score, Fits: h.Fits}
	}
	return out
}

// argDocs returns the names and descriptions of a schema's top-level
// properties.
func argDocs(schema json.RawMessage) []toolsearch.Arg { return toolsearch.SchemaArgs(schema) }

// current returns the catalog of ctx's principal, listing the servers
// again (for that principal) when it is older than MaxAge or a server
// announced a change. When that listing fails, the catalog it has is used
// if there is one.
func (s *toolSearch) current(ctx context.Context) (map[string]*Tool, map[string]string, *toolsearch.Index, error) {
	c := s.catalogOf(ctx)
	c.Mu.Lock()
	defer c.Mu.Unlock()
	maxAge := s.opts.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultToolSearchMaxAge
	}
	if v := s.a.ToolsVersion(); c.Stale(v, maxAge) {
		tools, err := s.a.list(ctx)
		switch {
		case err == nil:
			setCatalog(c, modelTools(tools), v)
		case c.Index == nil:
			return nil, nil, nil, err
		default:
			s.a.group.clients[0].log.Warn("listing tools for the search catalog failed; searching the last listing", "err", err)
		}
	}
	return c.Tools, c.Removed, c.Index, nil
}

// offer takes a fresh listing made with ctx: it becomes the catalog of
// ctx's principal, and the pair is returned instead when the listing is
// over the threshold.
func (s *toolSearch) offer(ctx context.Context, tools []*Tool) []*Tool {
	c := s.catalogOf(ctx)
	c.Mu.Lock()
	setCatalog(c, modelTools(tools), s.a.ToolsVersion())
	size := c.Size
	c.Mu.Unlock()
	threshold := s.opts.Threshold
	if threshold == 0 {
		threshold = DefaultToolSearchThreshold
	}
	if threshold > 0 && size <= threshold {
		return tools
	}
	// The tools for apps only (Options.AppTools) stay beside the pair,
	// for the host: the pair is the model's.
	pair := searchPair(s)
	for _, t := range tools {
		if !t.ModelVisible() {
			pair = append(pair, t)
		}
	}
	return pair
}

// modelTools returns the tools a model may see: all but those for apps
// only (Options.AppTools).
func modelTools(tools []*Tool) []*Tool {
	out := make([]*Tool, 0, len(tools))
	for _, t := range tools {
		if t.ModelVisible() {
			out = append(out, t)
		}
	}
	return out
}

// Search ranks the adapter's tools against query and returns the best k
// (k <= 0: all that match), listing the servers first if the catalog is
// older than ToolSearch.MaxAge or a server announced a change. It works
// with or without Options.ToolSearch (without it, the defaults).
func (a *Adapter) Search(ctx context.Context, query string, k int) ([]SearchHit, error) {
	tools, _, ix, err := a.search.current(ctx)
	if err != nil {
		return nil, err
	}
	hits := ix.Search(query, k)
	out := make([]SearchHit, len(hits))
	for i, h := range hits {
		out[i] = SearchHit{Tool: tools[h.ID], Score: h.Score, Fits: h.Fits}
	}
	return out, nil
}
