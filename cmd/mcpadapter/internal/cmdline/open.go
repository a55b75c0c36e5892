package cmdline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/session"
	"github.com/spf13/cobra"
)

// OpenOptions are a command's wishes for the connection.
type OpenOptions struct {
	// Trace logs every JSON-RPC message (to Logger).
	Trace bool
	// Elicit turns the servers' questions into prompts
	// (mcpadapter.ElicitInterrupt).
	Elicit bool
	// Logger, if not nil, replaces the default logger on stderr.
	Logger *slog.Logger
	// SkipUnavailable keeps the command going when some servers of a
	// config are down, saying which on stderr.
	SkipUnavailable bool
	// ToolSearch, if set, gives the tools as the search pair
	// (Options.ToolSearch).
	ToolSearch *mcpadapter.ToolSearch
	// WatchTools follows the servers' tool-list changes
	// (Options.WatchTools).
	WatchTools bool
}

// Open connects to what the command line names: a target argument or
// command after "--", else a config, else the demo.
func (a *App) Open(ctx context.Context, cmd *cobra.Command, args []string, oo OpenOptions) (*session.Session, error) {
	base, err := a.clientOptions(oo)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 {
		if a.configPath != "" {
			return nil, Usagef("give a target or --config, not both")
		}
		target, name, err := targetFromArgs(cmd, args)
		if err != nil {
			return nil, err
		}
		if c, ok := target.(mcpadapter.Command); ok {
			c.InheritEnv = a.inheritEnv
			target = c
		} else if len(a.inheritEnv) > 0 {
			return nil, Usagef("--inherit-env applies to a command target; in a config, set \"inheritEnv\" per server")
		}
		return a.openOne(ctx, target, name, base, oo)
	}
	if len(a.headers) > 0 || a.token != "" || a.oauth {
		return nil, Usagef("--header, --token and --oauth apply to a URL target; in a config, set headers and auth per server")
	}
	if len(a.inheritEnv) > 0 {
		return nil, Usagef("--inherit-env applies to a command target; in a config, set \"inheritEnv\" per server")
	}
	base.Headers, base.Auth = nil, nil
	path, err := a.findConfig()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return a.openDemo(ctx, base, oo)
	}
	cfg, err := a.LoadConfig(path) // trust.go
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cfg.Servers, func(sc *mcpadapter.ServerConfig) bool { return sc.Auth != nil && sc.Auth.OAuth != nil }) {
		// The sign-in for the config's "auth": "oauth" servers.
		if base.Auth, err = a.oauthFlow(); err != nil {
			return nil, err
		}
	}
	g, err := mcpadapter.NewGroup(cfg, &base)
	if err != nil {
		return nil, err
	}
	ad, err := mcpadapter.New(g, a.adapterOptions(oo))
	if err != nil {
		return nil, err
	}
	return session.Single(ad, "config "+path), nil
}

// OpenTarget is Open for a command whose target comes from a flag or
// after "--" rather than from its positional arguments.
func (a *App) OpenTarget(cmd *cobra.Command, targetArgs []string, oo OpenOptions) (*session.Session, error) {
	if len(targetArgs) > 0 && targetArgs[0] == "--" {
		return a.openCommand(cmd.Context(), targetArgs[1:], oo)
	}
	return a.Open(cmd.Context(), cmd, targetArgs, oo)
}

// openCommand opens a command line as a stdio target.
func (a *App) openCommand(ctx context.Context, argv []string, oo OpenOptions) (*session.Session, error) {
	base, err := a.clientOptions(oo)
	if err != nil {
		return nil, err
	}
	target := mcpadapter.Command{Path: argv[0], Args: argv[1:], InheritEnv: a.inheritEnv}
	return a.openOne(ctx, target, target.Name(), base, oo)
}

// openOne opens the one server target runs or reaches. Its name is
// --name if given; for a command, the name the server gives itself
// (ClientOptions.NameFromServer: its serverInfo.name, sanitised, else
// fallback, the package or script it runs), read from the connection
// made now, the one the command then uses; for a URL, fallback (its
// host).
func (a *App) openOne(ctx context.Context, target any, fallback string, base mcpadapter.ClientOptions, oo OpenOptions) (*session.Session, error) {
	_, isCommand := target.(mcpadapter.Command)
	switch {
	case a.name != "":
		if n := mcpadapter.ServerNameFrom(a.name); n != a.name {
			return nil, Usagef("--name %q: a server name matches ^[A-Za-z0-9_-]{1,64}$ (it prefixes tool names); %q would do", a.name, n)
		}
		base.Name = a.name
	case isCommand:
		base.NameFromServer = true
	default:
		base.Name = fallback
	}
	c, err := mcpadapter.NewClient(target, &base)
	if err != nil {
		return nil, err
	}
	ad, err := mcpadapter.New(c, a.adapterOptions(oo))
	if err != nil {
		return nil, err
	}
	source := base.Name
	if source == "" {
		// The adapter's client (an interrupt clone of c, with Elicit)
		// connects now: its first connection names it.
		client := ad.Group().Clients()[0]
		if _, err := client.Connect(ctx); err != nil {
			_ = ad.Close()
			return nil, err
		}
		source = client.Name()
	}
	return session.Single(ad, source), nil
}

// adapterOptions are the adapter options for what the command wishes.
func (a *App) adapterOptions(oo OpenOptions) *mcpadapter.Options {
	o := &mcpadapter.Options{ToolSearch: oo.ToolSearch, WatchTools: oo.WatchTools}
	if oo.Elicit {
		o.Elicitation = mcpadapter.ElicitInterrupt
	}
	if oo.SkipUnavailable {
		o.SkipUnavailable = true
		o.OnUnavailable = func(f mcpadapter.ServerFailure) {
			msg, _, _ := strings.Cut(f.Err.Error(), "\n")
			fmt.Fprintf(a.Stderr, "mcpadapter: server %s is unavailable, its tools are left out: %s\n", f.Server, strings.TrimPrefix(msg, "mcpadapter: "))
		}
	}
	return o
}

// clientOptions are the options every server gets from the command line.
func (a *App) clientOptions(oo OpenOptions) (mcpadapter.ClientOptions, error) {
	o := mcpadapter.ClientOptions{Logger: oo.Logger, Trace: oo.Trace, WatchTools: oo.WatchTools}
	if o.Logger == nil {
		level := slog.LevelWarn
		if a.verbose {
			level = slog.LevelInfo
		}
		o.Logger = slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: level}))
	}
	if a.timeout != "" {
		d, err := time.ParseDuration(a.timeout)
		if err != nil || d <= 0 {
			return o, Usagef("--timeout %q: want a positive duration such as 30s", a.timeout)
		}
		o.Timeout = d
	}
	o.ResetTimeoutOnProgress = a.resetOnProgress
	if a.maxTotal != "" {
		d, err := time.ParseDuration(a.maxTotal)
		if err != nil || d <= 0 {
			return o, Usagef("--max-total-timeout %q: want a positive duration such as 10m", a.maxTotal)
		}
		o.MaxTotalTimeout = d
	}
	if len(a.headers) > 0 {
		o.Headers = map[string]string{}
		for i, h := range a.headers {
			k, v, err := parseHeader(h, i+1)
			if err != nil {
				return o, err
			}
			o.Headers[k] = v
		}
	}
	token := a.token
	if token == "" {
		token = os.Getenv("MCP_TOKEN")
	}
	if token != "" {
		o.Auth = mcpadapter.BearerToken(token)
	}
	if a.oauth {
		if token != "" {
			return o, Usagef("--oauth and a bearer token (--token or $MCP_TOKEN): choose one")
		}
		var err error
		if o.Auth, err = a.oauthFlow(); err != nil {
			return o, err
		}
	}
	return o, nil
}

// oauthFlow is how the CLI signs in: it prints the authorization URL on
// stderr, serves the redirect on 127.0.0.1 while it waits, and keeps
// tokens in the token file.
func (a *App) oauthFlow() (*mcpadapter.OAuth, error) {
	path := a.tokenFile
	if path == "" {
		path = os.Getenv("MCPADAPTER_TOKEN_FILE")
	}
	if path == "" {
		var err error
		if path, err = mcpadapter.DefaultTokenFile(); err != nil {
			return nil, err
		}
	}
	return &mcpadapter.OAuth{
		ClientName: "mcpadapter CLI",
		Store:      mcpadapter.NewFileTokenStore(path),
		OpenURL: func(_ context.Context, authURL string) error {
			_, err := fmt.Fprintf(a.Stderr, "Sign in to continue. Open this URL in a browser:\n\n  %s\n\nWaiting for the browser to come back...\n", authURL)
			return err
		},
	}, nil
}

// targetFromArgs turns the positional arguments into a target: a URL, a
// command after "--", or a script or program path.
func targetFromArgs(cmd *cobra.Command, args []string) (any, string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash > 0 {
			return nil, "", Usagef("unexpected %q before --", args[0])
		}
		if len(args) == 0 {
			return nil, "", Usagef("no command after --")
		}
		c := mcpadapter.Command{Path: args[0], Args: args[1:]}
		return c, c.Name(), nil
	}
	if len(args) > 1 {
		return nil, "", Usagef("one target at a time (a URL or a script); to run a command with arguments put it after --")
	}
	t := args[0]
	if u, err := url.Parse(t); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return t, serverName(u.Host), nil
	}
	if strings.Contains(t, "://") {
		return nil, "", Usagef("target %q: only http and https URLs are supported", t)
	}
	if _, err := os.Stat(t); err != nil {
		return nil, "", Usagef("target %q is neither an http(s) URL nor a file; to run a command, put it after -- (mcpadapter tools -- npx -y some-server)", t)
	}
	c := mcpadapter.Script(t)
	return c, c.Name(), nil
}

// serverName makes a name usable as a tool prefix from s.
func serverName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	if len(b) == 0 {
		return "server"
	}
	return string(b)
}

// findConfig returns the config file to use: --config, ./.mcp.json, then
// ~/.config/mcpadapter/mcp.json; "" when there is none.
func (a *App) findConfig() (string, error) {
	if a.configPath != "" {
		if _, err := os.Stat(a.configPath); err != nil {
			return "", fmt.Errorf("--config: %w", err)
		}
		return a.configPath, nil
	}
	candidates := []string{".mcp.json"}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "mcpadapter", "mcp.json"))
	}
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	return "", nil
}
