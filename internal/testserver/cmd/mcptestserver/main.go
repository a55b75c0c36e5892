// Command mcptestserver runs a testserver MCP server (see package
// testserver) over stdio, streamable HTTP or SSE, optionally misbehaving in
// ways real servers do. Tests build it with testserver.Build.
//
// Usage:
//
//	mcptestserver [-transport stdio|http|sse] [-addr 127.0.0.1:0]
//	    [-era modern|legacy] [-name NAME] [fault flags]
//
// For http and sse the first stderr line is "listening on URL".
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type config struct {
	transport       string
	addr            string
	era             testserver.Era
	name            string
	stateless       bool
	jsonResponse    bool
	sessionTimeout  time.Duration
	pageSize        int
	manyTools       bool
	minimal         bool
	startDelay      time.Duration
	noisy           bool
	refuseInit      bool
	pollute         bool
	hang            bool
	ignoreDiscover  bool
	ignorePing      bool
	exitOnDiscover  bool
	stderrLines     int
	listDelay       time.Duration
	readDelay       time.Duration
	spawnGrandchild bool
	ignoreSigterm   bool
	garbage         bool
	wrongIDs        bool
	flood           int
	vendorNote      bool
	neverAnswer     string
	stopReading     string
	deepSchema      bool
	heldStdout      bool
	cacheTTLMs      int
	cacheScope      string
	resources       bool
	oneAtATime      bool
	logMethods      bool
	notify          bool
}

func parseFlags() (*config, error) {
	c := &config{}
	var era string
	flag.StringVar(&c.transport, "transport", "stdio", "transport: stdio, http (streamable) or sse")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:0", "listen address for http and sse")
	flag.StringVar(&era, "era", "modern", "protocol era: modern (2026-07-28 and older) or legacy (handshake only)")
	flag.StringVar(&c.name, "name", "mcptestserver", "server implementation name")
	flag.BoolVar(&c.stateless, "stateless", false, "http: serve statelessly (needed for 2026-07-28 over http)")
	flag.BoolVar(&c.jsonResponse, "json-response", false, "http: answer with application/json instead of an event stream")
	flag.DurationVar(&c.sessionTimeout, "session-timeout", 0, "http: close sessions idle this long")
	flag.IntVar(&c.pageSize, "page-size", 0, "tools/list page size (0: go-sdk default)")
	flag.BoolVar(&c.manyTools, "many-tools", false, "add extra_01 … extra_25")
	flag.BoolVar(&c.minimal, "minimal", false, "serve only echo and slow (a small server, for benchmarks)")
	flag.DurationVar(&c.startDelay, "start-delay", 0, "sleep this long before serving (a slow start: npx, uvx, a JVM)")
	flag.BoolVar(&c.noisy, "noisy", false, "on every tool call, write one 70 KiB line and then 200 KB to stderr")
	flag.BoolVar(&c.refuseInit, "refuse-initialize", false, "answer initialize with a JSON-RPC error and keep running")
	flag.BoolVar(&c.pollute, "pollute", false, "stdio: print a non-JSON banner on stdout at start and on every tool call")
	flag.BoolVar(&c.hang, "hang", false, "stdio: read stdin but never answer (even after EOF)")
	flag.BoolVar(&c.ignoreDiscover, "ignore-discover", false, "stdio: never answer server/discover requests")
	flag.BoolVar(&c.ignorePing, "ignore-ping", false, "stdio: never answer ping requests")
	flag.BoolVar(&c.exitOnDiscover, "exit-on-discover", false, "stdio: exit with code 4 if the first request is server/discover")
	flag.IntVar(&c.stderrLines, "stderr", 0, "write this many lines \"stderr line i\" to stderr at start")
	flag.DurationVar(&c.listDelay, "list-delay", 0, "sleep this long before answering tools/list")
	flag.DurationVar(&c.readDelay, "read-delay", 0, "sleep this long before answering resources/read")
	flag.BoolVar(&c.spawnGrandchild, "spawn-grandchild", false, "start a `sleep 300` child and print \"grandchild pid N\" on stderr")
	flag.BoolVar(&c.ignoreSigterm, "ignore-sigterm", false, "ignore SIGTERM (only SIGKILL stops the process)")
	flag.BoolVar(&c.garbage, "garbage", false, "stdio: write a non-JSON line and a truncated JSON object before every response")
	flag.BoolVar(&c.wrongIDs, "wrong-ids", false, "stdio: write responses to ids nobody asked for before every response")
	flag.IntVar(&c.flood, "flood", 0, "stdio: write this many notifications (log messages and progress) before handling every tools/call")
	flag.BoolVar(&c.vendorNote, "vendor-note", false, "stdio: write a notification of a method no client knows (notifications/vendor/note) before handling every tools/call")
	flag.BoolVar(&c.heldStdout, "grandchild-holds-stdout", false, "like -spawn-grandchild, with the child writing to our stdout: stdout stays open after this process dies")
	flag.IntVar(&c.cacheTTLMs, "cache-ttl-ms", 0, "the ttlMs caching hint of discover, list and read results")
	flag.StringVar(&c.cacheScope, "cache-scope", "", "the cacheScope caching hint (public or private) of discover, list and read results")
	flag.BoolVar(&c.resources, "resources", false, "add the test://cache/ resources, their template and the greet prompt")
	flag.BoolVar(&c.oneAtATime, "one-at-a-time", false, "refuse a tools/call while another is in flight (a single-threaded server)")
	flag.BoolVar(&c.notify, "notify", false, "add the notify tool, resource template, prompt and completion: a log message (and a progress report), then the answer at once")
	flag.BoolVar(&c.logMethods, "log-methods", false, "stdio: write \"recv PID METHOD\" to stderr for every message read from stdin, in order")
	flag.StringVar(&c.neverAnswer, "never-answer", "", "stdio: drop every tools/call of this tool (never answered, cancellation ignored)")
	flag.StringVar(&c.stopReading, "stop-reading", "", "stdio: after a tools/call of this tool (still answered), never read stdin again")
	flag.BoolVar(&c.deepSchema, "deep-schema", false, fmt.Sprintf("stdio: add the tool deep_schema, whose input schema nests %d levels deep", testserver.DeepNesting))
	flag.Parse()
	if flag.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	var err error
	if c.era, err = testserver.ParseEra(era); err != nil {
		return nil, err
	}
	switch c.transport {
	case "stdio", "http", "sse":
	default:
		return nil, fmt.Errorf("unknown transport %q (want stdio, http or sse)", c.transport)
	}
	return c, nil
}

func main() {
	c, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(2)
	}
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if c.ignoreSigterm {
		signal.Ignore(syscall.SIGTERM)
		sigs = sigs[:1]
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	defer stop()
	time.Sleep(c.startDelay)
	if c.transport == "stdio" {
		err = serveStdio(ctx, c)
	} else {
		err = serveHTTP(ctx, c)
	}
	if err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "mcptestserver:", err)
		os.Exit(1)
	}
}

// startup performs the startup side effects requested by flags. It runs
// after the "listening on" line for http and sse.
func startup(c *config) {
	for i := 1; i <= c.stderrLines; i++ {
		fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
	}
	if c.spawnGrandchild || c.heldStdout {
		cmd := exec.Command("sleep", "300")
		if c.heldStdout {
			cmd.Stdout = os.Stdout
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "mcptestserver: spawning grandchild:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "grandchild pid %d\n", cmd.Process.Pid)
		go func() { _ = cmd.Wait() }() // reap it if it dies first
	}
}

// newServer builds the server with the middleware requested by flags.
func newServer(c *config, out *lockedWriter) *mcp.Server {
	opts := testserver.Options{
		Name:           c.name,
		Era:            c.era,
		PageSize:       c.pageSize,
		ManyTools:      c.manyTools,
		CacheTTLMs:     c.cacheTTLMs,
		CacheScope:     c.cacheScope,
		Resources:      c.resources,
		OneCallAtATime: c.oneAtATime,
		Notify:         c.notify,
		OnCrash: func() {
			fmt.Fprintln(os.Stderr, testserver.CrashMessage)
			os.Exit(testserver.CrashExitCode)
		},
	}
	var srv *mcp.Server
	if c.minimal {
		srv = testserver.NewMinimal(opts)
	} else {
		srv = testserver.New(opts)
	}
	if c.listDelay > 0 {
		srv.AddReceivingMiddleware(delayMiddleware("tools/list", c.listDelay))
	}
	if c.readDelay > 0 {
		srv.AddReceivingMiddleware(delayMiddleware("resources/read", c.readDelay))
	}
	if c.noisy {
		srv.AddReceivingMiddleware(noisyMiddleware())
	}
	if c.refuseInit {
		srv.AddReceivingMiddleware(refuseMiddleware("initialize"))
	}
	if c.pollute && out != nil {
		srv.AddReceivingMiddleware(polluteMiddleware(out))
	}
	if c.flood > 0 && out != nil && c.transport == "stdio" {
		srv.AddReceivingMiddleware(floodMiddleware(out, c.flood))
	}
	if c.vendorNote && out != nil && c.transport == "stdio" {
		srv.AddReceivingMiddleware(vendorNoteMiddleware(out))
	}
	addHostileTools(srv, out)
	if c.deepSchema {
		addDeepSchemaTool(srv)
	}
	return srv
}

// stdinFilter returns the stdin filter the flags ask for.
func (c *config) stdinFilter() stdinFilter {
	return stdinFilter{
		ignoreDiscover: c.ignoreDiscover,
		ignorePing:     c.ignorePing,
		exitOnDiscover: c.exitOnDiscover,
		neverAnswer:    c.neverAnswer,
		stopReading:    c.stopReading,
		logMethods:     c.logMethods,
	}
}
