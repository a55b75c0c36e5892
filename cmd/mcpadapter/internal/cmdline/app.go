// Package cmdline is what the mcpadapter commands share, in the mcpadapter
// program and in mcpadapter-agent: the global flags, running a command tree
// to an exit status with one-line errors, and opening the servers a command
// line names (a URL, a command, a config, else the built-in demo).
package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/spf13/cobra"
)

// Exit statuses.
const (
	ExitOK        = 0
	ExitToolError = 1 // the tool ran and reported an error
	ExitFailure   = 2 // usage, config or transport error
)

// App holds what the commands of one run share: the standard streams, the
// global flags and the exit status.
type App struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Code is the exit status a command that ran sets (ExitToolError).
	Code int

	// helpHint is the command whose --help a usage error points to.
	helpHint string

	configPath  string
	trustConfig bool // --trust-config: use a project config this once
	verbose     bool
	headers     []string
	inheritEnv  []string // --inherit-env: variables a command target gets besides the safe set
	token       string
	oauth       bool
	tokenFile   string
	timeout     string
	// resetOnProgress and maxTotal: --timeout-resets-on-progress,
	// --max-total-timeout.
	resetOnProgress bool
	maxTotal        string
	// name is --name: the server's name instead of the one it gives.
	name string
}

// New returns an App on the given streams; helpHint is the command line
// whose --help a usage error points to ("mcpadapter", "mcpadapter agent").
func New(stdin io.Reader, stdout, stderr io.Writer, helpHint string) *App {
	return &App{Stdin: stdin, Stdout: stdout, Stderr: stderr, helpHint: helpHint}
}

// AddFlags adds the global flags (config, verbosity, headers, auth,
// timeout) to cmd, for it and its subcommands.
func (a *App) AddFlags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "mcpServers config `file` (default: ./.mcp.json, then ~/.config/mcpadapter/mcp.json)")
	pf.BoolVar(&a.trustConfig, "trust-config", false, "use a project config file (./.mcp.json) this once without being asked to trust it (see 'mcpadapter trust')")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "show full errors and connection details")
	pf.StringArrayVarP(&a.headers, "header", "H", nil, "HTTP header `Name: value` (or Name=value) for a URL target (repeatable)")
	pf.StringVar(&a.token, "token", "", "bearer `token` for a URL target (default $MCP_TOKEN)")
	pf.StringArrayVar(&a.inheritEnv, "inherit-env", nil, "pass this environment `variable` to a command target (repeatable; NAME, PREFIX_* or *); it gets only HOME, LOGNAME, PATH, SHELL, TERM and USER otherwise")
	pf.BoolVar(&a.oauth, "oauth", false, "sign in with OAuth to a URL target (a config says \"auth\": \"oauth\" per server)")
	pf.StringVar(&a.tokenFile, "token-file", "", "`file` keeping OAuth tokens (default ~/.config/mcpadapter/tokens.json)")
	pf.StringVar(&a.timeout, "timeout", "", "per-request `timeout`, e.g. 30s (default: none)")
	pf.BoolVar(&a.resetOnProgress, "timeout-resets-on-progress", false, "restart a tool call's --timeout each time the server reports progress")
	pf.StringVar(&a.maxTotal, "max-total-timeout", "", "bound each tool call overall, progress or not, e.g. 10m (default: none)")
	pf.StringVar(&a.name, "name", "", "the server's `name` (tool prefixes, tables, traces) instead of the one it gives (a target or command only)")
}

// Execute runs root with args and returns the exit status, printing an
// error as one line (in full with --verbose).
func (a *App) Execute(ctx context.Context, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	root.SetIn(a.Stdin)
	root.SetOut(a.Stdout)
	root.SetErr(a.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return a.Code
	}
	var ue *UsageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(a.Stderr, "mcpadapter: %v\nRun '%s --help' for usage.\n", err, a.helpHint)
		return ExitFailure
	}
	a.printError(err)
	return ExitFailure
}

// UsageError is a mistake in the command line.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "unknown flag") ||
		strings.HasPrefix(s, "unknown shorthand flag") || strings.Contains(s, "flag needs an argument") ||
		strings.HasPrefix(s, "invalid argument") || strings.HasPrefix(s, "accepts ") || strings.HasPrefix(s, "requires at least")
}

// printError prints err as one line, or in full with --verbose. A config
// with several problems gets a line for each, verbose or not.
func (a *App) printError(err error) {
	if problems := configProblems(err); len(problems) > 1 {
		for _, p := range problems {
			fmt.Fprintf(a.Stderr, "mcpadapter: %s\n", strings.TrimPrefix(p, "mcpadapter: "))
		}
		return
	}
	msg := err.Error()
	if !a.verbose {
		first, rest, cut := strings.Cut(msg, "\n")
		msg = first
		var te *mcpadapter.TransportError
		if cut && strings.TrimSpace(rest) != "" && errors.As(err, &te) && len(te.Stderr) > 0 {
			lines := te.RedactedStderr()
			msg += fmt.Sprintf(" (last stderr line: %q; --verbose shows more)", lines[len(lines)-1])
		} else if cut {
			msg += " (--verbose shows more)"
		}
	}
	msg = strings.TrimPrefix(msg, "mcpadapter: ")
	fmt.Fprintf(a.Stderr, "mcpadapter: %s\n", msg)
}

// configProblems returns the problems of a config error (several joined
// with errors.Join, each a *mcpadapter.ConfigError), one a line; nil when
// err is anything else.
func configProblems(err error) []string {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	var out []string
	for _, e := range errs {
		var ce *mcpadapter.ConfigError
		if !errors.As(e, &ce) {
			return nil
		}
		out = append(out, strings.Split(e.Error(), "\n")...)
	}
	return out
}
