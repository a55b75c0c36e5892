package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// The tools as a model sees them: per provider profile, the schema sent,
// what the profile changed and why, and the catalog's estimated token
// cost; and the tool-search pair that stands for a large catalog.

// profiledTool is one tool under one profile.
type profiledTool struct {
	Name      string                 `json:"name"`
	Server    string                 `json:"server"`
	Schema    json.RawMessage        `json:"schema,omitempty"`
	Changed   bool                   `json:"changed"`
	Strict    bool                   `json:"strict,omitempty"`
	NotStrict string                 `json:"notStrict,omitempty"`
	Changes   []schemaprofile.Change `json:"changes"`
	Tokens    int                    `json:"tokens"`
	Error     string                 `json:"error,omitempty"`
}

// profileTotal is the catalog under one profile.
type profileTotal struct {
	Profile schemaprofile.Profile `json:"profile"`
	Tokens  int                   `json:"tokens"`
	Changed int                   `json:"changed"`
	Strict  int                   `json:"strict"`
	Failed  int                   `json:"failed"`
}

// profile applies p to every tool.
func profile(p schemaprofile.Profile, tools []*mcpadapter.Tool) ([]profiledTool, profileTotal) {
	out := make([]profiledTool, 0, len(tools))
	total := profileTotal{Profile: p}
	for _, t := range tools {
		pt := profiledTool{Name: t.Name, Server: t.Server, Changes: []schemaprofile.Change{}}
		sent := *t
		r, err := schemaprofile.Apply(p, t.InputSchema)
		if err != nil {
			pt.Error = err.Error()
			total.Failed++
		} else {
			pt.Schema, pt.Changed, pt.Strict, pt.NotStrict = r.Schema, r.Changed(), r.Strict, r.NotStrict
			if r.Changes != nil {
				pt.Changes = r.Changes
			}
			sent.InputSchema = r.Schema
			if pt.Changed {
				total.Changed++
			}
			if pt.Strict {
				total.Strict++
			}
		}
		pt.Tokens = mcpadapter.EstimateTokens([]*mcpadapter.Tool{&sent})
		total.Tokens += pt.Tokens
		out = append(out, pt)
	}
	return out, total
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	p := schemaprofile.Profile(r.URL.Query().Get("profile"))
	if p == "" {
		p = schemaprofile.Verbatim
	}
	known := false
	for _, q := range schemaprofile.Profiles() {
		known = known || q == p
	}
	if !known {
		apiError(w, http.StatusBadRequest, fmt.Errorf("no profile %q", p))
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	tools := s.state.allTools(ctx)
	var totals []profileTotal
	var shown []profiledTool
	for _, q := range schemaprofile.Profiles() {
		pts, total := profile(q, tools)
		totals = append(totals, total)
		if q == p {
			shown = pts
		}
	}
	pair, pairErr := s.pair.get(ctx, s)
	out := map[string]any{"profile": p, "tools": shown, "totals": totals, "threshold": mcpadapter.DefaultToolSearchThreshold}
	if pairErr != nil {
		out["pairError"] = errorView(pairErr)
	} else {
		out["pair"] = pair
		out["pairTokens"] = mcpadapter.EstimateTokens(pair.tools)
	}
	writeJSON(w, out)
}

// searchPair holds the definitions of the tool-search pair, made once
// by an adapter with tool search always on.
type searchPair struct {
	mu    sync.Mutex
	tools []*mcpadapter.Tool
	Defs  []toolView `json:"tools"`
}

func (sp *searchPair) get(ctx context.Context, s *Server) (*searchPair, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.tools != nil {
		return sp, nil
	}
	ads := s.opts.Session.Adapters()
	if len(ads) == 0 {
		return nil, fmt.Errorf("no servers")
	}
	a, err := mcpadapter.New(ads[0].Group(), &mcpadapter.Options{ToolSearch: &mcpadapter.ToolSearch{Threshold: -1}, SkipUnavailable: true})
	if err != nil {
		return nil, err
	}
	tools, err := a.Tools(ctx)
	if err != nil {
		return nil, err
	}
	sp.tools = tools
	for _, t := range tools {
		sp.Defs = append(sp.Defs, toolView{Name: t.Name, OriginalName: t.OriginalName, Server: t.Server, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema})
	}
	return sp, nil
}

// searchHit is one tool a query found.
type searchHit struct {
	Name        string          `json:"name"`
	Server      string          `json:"server"`
	Score       float64         `json:"score"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.K <= 0 || req.K > 50 {
		req.K = 5
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	hits := mcpadapter.SearchTools(s.state.allTools(ctx), req.Query, req.K)
	out := make([]searchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, searchHit{Name: h.Tool.Name, Server: h.Tool.Server, Score: h.Score, Description: h.Tool.Description, InputSchema: h.Tool.InputSchema})
	}
	writeJSON(w, map[string]any{"hits": out})
}
