package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/policy"
	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
	"github.com/spf13/cobra"
)

// serveFlags are the serve command's own flags.
type serveFlags struct {
	listen        string
	stdio         bool
	prefix        string
	allowHosts    []string
	allowOrigins  []string
	callTimeout   time.Duration
	grace         time.Duration
	perServer     int
	perSession    int
	maxSessions   int
	perPrincipal  int
	toolSearch    int
	maxBodyBytes  int64
	parkTimeout   time.Duration
	extraConns    int
	sessionExpiry time.Duration
	tasks         serveTaskFlags
	auth          serveAuthFlags
	limits        serveLimitFlags
	signin        serveSignInFlags
	policy        string
	watchConfig   bool
	auditLog      string
	auditPayloads bool
	health        bool
}

func serveCommand(a *cmdline.App) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --config FILE [--listen ADDR | --stdio]",
		Short: "Serve the servers of a config as one MCP server (a gateway)",
		Long: `serve connects to every server of an mcpServers config and serves them as one MCP server:
over streamable HTTP on --listen (loopback by default; clients of 2025-06-18, 2025-11-25 and
2026-07-28 on one endpoint, whatever the servers speak), or over stdio with --stdio, so that a
desktop host can start the gateway as its only server.

It prints where it listens, each server with its protocol version and tool count, and a line
for each problem (a server that is down, a tool name two servers claim). A server that fails
is tried again in the background; its tools come back with a list_changed notification.
SIGHUP (or, with --watch-config, a change of the file) reloads the config, and the --policy
file, while clients stay connected: new servers start, removed ones stop, changed ones restart,
the others keep their connections, a new policy decides the next requests, and clients get
list_changed. A config or policy that is refused (invalid, or no longer trusted) is reported
with every problem and the servers and the policy stay as they were.
SIGINT or SIGTERM stops taking requests, lets those in flight finish (--grace), then stops the
servers.

With --issuer, --introspection-url or --api-key the gateway is an OAuth 2.1 resource server:
it serves its protected resource metadata, and accepts only requests with a JWT access token of
an --issuer (signature, issuer, audience --resource, expiry), a token the introspection endpoint
says is active, or an API key, DPoP-bound tokens with their proofs. The token's subject is the
principal its sessions belong to. Keys and secrets come from the environment, never from flags.`,
		Example: `  mcpadapter serve --config mcp.json
  mcpadapter serve --config mcp.json --listen 127.0.0.1:9000 --prefix always
  mcpadapter serve --config mcp.json --stdio
  MCP_KEY_CI=... mcpadapter serve --config mcp.json --api-key ci=MCP_KEY_CI
  mcpadapter serve --config mcp.json --listen 0.0.0.0:8080 --allow-host gw.example.com \
    --resource https://gw.example.com/mcp --issuer https://idp.example.com --scope mcp:tools
  mcpadapter serve --config mcp.json --watch-config`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), a, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", "127.0.0.1:8080", "`address` to serve streamable HTTP on (a non-loopback address needs --allow-host)")
	fl.BoolVar(&f.stdio, "stdio", false, "serve one client on stdin and stdout instead of HTTP")
	fl.StringVar(&f.prefix, "prefix", "auto", "prefix tool and prompt names with their server's name: auto (with several servers), always, never")
	fl.StringArrayVar(&f.allowHosts, "allow-host", nil, "a Host header `name` to accept besides loopback names (repeatable)")
	fl.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "a browser `origin` to accept, e.g. https://app.example.com (repeatable)")
	fl.DurationVar(&f.callTimeout, "call-timeout", 0, "bound each tool call; restarts on each progress report (default: none)")
	fl.DurationVar(&f.grace, "grace", gateway.DefaultShutdownGrace, "how long calls in flight may finish after SIGTERM")
	fl.IntVar(&f.perServer, "max-calls-per-server", 0, fmt.Sprintf("tool calls in flight to one server (default %d; -1: no cap)", gateway.DefaultMaxCallsPerServer))
	fl.IntVar(&f.perSession, "max-calls-per-session", 0, fmt.Sprintf("tool calls in flight from one client session (default %d; -1: no cap)", gateway.DefaultMaxCallsPerSession))
	fl.IntVar(&f.maxSessions, "max-sessions", 0, fmt.Sprintf("handshake-era client sessions held at once (per replica); one more ends the session idle longest (no request in flight, no stream open), or is refused (503) when none is idle (default %d; -1: no cap)", gateway.DefaultMaxSessions))
	fl.IntVar(&f.perPrincipal, "max-sessions-per-principal", 0, "client sessions one principal holds at once; one more ends that principal's session idle longest, or is refused (429) when none is idle (default: a quarter of --max-sessions; -1: no cap)")
	fl.IntVar(&f.toolSearch, "tool-search", 0, "show search_tools and call_tool instead of a catalog over this many estimated `tokens` (0: off; -1: always)")
	fl.Int64Var(&f.maxBodyBytes, "max-request-bytes", 0, fmt.Sprintf("bound one HTTP request body (default %d)", gateway.DefaultMaxRequestBytes))
	fl.IntVar(&f.extraConns, "max-extra-connections", 0, fmt.Sprintf("connections to a handshake-era server besides its shared one, for calls of clients that may be asked while another client's call is in flight (default %d; -1: none; each is a process of a stdio server)", gateway.DefaultMaxExtraConnections))
	fl.DurationVar(&f.parkTimeout, "park-timeout", 0, fmt.Sprintf("how long a server's question waits for the client's answer (default %s)", gateway.DefaultParkTimeout))
	fl.DurationVar(&f.sessionExpiry, "session-timeout", 0, "close client sessions idle this long (default: never; at --max-sessions the session idle longest is closed first)")
	f.tasks.add(fl)
	f.auth.register(fl)
	f.limits.register(fl)
	f.signin.register(fl)
	fl.StringVar(&f.policy, "policy", "", "a policy `file`: which principals may see and use which servers' tools, prompts and resources (docs/gateway.md)")
	fl.BoolVar(&f.watchConfig, "watch-config", false, "reload the config when the file changes (SIGHUP always reloads it)")
	fl.StringVar(&f.auditLog, "audit-log", "", "append a JSON line per tool call to `file` (- for stderr): who, which tool on which server, outcome, duration")
	fl.BoolVar(&f.auditPayloads, "audit-payloads", false, "with --audit-log, also record each call's arguments and result (the config's secrets blanked out)")
	fl.BoolVar(&f.health, "health", true, "answer GET /healthz (alive) and /readyz (a server is up) for orchestrators")
	return cmd
}

// runServe runs the gateway until ctx ends (SIGINT, SIGTERM).
func runServe(ctx context.Context, a *cmdline.App, f serveFlags) error {
	path, err := a.ConfigFile()
	if err != nil {
		return err
	}
	if path == "" {
		return cmdline.Usagef("serve needs an mcpServers config: --config FILE (or ./.mcp.json)")
	}
	hup, stopHup := hangups() // a SIGHUP while starting reloads once started
	defer stopHup()
	cfg, err := a.LoadConfig(path) // only once the file is trusted
	if err != nil {
		return err
	}
	prefix, err := parsePrefix(f.prefix)
	if err != nil {
		return err
	}
	out := a.Stdout
	if f.stdio {
		out = a.Stderr // stdout carries the protocol
	}
	logLevel := slog.LevelWarn
	if a.Verbose() {
		logLevel = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(a.Stderr, &slog.HandlerOptions{Level: logLevel}))
	base, err := a.BaseClientOptions(cmdline.OpenOptions{Logger: logger})
	if err != nil {
		return err
	}
	var pmu sync.Mutex
	started := false
	opts := &gateway.Options{
		Client:                  &base,
		Prefix:                  prefix,
		Logger:                  logger,
		CallTimeout:             f.callTimeout,
		MaxCallsPerServer:       f.perServer,
		MaxCallsPerSession:      f.perSession,
		MaxSessions:             f.maxSessions,
		MaxSessionsPerPrincipal: f.perPrincipal,
		MaxRequestBytes:         f.maxBodyBytes,
		TakeOverStreams:         true, // gw.Shutdown ends them before srv.Shutdown
		ParkTimeout:             f.parkTimeout,
		MaxExtraConnections:     f.extraConns,
		SessionTimeout:          f.sessionExpiry,
		AllowedHosts:            f.allowHosts,
		AllowedOrigins:          f.allowOrigins,
		OnEvent: func(e gateway.Event) {
			pmu.Lock()
			defer pmu.Unlock()
			if !started && e.Kind != gateway.ServerProblem {
				return // Start's summary says it
			}
			printEvent(out, e)
		},
	}
	if f.policy != "" {
		p, err := policy.Load(f.policy)
		if err != nil {
			return cmdline.Usagef("--policy: %v", err)
		}
		opts.Policy = p
	}
	if f.toolSearch != 0 {
		opts.ToolSearch = &mcpadapter.ToolSearch{Threshold: f.toolSearch}
	}
	if opts.Tasks, err = f.tasks.options(); err != nil {
		return err
	}
	closeStore, err := f.limits.apply(ctx, opts, &f.auth, out, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	closeAudit, err := auditTo(opts, f, a.Stderr)
	if err != nil {
		return err
	}
	defer closeAudit()
	var guard *resourceserver.Guard
	storeURL := ""
	if f.limits.storeEnv != "" {
		storeURL = os.Getenv(f.limits.storeEnv)
	}
	signIn, closeTokens, err := f.signin.options(ctx, cfg, &f.auth, &guard, storeURL)
	if err != nil {
		return err
	}
	opts.SignIn = signIn
	defer closeTokens()
	gw, err := gateway.New(gateway.FromConfig(cfg), opts)
	if err != nil {
		return err
	}
	defer gw.Close()
	startErr := gw.Start(ctx)
	pmu.Lock()
	started = true
	printServers(out, path, gw.Servers())
	pmu.Unlock()
	if startErr != nil {
		return startErr
	}
	defer reloadOnChange(ctx, a, gw, reloadFiles{config: path, policy: f.policy}, f.watchConfig, hup, out, &pmu)()
	if f.stdio {
		if opts.SignIn != nil {
			return cmdline.Usagef(`--stdio serves no web pages: the sign-in of a server whose auth is "signin" needs HTTP`)
		}
		if f.auth.on() {
			return cmdline.Usagef("--stdio serves the one client that started it: --issuer, --introspection-url and --api-key are for HTTP")
		}
		fmt.Fprintln(out, "mcpadapter serve: serving one client on stdin and stdout")
		err := gw.ServeStdio(ctx, os.Stdin, nopWriteCloser{a.Stdout})
		return errors.Join(err, shutdown(gw, f.grace))
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", f.listen, err)
	}
	if !isLoopback(ln.Addr()) && len(f.allowHosts) == 0 {
		ln.Close()
		return cmdline.Usagef("--listen %s is not a loopback address: say which Host names clients use with --allow-host", f.listen)
	}
	guard, err = f.auth.guard(ln.Addr(), logger)
	if err != nil {
		ln.Close()
		return err
	}
	var handler http.Handler = gw
	if guard != nil {
		handler = guard.Handler(gw)
		f.auth.describe(out, guard)
	}
	if f.health || opts.SignIn != nil {
		// Probes need no credential: they say only whether the gateway is
		// alive and a server is up. The sign-in pages are for browsers,
		// which carry none.
		mux := http.NewServeMux()
		if f.health {
			mux.Handle("GET /healthz", gw.HealthHandler())
			mux.Handle("GET /readyz", gw.HealthHandler())
		}
		if opts.SignIn != nil {
			mountSignIn(mux, gw, opts.SignIn, out)
		}
		mux.Handle("/", handler)
		handler = mux
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "mcpadapter serve: listening on http://%s/mcp (any path serves)\n", ln.Addr())
	served := make(chan error, 1)
	// Its idle keep-alive connections parked out of net/http: a client's
	// session keeps one between its requests.
	go func() { served <- srv.Serve(gateway.ParkIdleConnections(srv, ln)) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(out, "mcpadapter serve: shutting down (calls in flight have %s to finish)\n", f.grace)
	sctx, cancel := context.WithTimeout(context.Background(), f.grace)
	defer cancel()
	gerr := gw.Shutdown(sctx)
	herr := srv.Shutdown(sctx)
	if errors.Is(herr, context.DeadlineExceeded) {
		herr = srv.Close()
	}
	return errors.Join(gerr, herr)
}

func shutdown(gw *gateway.Gateway, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return gw.Shutdown(ctx)
}

func parsePrefix(s string) (mcpadapter.PrefixMode, error) {
	switch s {
	case "auto", "":
		return mcpadapter.PrefixAuto, nil
	case "always":
		return mcpadapter.PrefixAlways, nil
	case "never":
		return mcpadapter.PrefixNever, nil
	}
	return 0, cmdline.Usagef("--prefix %q: want auto, always or never", s)
}

func isLoopback(a net.Addr) bool {
	ta, ok := a.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}

// printServers prints each server, up with its protocol and tools or down
// with why.
func printServers(w io.Writer, path string, servers []gateway.ServerStatus) {
	fmt.Fprintf(w, "mcpadapter serve: %d servers from %s\n", len(servers), path)
	for _, s := range servers {
		if !s.Up {
			fmt.Fprintf(w, "  %-20s DOWN: %s (retrying in the background)\n", s.Name, oneLine(s.Err))
			continue
		}
		version := ""
		if s.Info != nil {
			version = s.Info.ProtocolVersion + "  " + s.Info.Transport
			if im := s.Info.Implementation; im != nil {
				version += "  " + im.Name + " " + im.Version
			}
		}
		fmt.Fprintf(w, "  %-20s up  %s  %d tools\n", s.Name, version, s.Tools)
	}
}

func printEvent(w io.Writer, e gateway.Event) {
	switch e.Kind {
	case gateway.ServerUp:
		v := ""
		if e.Info != nil {
			v = " (" + e.Info.ProtocolVersion + ")"
		}
		fmt.Fprintf(w, "mcpadapter serve: server %s is up%s\n", e.Server, v)
	case gateway.ServerDown:
		fmt.Fprintf(w, "mcpadapter serve: server %s is down: %s\n", e.Server, oneLine(e.Err))
	default:
		fmt.Fprintf(w, "mcpadapter serve: problem: %s\n", strings.TrimPrefix(oneLine(e.Err), "mcpadapter: "))
	}
}

func oneLine(err error) string {
	if err == nil {
		return "unknown reason"
	}
	s, _, _ := strings.Cut(err.Error(), "\n")
	return strings.TrimPrefix(s, "mcpadapter: ")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// auditTo sets opts' audit log from --audit-log and --audit-payloads; the
// returned function closes the file.
func auditTo(opts *gateway.Options, f serveFlags, stderr io.Writer) (closeFn func(), _ error) {
	if f.auditLog == "" {
		if f.auditPayloads {
			return nil, cmdline.Usagef("--audit-payloads needs --audit-log")
		}
		return func() {}, nil
	}
	w, closeFn := stderr, func() {}
	if f.auditLog != "-" {
		file, err := os.OpenFile(f.auditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--audit-log: %w", err)
		}
		w, closeFn = file, func() { _ = file.Close() }
	}
	opts.AuditLog = slog.New(slog.NewJSONHandler(w, nil))
	if f.auditPayloads {
		opts.AuditPayload = func(string, string, string) bool { return true }
	}
	return closeFn, nil
}
