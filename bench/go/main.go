// Command bench measures one MCP client on one workload and prints one JSON
// result line on stdout. bench/run.sh runs it, and bench/js/bench.mjs (the
// @langchain/mcp-adapters side, which prints the same shape), many times
// and tabulates the medians.
//
// Usage:
//
//	bench -client mcpadapter|sdk -workload W -server S [server flags]
//	bench -report results.jsonl
//
// -cpuprofile FILE writes a CPU profile of the run.
//
// Clients:
//
//	mcpadapter  mcpadapter.New(target, nil), Adapter.Tools, Tool.Call: as an agent would
//	sdk         go-sdk directly: mcp.Client.Connect, ClientSession.ListTools and CallTool
//
// Workloads (the timed part of each is described in docs/dev/benchmarks.md):
//
//	connect    connect to one server and list its tools (ms)
//	echo       -n sequential echo calls (µs per call)
//	slow64     -n calls of slow {ms:-ms}, -inflight at a time (ms, wall time)
//	slow1      the same calls one by one (ms, wall time)
//	discover8  connect to 8 stdio test servers and list all their tools (ms)
//	rss8       peak RSS of this process with 8 stdio servers connected (MiB)
//
// Servers (-server): go-stdio (the test server binary -testserver over
// stdio), everything (node -everything stdio), go-http (-url, a streamable
// HTTP test server started by run.sh).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// result is the JSON line printed on stdout; bench.mjs prints the same.
type result struct {
	Client   string  `json:"client"`
	Server   string  `json:"server"`
	Workload string  `json:"workload"`
	Value    float64 `json:"value"` // the measurement, in Unit
	Unit     string  `json:"unit"`
	// Cold is the time of the first connect in the process, for connect
	// and discover8 (Value is the median of the later, warm ones); 0 for
	// other workloads.
	Cold float64 `json:"cold,omitempty"`
	// CPU is the client process's own CPU time (user + system, all
	// threads; not the servers') over the timed part, in Unit and per
	// what Value is per: warm iteration (mean), call, or batch of calls.
	CPU float64 `json:"cpu,omitempty"`
	N   int     `json:"n,omitempty"` // calls or iterations measured
}

type flags struct {
	client, workload, server string
	testserver, node, every  string
	url                      string
	n, inflight, ms, iters   int
	warmup                   int
}

func main() {
	var f flags
	flag.StringVar(&f.client, "client", "mcpadapter", "client: mcpadapter or sdk")
	flag.StringVar(&f.workload, "workload", "echo", "workload: connect, echo, slow64, slow1, discover8, rss8")
	flag.StringVar(&f.server, "server", "go-stdio", "server: go-stdio, everything, go-http")
	flag.StringVar(&f.testserver, "testserver", "", "path of the mcptestserver binary")
	flag.StringVar(&f.node, "node", "node", "path of the Node 22 binary (server everything)")
	flag.StringVar(&f.every, "everything", "", "path of server-everything's dist/index.js")
	flag.StringVar(&f.url, "url", "", "URL of the streamable HTTP test server (server go-http)")
	flag.IntVar(&f.n, "n", 0, "calls (echo: 2000, slow64/slow1: 256)")
	flag.IntVar(&f.inflight, "inflight", 64, "slow64: calls in flight")
	flag.IntVar(&f.ms, "ms", 10, "slow64/slow1: server sleep per call, in ms")
	flag.IntVar(&f.iters, "iters", 3, "connect/discover8: timed iterations after the cold one")
	flag.IntVar(&f.warmup, "warmup", 100, "echo: untimed calls first")
	reportFile := flag.String("report", "", "print the markdown table of the JSON result lines in this file, and exit")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if *reportFile != "" {
		if err := report(*reportFile, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench -report:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuProfile != "" {
		fh, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(fh)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench -cpuprofile:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := run(ctx, &f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench %s/%s/%s: %v\n", f.client, f.server, f.workload, err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	r.Client, r.Server, r.Workload = f.client, f.server, f.workload
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

// conn is one connected client, whichever library it uses.
type conn interface {
	// call calls tool with args and checks the result is not an error.
	call(ctx context.Context, tool string, args json.RawMessage) error
	close()
}

// connector connects to the server(s) and lists the tools: the "connect +
// list tools" of the workloads. It returns the number of tools listed.
type connector func(ctx context.Context) (conn, int, error)

func run(ctx context.Context, f *flags) (*result, error) {
	switch f.client {
	case "mcpadapter", "sdk":
	default:
		return nil, fmt.Errorf("unknown client %q", f.client)
	}
	switch f.workload {
	case "connect":
		return timeConnects(ctx, f, single(f))
	case "discover8":
		return timeConnects(ctx, f, multi(f, 8))
	case "echo":
		return echo(ctx, f)
	case "slow64", "slow1":
		return slow(ctx, f)
	case "rss8":
		return rss8(ctx, f)
	}
	return nil, fmt.Errorf("unknown workload %q", f.workload)
}

// timeConnects connects and lists 1+iters times, closing after each; the
// first is reported as cold, the median of the rest as the value.
func timeConnects(ctx context.Context, f *flags, connect connector) (*result, error) {
	var times []float64
	var cpu time.Duration
	for i := 0; i <= f.iters; i++ {
		cpu0 := cpuTime()
		start := time.Now()
		c, n, err := connect(ctx)
		el := time.Since(start)
		if i > 0 {
			cpu += cpuTime() - cpu0
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, errors.New("no tools listed")
		}
		c.close()
		times = append(times, ms(el))
	}
	return &result{Value: median(times[1:]), Cold: times[0], CPU: ms(cpu) / float64(f.iters), Unit: "ms", N: f.iters}, nil
}

func echo(ctx context.Context, f *flags) (*result, error) {
	n := orDefault(f.n, 2000)
	c, _, err := single(f)(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	key := "text"
	if f.server == "everything" {
		key = "message"
	}
	args, _ := json.Marshal(map[string]string{key: "hello"})
	for range f.warmup {
		if err := c.call(ctx, "echo", args); err != nil {
			return nil, err
		}
	}
	cpu0 := cpuTime()
	start := time.Now()
	for range n {
		if err := c.call(ctx, "echo", args); err != nil {
			return nil, err
		}
	}
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	return &result{Value: us(el) / float64(n), CPU: us(cpu) / float64(n), Unit: "us/call", N: n}, nil
}

func slow(ctx context.Context, f *flags) (*result, error) {
	if f.server == "everything" {
		return nil, errors.New("server-everything has no sleep tool")
	}
	n := orDefault(f.n, 256)
	inflight := f.inflight
	if f.workload == "slow1" {
		inflight = 1
	}
	c, _, err := single(f)(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	args := json.RawMessage(`{"ms":` + strconv.Itoa(f.ms) + `}`)
	// One call first, so that the connection is warm as in echo.
	if err := c.call(ctx, "slow", json.RawMessage(`{"ms":0}`)); err != nil {
		return nil, err
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, inflight)
	cpu0 := cpuTime()
	start := time.Now()
	for w := range inflight {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := c.call(ctx, "slow", args); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	cpu := cpuTime() - cpu0
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &result{Value: ms(el), CPU: ms(cpu), Unit: "ms", N: n}, nil
}

// rss8 connects to 8 stdio test servers, lists their tools, calls echo once
// on each, and reports this process's peak resident set (VmHWM): the
// servers are other processes and are not counted.
func rss8(ctx context.Context, f *flags) (*result, error) {
	c, _, err := multi(f, 8)(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	mc := c.(multiConn)
	for i := range 8 {
		if err := mc.callOn(ctx, i, "echo", json.RawMessage(`{"text":"hello"}`)); err != nil {
			return nil, err
		}
	}
	kb, err := vmHWM()
	if err != nil {
		return nil, err
	}
	return &result{Value: float64(kb) / 1024, Unit: "MiB"}, nil
}

// vmHWM reads the peak resident set size of this process, in kB.
func vmHWM() (int64, error) {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}

// single returns the connector for one server, per f.server and f.client.
func single(f *flags) connector {
	var path string
	var args []string
	switch f.server {
	case "go-stdio":
		path = f.testserver
	case "everything":
		path, args = f.node, []string{f.every, "stdio"}
	case "go-http":
		if f.client == "mcpadapter" {
			return adapterConnector(f.url)
		}
		return sdkConnector(func() mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: f.url} })
	default:
		return func(context.Context) (conn, int, error) { return nil, 0, fmt.Errorf("unknown server %q", f.server) }
	}
	if f.client == "mcpadapter" {
		return adapterConnector(mcpadapter.Command{Path: path, Args: args})
	}
	return sdkConnector(func() mcp.Transport { return &mcp.CommandTransport{Command: exec.Command(path, args...)} })
}

// multi returns the connector for k stdio test servers: one mcpServers
// config for mcpadapter, k concurrent go-sdk connections for sdk.
func multi(f *flags, k int) connector {
	if f.client == "mcpadapter" {
		servers := make(map[string]any, k)
		for i := range k {
			servers[fmt.Sprintf("s%d", i)] = map[string]any{"command": f.testserver}
		}
		doc, _ := json.Marshal(map[string]any{"mcpServers": servers})
		return func(ctx context.Context) (conn, int, error) {
			cfg, err := mcpadapter.ParseConfig(doc)
			if err != nil {
				return nil, 0, err
			}
			a, err := mcpadapter.New(cfg, nil)
			if err != nil {
				return nil, 0, err
			}
			tools, err := a.Tools(ctx)
			if err != nil {
				a.Close()
				return nil, 0, err
			}
			return newAdapterConn(a, tools), len(tools), nil
		}
	}
	one := sdkConnector(func() mcp.Transport { return &mcp.CommandTransport{Command: exec.Command(f.testserver)} })
	return func(ctx context.Context) (conn, int, error) {
		conns := make(sdkMulti, k)
		counts := make([]int, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for i := range k {
			wg.Go(func() {
				var c conn
				c, counts[i], errs[i] = one(ctx)
				if c != nil {
					conns[i] = c.(*sdkConn)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			conns.close()
			return nil, 0, err
		}
		total := 0
		for _, n := range counts {
			total += n
		}
		return conns, total, nil
	}
}

// multiConn is a conn to several servers.
type multiConn interface {
	conn
	callOn(ctx context.Context, server int, tool string, args json.RawMessage) error
}

// --- mcpadapter ---

type adapterConn struct {
	a     *mcpadapter.Adapter
	tools map[string]*mcpadapter.Tool // by model name
	names []string                    // model names of echo per server, in config order
}

func newAdapterConn(a *mcpadapter.Adapter, tools []*mcpadapter.Tool) *adapterConn {
	c := &adapterConn{a: a, tools: make(map[string]*mcpadapter.Tool, len(tools))}
	for _, t := range tools {
		c.tools[t.Name] = t
		if t.OriginalName == "echo" {
			c.names = append(c.names, t.Name)
		}
	}
	slices.Sort(c.names)
	return c
}

func adapterConnector(target any) connector {
	return func(ctx context.Context) (conn, int, error) {
		a, err := mcpadapter.New(target, nil)
		if err != nil {
			return nil, 0, err
		}
		tools, err := a.Tools(ctx)
		if err != nil {
			a.Close()
			return nil, 0, err
		}
		return newAdapterConn(a, tools), len(tools), nil
	}
}

func (c *adapterConn) call(ctx context.Context, tool string, args json.RawMessage) error {
	t := c.tools[tool]
	if t == nil {
		return fmt.Errorf("no tool %q", tool)
	}
	res, err := t.Call(ctx, args)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error: %s", tool, res.Text())
	}
	return nil
}

func (c *adapterConn) callOn(ctx context.Context, server int, _ string, args json.RawMessage) error {
	if server >= len(c.names) {
		return fmt.Errorf("no echo tool on server %d", server)
	}
	return c.call(ctx, c.names[server], args)
}

func (c *adapterConn) close() { _ = c.a.Close() }

// --- go-sdk ---

type sdkConn struct{ cs *mcp.ClientSession }

func sdkConnector(transport func() mcp.Transport) connector {
	return func(ctx context.Context) (conn, int, error) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(ctx, transport(), nil)
		if err != nil {
			return nil, 0, err
		}
		n := 0
		params := &mcp.ListToolsParams{}
		for {
			res, err := cs.ListTools(ctx, params)
			if err != nil {
				cs.Close()
				return nil, 0, err
			}
			n += len(res.Tools)
			if res.NextCursor == "" {
				break
			}
			params = &mcp.ListToolsParams{Cursor: res.NextCursor}
		}
		return &sdkConn{cs: cs}, n, nil
	}
}

func (c *sdkConn) call(ctx context.Context, tool string, args json.RawMessage) error {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error", tool)
	}
	return nil
}

func (c *sdkConn) close() { _ = c.cs.Close() }

type sdkMulti []*sdkConn

func (m sdkMulti) call(ctx context.Context, tool string, args json.RawMessage) error {
	return m.callOn(ctx, 0, tool, args)
}

func (m sdkMulti) callOn(ctx context.Context, server int, tool string, args json.RawMessage) error {
	return m[server].call(ctx, tool, args)
}

func (m sdkMulti) close() {
	var wg sync.WaitGroup
	for _, c := range m {
		if c != nil {
			wg.Go(c.close)
		}
	}
	wg.Wait()
}

// --- helpers ---

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// cpuTime returns the CPU time this process has used (user + system, all
// threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func orDefault(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
