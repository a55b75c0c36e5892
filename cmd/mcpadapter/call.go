package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/term"
	"github.com/spf13/cobra"
)

func callCommand(a *cmdline.App) *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call TOOL [JSON] [--arg key=value ...] [-- COMMAND ARGS...]",
		Short: "Call one tool and print what it returns",
		Long: `Call a tool by the name "mcpadapter tools" shows, with arguments as one JSON object or as
--arg key=value pairs (a value that is valid JSON is taken as JSON: --arg n=3 is a number,
--arg tags='["a"]' a list; anything else is a string).

Text is printed; images and audio are saved to files (--out-dir) and the paths printed;
structured content is printed as JSON. Progress notifications draw a progress bar on stderr.
When the server asks a question (elicitation), it is asked here at the terminal.

Exit status: 0 success, 1 the tool reported an error, 2 usage or connection error.`,
		Example: `  mcpadapter call math_add '{"a":2,"b":3}'
  mcpadapter call weather_forecast --arg city=Paris --arg days=2
  mcpadapter call math_count --arg to=20
  mcpadapter call --target https://example.com/mcp search --arg q=golang
  mcpadapter call echo '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCall(cmd, a, args, f)
		},
	}
	cmd.Flags().StringVarP(&f.target, "target", "t", "", "the server: an http(s) URL or a script path (default: config, else the demo)")
	cmd.Flags().StringArrayVarP(&f.kv, "arg", "a", nil, "an argument `key=value` (repeatable)")
	cmd.Flags().StringVar(&f.outDir, "out-dir", ".", "`directory` for images and audio the tool returns")
	return cmd
}

// callFlags are the call command's flags.
type callFlags struct {
	target string
	kv     []string
	outDir string
}

// runCall calls the tool the command line names and prints its result.
func runCall(cmd *cobra.Command, a *cmdline.App, args []string, f callFlags) error {
	ctx := cmd.Context()
	var targetArgs []string
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		targetArgs, args = args[dash:], args[:dash]
		if len(targetArgs) == 0 {
			return cmdline.Usagef("no command after --")
		}
		// Present the command to open as if it were after a dash.
		targetArgs = append([]string{"--"}, targetArgs...)
	} else if f.target != "" {
		targetArgs = []string{f.target}
	}
	if len(args) == 0 || len(args) > 2 {
		return cmdline.Usagef("want TOOL and at most one JSON argument (got %d arguments)", len(args))
	}
	name := args[0]
	argJSON, err := buildArgs(args[1:], f.kv)
	if err != nil {
		return err
	}
	s, err := a.OpenTarget(cmd, targetArgs, cmdline.OpenOptions{Elicit: true, SkipUnavailable: true})
	if err != nil {
		return err
	}
	defer s.Close()
	tools, err := s.Tools(ctx)
	if err != nil {
		return err
	}
	tool, err := findTool(tools, name)
	if err != nil {
		return err
	}
	res, err := callTool(ctx, a, tool, argJSON)
	if err != nil {
		return err
	}
	if err := printResult(a, tool, res, f.outDir); err != nil {
		return err
	}
	if res.IsError {
		a.Code = cmdline.ExitToolError
	}
	return nil
}

// callTool calls tool, drawing its progress on stderr and asking the
// server's questions (elicitation) at the terminal.
func callTool(ctx context.Context, a *cmdline.App, tool *mcpadapter.Tool, argJSON json.RawMessage) (*mcpadapter.Result, error) {
	bar := term.NewProgress(a.Stderr, tool.Name, isTerminal(a.Stderr))
	var lastDone atomic.Bool // the last progress reached its total
	var seen atomic.Bool
	progress := &mcpadapter.CallOptions{Progress: func(p mcpadapter.Progress) {
		seen.Store(true)
		lastDone.Store(p.Total > 0 && p.Progress >= p.Total || p.Task != nil && p.Task.Status.Terminal())
		bar.Update(p.Progress, p.Total, p.Message)
	}, OnTask: func(h mcpadapter.TaskHandle) { // the call runs as a task: say how to reach it
		fmt.Fprintf(a.Stderr, "%s: running as task %s on %s (mcpadapter tasks get|cancel TARGET %s)\n", tool.Name, h.TaskID, h.Server, h.TaskID)
	}}
	prompter := term.NewPrompter(a.Stdin, a.Stderr)
	res, err := tool.CallWith(ctx, argJSON, progress)
	for range 20 {
		var ir *mcpadapter.InputRequiredError
		if !errors.As(err, &ir) {
			break
		}
		var resume *elicitation.Resume
		resume, err = prompter.AskAll(ctx, ir.Pending.Interrupt())
		if err != nil {
			return nil, err
		}
		res, err = tool.Resume(ctx, ir.Pending, resume)
	}
	// The server's last notification may arrive just after its result.
	for i := 0; i < 50 && seen.Load() && !lastDone.Load(); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	bar.Done()
	return res, err
}

// buildArgs makes the arguments object from a JSON argument and
// key=value pairs.
func buildArgs(positional, kv []string) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(positional) == 1 {
		if err := json.Unmarshal([]byte(positional[0]), &obj); err != nil {
			return nil, cmdline.Usagef("arguments %q are not a JSON object: %v", positional[0], err)
		}
	}
	for _, p := range kv {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, cmdline.Usagef("--arg %q: want key=value", p)
		}
		if json.Valid([]byte(v)) {
			obj[k] = json.RawMessage(v)
		} else {
			b, _ := json.Marshal(v)
			obj[k] = b
		}
	}
	return json.Marshal(obj)
}

// findTool finds a tool by its model name, or by its server's name for it
// when that is unambiguous.
func findTool(tools []*mcpadapter.Tool, name string) (*mcpadapter.Tool, error) {
	var byOriginal []*mcpadapter.Tool
	for _, t := range tools {
		if t.Name == name {
			return t, nil
		}
		if t.OriginalName == name {
			byOriginal = append(byOriginal, t)
		}
	}
	if len(byOriginal) == 1 {
		return byOriginal[0], nil
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	if len(byOriginal) > 1 {
		return nil, cmdline.Usagef("tool %q is offered by several servers; use the prefixed name (%s)", name, strings.Join(names, ", "))
	}
	return nil, cmdline.Usagef("no tool %q; the tools are: %s", name, strings.Join(names, ", "))
}

// printResult prints text, saves media, and shows structured content.
func printResult(a *cmdline.App, tool *mcpadapter.Tool, res *mcpadapter.Result, outDir string) error {
	w := a.Stdout
	if res.IsError {
		w = a.Stderr
		fmt.Fprintf(w, "tool %s reported an error:\n", tool.Name)
	}
	saved := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcpadapter.TextContent:
			fmt.Fprintln(w, c.Text)
		case *mcpadapter.ImageContent, *mcpadapter.AudioContent:
			data, mimeType, kind := mediaOf(c)
			saved++
			path, err := saveMedia(outDir, fmt.Sprintf("%s-%d", tool.Name, saved), mimeType, data)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "[%s %s, %d bytes, saved to %s]\n", kind, mimeType, len(data), path)
		default:
			fmt.Fprintln(w, (&mcpadapter.Result{Content: []mcpadapter.Content{c}}).Text())
		}
	}
	if res.Artifact != nil && !textRepeats(res) {
		var pretty bytes.Buffer
		if json.Indent(&pretty, res.Artifact.StructuredContent, "", "  ") != nil {
			pretty.Write(res.Artifact.StructuredContent)
		}
		fmt.Fprintf(w, "structured content:\n%s\n", pretty.String())
	}
	return nil
}

func mediaOf(c mcpadapter.Content) ([]byte, string, string) {
	switch c := c.(type) {
	case *mcpadapter.ImageContent:
		return c.Data, c.MIMEType, "image"
	case *mcpadapter.AudioContent:
		return c.Data, c.MIMEType, "audio"
	}
	return nil, "", ""
}

// saveMedia writes data to dir/base with an extension for mimeType.
func saveMedia(dir, base, mimeType string, data []byte) (string, error) {
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[0]
		for _, e := range exts {
			if e == ".png" || e == ".jpg" || e == ".wav" || e == ".mp3" || e == ".gif" || e == ".webp" {
				ext = e
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, base+ext)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(f)
}

// textRepeats reports whether a text block already says what the
// structured content says (go-sdk servers repeat it as JSON text).
func textRepeats(res *mcpadapter.Result) bool {
	var want bytes.Buffer
	if json.Compact(&want, res.Artifact.StructuredContent) != nil {
		return false
	}
	for _, c := range res.Content {
		var got bytes.Buffer
		if t, ok := c.(*mcpadapter.TextContent); ok && json.Compact(&got, []byte(t.Text)) == nil && bytes.Equal(got.Bytes(), want.Bytes()) {
			return true
		}
	}
	return false
}
