package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
)

// writeSearch prints the tools that best match query (tools --search).
func writeSearch(a *cmdline.App, tools []*mcpadapter.Tool, query string, limit int, asJSON bool) error {
	if strings.TrimSpace(query) == "" {
		return errors.New(`--search: the query is empty; give a few words, e.g. --search "open an issue"`)
	}
	if limit < 0 {
		return fmt.Errorf("--limit %d: want 0 (all matches) or more", limit)
	}
	hits := mcpadapter.SearchTools(tools, query, limit)
	if asJSON {
		type jsonHit struct {
			Name        string          `json:"name"`
			Server      string          `json:"server"`
			Score       float64         `json:"score"`
			Fits        bool            `json:"fits"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		out := make([]jsonHit, 0, len(hits))
		for _, h := range hits {
			out = append(out, jsonHit{Name: h.Tool.Name, Server: h.Tool.Server, Score: h.Score, Fits: h.Fits, Description: h.Tool.Description, InputSchema: h.Tool.InputSchema})
		}
		enc := json.NewEncoder(a.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tokens := mcpadapter.EstimateTokens(tools)
	mode := "under"
	if tokens > mcpadapter.DefaultToolSearchThreshold {
		mode = "over"
	}
	fmt.Fprintf(a.Stdout, "%d tools indexed, about %d tokens of definitions: %s the default tool-search threshold (%d)\n",
		len(tools), tokens, mode, mcpadapter.DefaultToolSearchThreshold)
	if len(hits) == 0 {
		fmt.Fprintf(a.Stdout, "no tool matches %q\n", query)
		return nil
	}
	if !hits[0].Fits {
		fmt.Fprintf(a.Stdout, "no tool fits %q well; the closest:\n", query)
	}
	w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RANK\tSCORE\tNAME\tSERVER\tDESCRIPTION")
	for i, h := range hits {
		fmt.Fprintf(w, "%d\t%.2f\t%s\t%s\t%s\n", i+1, h.Score, h.Tool.Name, h.Tool.Server, cmdline.FirstLine(h.Tool.Description, 60))
	}
	return w.Flush()
}
