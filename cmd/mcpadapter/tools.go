package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpadapter/mcpadapter"
	"github.com/spf13/cobra"
)

func (a *app) toolsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tools [TARGET | -- COMMAND ARGS...]",
		Short: "List the tools of one or more servers, as an agent sees them",
		Long: `List the combined tools of the target or config: the name a model sees (prefixed with the
server's name when there are several servers), the server, its protocol era, and the first line
of the description. --json prints everything, input and output schemas included.`,
		Example: `  mcpadapter tools
  mcpadapter tools https://example.com/mcp
  mcpadapter tools --config ~/.cursor/mcp.json --json
  mcpadapter tools -- npx -y @modelcontextprotocol/server-everything`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.open(ctx, cmd, args, openOptions{adapter: a.skipUnavailable()})
			if err != nil {
				return err
			}
			defer s.Close()
			tools, err := s.Tools(ctx)
			if err != nil {
				return err
			}
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			eras := map[string]string{}
			for _, si := range info.Servers {
				eras[si.Name] = fmt.Sprintf("%s (%s)", si.ProtocolVersion, si.Era)
			}
			if asJSON {
				return writeToolsJSON(a, tools, eras)
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tSERVER\tPROTOCOL\tDESCRIPTION")
			for _, t := range tools {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.Server, eras[t.Server], firstLine(t.Description, 70))
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the full tool list as JSON (schemas included)")
	return cmd
}

// skipUnavailable keeps a command going when some servers of a config are
// down, saying which.
func (a *app) skipUnavailable() []mcpadapter.Option {
	return []mcpadapter.Option{mcpadapter.SkipUnavailable(func(f mcpadapter.ServerFailure) {
		msg, _, _ := strings.Cut(f.Err.Error(), "\n")
		fmt.Fprintf(a.stderr, "mcpadapter: server %s is unavailable, its tools are left out: %s\n", f.Server, strings.TrimPrefix(msg, "mcpadapter: "))
	})}
}

func writeToolsJSON(a *app, tools []*mcpadapter.Tool, eras map[string]string) error {
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
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// firstLine returns the first line of s, cut to n runes.
func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
