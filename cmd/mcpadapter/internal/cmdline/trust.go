package cmdline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/trust"
	"github.com/mcpadapter/mcpadapter/internal/term"
	"github.com/spf13/cobra"
)

// LoadConfig reads the config file at path and, once it may be used (see
// checkTrust), parses it, expanding its variables from the environment.
// Nothing of the file is expanded, run or contacted before. Every command
// that uses a config file loads it with this.
func (a *App) LoadConfig(path string) (*mcpadapter.Config, error) {
	return a.loadConfig(path, true)
}

// ReloadConfig is LoadConfig for a command that is running (serve
// reloading its config): it never asks, as the terminal's input is not
// its to take; a file not trusted as it is now is refused.
func (a *App) ReloadConfig(path string) (*mcpadapter.Config, error) {
	return a.loadConfig(path, false)
}

func (a *App) loadConfig(path string, ask bool) (*mcpadapter.Config, error) {
	data, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	if err := a.checkTrust(path, data, ask); err != nil {
		return nil, err
	}
	// The bytes approved are the bytes parsed: the file is not read again.
	cfg, err := mcpadapter.ParseConfigEnv(data, os.LookupEnv)
	return cfg, inFile(err, path)
}

// maxConfigBytes bounds a config file: far above any real one.
const maxConfigBytes = 4 << 20

// readConfig reads the config file at path: a regular file (a link to
// /dev/zero, a pipe or a device is refused before it is opened) of at
// most maxConfigBytes.
func readConfig(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, fmt.Errorf("%s is over %d MiB: not a config file", path, maxConfigBytes>>20)
	}
	return data, nil
}

// inFile names path in the *ConfigErrors of err.
func inFile(err error, path string) error {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *mcpadapter.ConfigError
		if errors.As(e, &ce) && ce.File == "" {
			ce.File = path
		}
	}
	return err
}

// checkTrust returns nil when the config file at path, holding data, may
// be used: it is a user-level file (trust.UserLevel), --trust-config was
// given, or the user approved this content before. Otherwise it shows
// what the file would do and, at a terminal, asks; the answer yes is
// remembered for this content. Without a terminal it refuses, saying how
// to approve the file; so it does when ask is false.
func (a *App) checkTrust(path string, data []byte, ask bool) error {
	if a.trustConfig || trust.UserLevel(path) {
		return nil
	}
	summary, err := trust.Summary(data)
	if err != nil {
		// Not a JSON object: the parser says where, expanding nothing.
		if _, perr := mcpadapter.ParseConfigEnv(data, nil); perr != nil {
			return inFile(perr, path)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	store, err := a.trustStore()
	if err != nil {
		return err
	}
	if ok, err := store.Approved(path, data); err != nil || ok {
		return err
	}
	how := fmt.Sprintf("run 'mcpadapter trust %s' to trust it until it changes, or give --trust-config to use it this once", shellQuote(path))
	fmt.Fprintf(a.Stderr, "mcpadapter: %s is a project config, not one of your own: it is used only once you trust it.\nIt would do this (as written; nothing has been run or expanded):\n%s", path, summary)
	switch {
	case !ask:
		return fmt.Errorf("%s is not trusted as it is now: %s", path, how)
	case !a.stdinIsTerminal():
		return fmt.Errorf("%s is not trusted, and there is no terminal to ask: %s", path, how)
	}
	fmt.Fprintf(a.Stderr, "Trust %s and use it? [y/N] ", path)
	answer := strings.ToLower(strings.TrimSpace(readLine(a.Stdin)))
	if answer != "y" && answer != "yes" {
		return fmt.Errorf("%s is not trusted: nothing was started; %s", path, how)
	}
	if err := store.Approve(path, data); err != nil {
		return err
	}
	fmt.Fprintf(a.Stderr, "Trusted %s (asked again if it changes).\n", path)
	return nil
}

// trustStore is the store of approved config files.
func (a *App) trustStore() (*trust.Store, error) {
	p, err := trust.DefaultStorePath()
	if err != nil {
		return nil, err
	}
	return trust.NewStore(p), nil
}

// stdinIsTerminal reports whether the answer can be asked for.
func (a *App) stdinIsTerminal() bool {
	f, ok := a.Stdin.(*os.File)
	return ok && term.IsTerminal(f)
}

// readLine reads one line from r, a byte at a time, so that nothing after
// it is taken from a reader the command uses later; at most 1 KiB.
func readLine(r io.Reader) string {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 1024 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				break
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			break
		}
	}
	return b.String()
}

// shellQuote quotes path for a command line when it needs it.
func shellQuote(path string) string {
	if strings.IndexFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/~", r))
	}) < 0 {
		return path
	}
	return "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
}

// TrustCommand is "mcpadapter trust [FILE]": it shows what a config file
// would do and records that the user trusts it (or, with --revoke, forgets
// that).
func (a *App) TrustCommand() *cobra.Command {
	var revoke bool
	cmd := &cobra.Command{
		Use:   "trust [FILE]",
		Short: "Trust a project's config file (default ./.mcp.json) so that it is used",
		Long: `A config file names commands to run, servers to contact and the environment variables
to send them. mcpadapter uses a project's config file (./.mcp.json, or any --config file outside
your own config places) only once you trust it: at a terminal it asks the first time, and without
one it refuses. "mcpadapter trust FILE" shows what the file would do and trusts it; the approval
is kept, by the file's path and content, in ~/.config/mcpadapter/trusted-configs.json, and a
change to the file asks again. Your own files are trusted without asking: files directly in your
home directory, ~/.config/mcpadapter/, and the user-level files of Claude Desktop, VS Code,
Cursor, Windsurf and Gemini CLI. --trust-config uses a file once without remembering it.`,
		Example: `  mcpadapter trust
  mcpadapter trust ./tools/mcp.json
  mcpadapter trust --revoke .mcp.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ".mcp.json"
			switch {
			case len(args) == 1:
				path = args[0]
			case a.configPath != "":
				path = a.configPath
			}
			store, err := a.trustStore()
			if err != nil {
				return err
			}
			if revoke {
				if err := store.Revoke(path); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "%s is no longer trusted.\n", path)
				return nil
			}
			data, err := readConfig(path)
			if err != nil {
				return err
			}
			summary, err := trust.Summary(data)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := store.Approve(path, data); err != nil {
				return err
			}
			fmt.Fprintf(a.Stdout, "Trusted %s, which does this:\n%sIt is asked about again if it changes.\n", path, summary)
			if trust.UserLevel(path) {
				fmt.Fprintf(a.Stdout, "(%s is one of your own config files, which are trusted anyway.)\n", path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget that FILE is trusted")
	return cmd
}
