package cmdline

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Reference renders the command tree under root as a Markdown reference:
// each command's usage, description, examples and flags, the global flags
// once, under root. The docs' CLI reference pages are made by it (the
// TestCLIReference tests check that they match, and -update rewrites them),
// so they cannot drift from the commands. intro follows the title.
func Reference(root *cobra.Command, intro string) string {
	root.InitDefaultCompletionCmd()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s command reference\n\n", root.Name())
	fmt.Fprintf(&b, "%s\n\n", intro)
	b.WriteString("Made from the command definitions (`go test -run TestCLIReference -update` in the command's directory\nrewrites it); do not edit.\n\n")
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range cmds[1:] {
		fmt.Fprintf(&b, "- [%s](#%s): %s\n", c.CommandPath(), anchor(c.CommandPath()), c.Short)
	}
	b.WriteString("\n")
	for _, c := range cmds {
		writeCommand(&b, c, c == root)
	}
	return b.String()
}

func writeCommand(b *strings.Builder, c *cobra.Command, isRoot bool) {
	level := "##"
	if strings.Count(c.CommandPath(), " ") > 1 {
		level = "###"
	}
	fmt.Fprintf(b, "%s %s\n\n", level, c.CommandPath())
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(b, "%s\n\n", strings.TrimSpace(desc))
	fmt.Fprintf(b, "```text\n%s\n```\n\n", strings.TrimSpace(usageLine(c)))
	if c.Example != "" {
		fmt.Fprintf(b, "Examples:\n\n```text\n%s\n```\n\n", trimIndent(c.Example))
	}
	if fs := c.NonInheritedFlags(); hasFlags(fs) {
		title := "Flags"
		if isRoot {
			title = "Global flags (every command takes them)"
		}
		fmt.Fprintf(b, "%s:\n\n```text\n%s```\n\n", title, fs.FlagUsagesWrapped(100))
	}
}

func usageLine(c *cobra.Command) string {
	line := c.UseLine()
	if c.HasAvailableSubCommands() && c.Runnable() {
		return line + "\n" + c.CommandPath() + " [command]"
	}
	if c.HasAvailableSubCommands() {
		return c.CommandPath() + " [command]"
	}
	return line
}

func hasFlags(fs *pflag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			n++
		}
	})
	if n == 0 {
		return false
	}
	if h := fs.Lookup("help"); h != nil {
		h.Hidden = true
	}
	return true
}

func anchor(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), " ", "-")
}

func trimIndent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "\n")
}
