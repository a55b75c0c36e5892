package main

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
	"github.com/spf13/cobra"
)

// openOptions are a command's wishes for the connection.
type openOptions struct {
	trace   bool
	elicit  bool
	logger  *slog.Logger
	adapter []mcpadapter.Option
}

// open connects to what the command line names: a target argument or
// command after "--", else a config, else the demo.
func (a *app) open(ctx context.Context, cmd *cobra.Command, args []string, oo openOptions) (*session, error) {
	base, err := a.clientOptions(oo)
	if err != nil {
		return nil, err
	}
	if oo.elicit {
		oo.adapter = append(oo.adapter, mcpadapter.WithElicitation(mcpadapter.ElicitInterrupt))
	}
	if len(args) > 0 {
		if a.configPath != "" {
			return nil, usagef("give a target or --config, not both")
		}
		target, name, err := targetFromArgs(cmd, args)
		if err != nil {
			return nil, err
		}
		base.Name = name
		c, err := mcpadapter.NewClient(target, base)
		if err != nil {
			return nil, err
		}
		ad, err := mcpadapter.New(c, oo.adapter...)
		if err != nil {
			return nil, err
		}
		return single(ad, name), nil
	}
	if len(a.headers) > 0 || a.token != "" || a.oauth {
		return nil, usagef("--header, --token and --oauth apply to a URL target; in a config, set headers and auth per server")
	}
	base.Headers, base.Auth = nil, nil
	path, err := a.findConfig()
	if err != nil {
		return nil, err
	}
	if path == "" {
		return a.openDemo(ctx, base, oo)
	}
	cfg, err := mcpadapter.LoadConfig(path)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cfg.Servers, func(sc *mcpadapter.ServerConfig) bool { return sc.Auth != nil && sc.Auth.OAuth != nil }) {
		// The sign-in for the config's "auth": "oauth" servers.
		if base.Auth, err = a.oauthFlow(); err != nil {
			return nil, err
		}
	}
	g, err := mcpadapter.NewGroup(cfg, base)
	if err != nil {
		return nil, err
	}
	ad, err := mcpadapter.New(g, oo.adapter...)
	if err != nil {
		return nil, err
	}
	return single(ad, "config "+path), nil
}

// clientOptions are the options every server gets from the command line.
func (a *app) clientOptions(oo openOptions) (mcpadapter.ClientOptions, error) {
	o := mcpadapter.ClientOptions{Logger: oo.logger, Trace: oo.trace}
	if o.Logger == nil {
		level := slog.LevelWarn
		if a.verbose {
			level = slog.LevelInfo
		}
		o.Logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	}
	if a.timeout != "" {
		d, err := time.ParseDuration(a.timeout)
		if err != nil || d <= 0 {
			return o, usagef("--timeout %q: want a positive duration such as 30s", a.timeout)
		}
		o.Timeout = d
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
			return o, usagef("--oauth and a bearer token (--token or $MCP_TOKEN): choose one")
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
func (a *app) oauthFlow() (*mcpadapter.OAuth, error) {
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
			_, err := fmt.Fprintf(a.stderr, "Sign in to continue. Open this URL in a browser:\n\n  %s\n\nWaiting for the browser to come back...\n", authURL)
			return err
		},
	}, nil
}

// targetFromArgs turns the positional arguments into a target: a URL, a
// command after "--", or a script or program path.
func targetFromArgs(cmd *cobra.Command, args []string) (any, string, error) {
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		if dash > 0 {
			return nil, "", usagef("unexpected %q before --", args[0])
		}
		if len(args) == 0 {
			return nil, "", usagef("no command after --")
		}
		return mcpadapter.Command{Path: args[0], Args: args[1:]}, serverName(args[0]), nil
	}
	if len(args) > 1 {
		return nil, "", usagef("one target at a time (a URL or a script); to run a command with arguments put it after --")
	}
	t := args[0]
	if u, err := url.Parse(t); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return t, serverName(u.Host), nil
	}
	if strings.Contains(t, "://") {
		return nil, "", usagef("target %q: only http and https URLs are supported", t)
	}
	if _, err := os.Stat(t); err != nil {
		return nil, "", usagef("target %q is neither an http(s) URL nor a file; to run a command, put it after -- (mcpadapter tools -- npx -y some-server)", t)
	}
	return mcpadapter.Script(t), serverName(filepath.Base(t)), nil
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
func (a *app) findConfig() (string, error) {
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
