package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/spf13/cobra"
)

func skillsCommand(a *cmdline.App) *cobra.Command {
	var load string
	cmd := &cobra.Command{
		Use:   "skills [TARGET | -- COMMAND ARGS...]",
		Short: "List the skills servers offer (MCP skills extension), or load one",
		Long: `List the skills of the servers that offer them (the skills extension, SEP-2640): name, server,
number of files and description. Listing reads no skill file. --load NAME reads that skill's
SKILL.md, checks its size, digest and frontmatter against the listing, and prints it; a file that
fails a check is an error and is not printed.`,
		Example: `  mcpadapter skills https://example.com/mcp
  mcpadapter skills --config .mcp.json --load pdf-processing`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := a.Open(ctx, cmd, args, cmdline.OpenOptions{SkipUnavailable: true})
			if err != nil {
				return err
			}
			defer s.Close()
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			if load == "" {
				fmt.Fprintln(w, "NAME\tSERVER\tFILES\tDESCRIPTION")
			}
			var errs []error
			found := false
			for _, si := range info.Servers {
				c, err := s.Client(si.Name)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				skills, err := c.Skills(ctx)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				for _, sk := range skills {
					if load == "" {
						fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", sk.Name, si.Name, len(sk.Files), cmdline.FirstLine(sk.Description, 70))
						continue
					}
					if sk.Name != load || found {
						continue
					}
					found = true
					loaded, err := c.Skill(ctx, load)
					if err != nil {
						return err
					}
					fmt.Fprint(a.Stdout, loaded.Content)
				}
			}
			if load != "" && !found {
				errs = append(errs, fmt.Errorf("no server offers a skill named %q", load))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			return errors.Join(errs...)
		},
	}
	cmd.Flags().StringVar(&load, "load", "", "read, check and print the skill with this name")
	return cmd
}
