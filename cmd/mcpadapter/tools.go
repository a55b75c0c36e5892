package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/spf13/cobra"
)

func toolsCommand(a *cmdline.App) *cobra.Command {
	var asJSON bool
	var search string
	var limit int
	cmd := &cobra.Command{
		Use:   "tools [TARGET | -- COMMAND ARGS...]",
		Short: "List the tools of one or more servers, as an agent sees them",
		Long: `List the combined tools of the target or config: the name a model sees (prefixed with the
server's name when there are several servers, or with its "prefix"; renamed by its "tools"
transforms), the server, its protocol era, and the first line of the description. A server that
offers no tools is listed as "(none)": check its URL or command, its credentials and its
includeTools. --json prints everything, input and output schemas included.

--search QUERY ranks the tools against the query with the index an agent's search_tools uses
(Options.ToolSearch: BM25 over names, titles, descriptions and argument names) and prints the
best --limit matches with their scores, after a line saying how many tools and estimated tokens
of definitions the catalog has and whether an agent would be given the search pair.`,
		Example: `  mcpadapter tools
  mcpadapter tools https://example.com/mcp
  mcpadapter tools --config ~/.cursor/mcp.json --json
  mcpadapter tools -- npx -y @modelcontextprotocol/server-everything
  mcpadapter tools --config mcp.json --search "open an issue" --limit 3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.Open(ctx, cmd, args, cmdline.OpenOptions{SkipUnavailable: true})
			if err != nil {
				return err
			}
			defer s.Close()
			tools, err := s.Tools(ctx)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("search") {
				return writeSearch(a, tools, search, limit, asJSON)
			}
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			eras := map[string]string{}
			for _, si := range info.Servers {
				eras[si.Name] = fmt.Sprintf("%s (%s)", si.ProtocolVersion, si.Era)
			}
			empty := serversWithoutTools(info, tools)
			if asJSON {
				for _, name := range empty {
					fmt.Fprintf(a.Stderr, "mcpadapter: server %s offers no tools: %s\n", name, noToolsAdvice)
				}
				return writeToolsJSON(a, tools, eras)
			}
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSERVER\tPROTOCOL\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.Server, eras[t.Server], cmdline.FirstLine(t.Description, 70))
			}
			for _, name := range empty {
				fmt.Fprintf(w, "(none)\t%s\t%s\tno tools: %s\n", name, eras[name], noToolsAdvice)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the full tool list as JSON (schemas included)")
	cmd.Flags().StringVar(&search, "search", "", "rank the tools against this query and print the best matches with their scores")
	cmd.Flags().IntVar(&limit, "limit", 5, "with --search, how many matches to print (0: all that match)")
	return cmd
}

// noToolsAdvice says what to check about a server that offers no tools.
const noToolsAdvice = "check its URL or command, its credentials and its includeTools"

// serversWithoutTools returns the connected servers none of whose tools
// are listed, in the order of info.
func serversWithoutTools(info *session.Info, tools []*mcpadapter.Tool) []string {
	has := map[string]bool{}
	for _, t := range tools {
		has[t.Server] = true
	}
	var out []string
	for _, si := range info.Servers {
		if !has[si.Name] {
			out = append(out, si.Name)
		}
	}
	return out
}

func writeToolsJSON(a *cmdline.App, tools []*mcpadapter.Tool, eras map[string]string) error {
	type jsonTool struct {
		Name         string          `json:"name"`
		OriginalName string          `json:"original_name"`
		Server       string          `json:"server"`
		Protocol     string          `json:"protocol"`
		Title        string          `json:"title,omitempty"`
		Description  string          `json:"description,omitempty"`
		InputSchema  json.RawMessage `json:"input_schema"`
		OutputSchema json.RawMessage `json:"output_schema,omitempty"`
		Annotations  any             `json:"annotations,omitempty"`
		Meta         map[string]any  `json:"_meta,omitempty"`
	}
	out := make([]jsonTool, 0, len(tools))
	for _, t := range tools {
		jt := jsonTool{Name: t.Name, OriginalName: t.OriginalName, Server: t.Server, Protocol: eras[t.Server],
			Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, Meta: t.Meta}
		if t.Annotations != nil {
			jt.Annotations = t.Annotations
		}
		out = append(out, jt)
	}
	enc := json.NewEncoder(a.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
