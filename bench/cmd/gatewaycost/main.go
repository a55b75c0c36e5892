// Command gatewaycost measures what the gateway (mcpadapter serve, the
// gateway package) adds to a tool call over calling the server directly,
// in one run, against the same backend servers:
//
//   - cost per call: 2,000 sequential echo calls from a go-sdk client at
//     2025-11-25 and at 2026-07-28, directly and through the gateway, to
//     the Go test server over streamable HTTP (stateless, loopback) and
//     over stdio: the client's CPU and bytes per call, and the gateway
//     process's CPU (/proc/PID/stat, all threads) and bytes per call
//     (runtime.MemStats, read from the gateway process);
//   - latency: p50 and p99 of calls made for -duration by 1, 64 and 512
//     concurrent client sessions, calls per second, and the gateway's CPU
//     per call under that load;
//   - memory per idle client session: the RSS of the gateway's process
//     group as -idle sessions are opened in steps, the first a warm-up
//     (the slope of RSS over the sessions open after it);
//   - cold start: `mcpadapter serve` of a 10-server config, from exec to a
//     client holding all 20 tools, next to a client that starts the 10
//     servers itself.
//
// Anchors in the same run, in front of the same stdio server: supergateway
// 4.0 (stdio→streamable HTTP, stateful and stateless), mcp-proxy 6.7
// (stdio→streamable HTTP, one server for all sessions) and mcp-hub 4.2 (npm,
// Node 22 from internal/testenv), which also runs the cold start.
// An anchor that cannot be installed or run is reported and skipped.
//
// The gateway under measurement is this program re-run with -host CONFIG:
// the gateway package's handler in an http.Server with default options,
// as mcpadapter serve runs it, plus one path that reports the process's
// allocation counters. Every process it starts is in a process group of
// its own and killed at exit.
//
// With GATEWAYCOST_CPUPROFILE=PREFIX in its environment, each gateway host
// writes a CPU profile of its run to PREFIX-PID.pprof; with
// GATEWAYCOST_ALLOCPROFILE=PREFIX, a profile of every allocation
// (PREFIX-PID.pprof); with GATEWAYCOST_TRACE=PREFIX, an execution trace
// (PREFIX-PID.trace). Each adds its own cost to the gateway's.
//
// Usage, from the bench directory:
//
//	go run ./cmd/gatewaycost [-runs 3] [-n 2000] [-duration 3s] [-clients 1,64,512] [-idle 200] [-only cost,idle,latency,cold] [-eras 2026-07-28]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// settings are the flags of a run.
type settings struct {
	runs, n, warmup, idle, anchorMax int
	duration                         time.Duration
	clients                          []int
	anchorsDir, node                 string
	noAnchors, idleOwnConns          bool
	rows                             map[string]bool // the rows measured: cost, idle, latency, cold
	eras                             []string
}

// rowNames are the rows a run can measure (-only), in the order it
// measures them.
var rowNames = []string{"cost", "idle", "latency", "cold"}

// wants reports whether the run measures row.
func (s settings) wants(row string) bool { return s.rows[row] }

func main() {
	log.SetFlags(0)
	var s settings
	host := flag.String("host", "", "serve the gateway of this config (internal)")
	floor := flag.Bool("floor", false, "serve the floor: canned answers, no server behind (internal)")
	clients := flag.String("clients", "1,64,512", "concurrent client sessions of the latency rows")
	flag.IntVar(&s.runs, "runs", 3, "runs of the cost and cold-start cells (the table shows medians)")
	flag.IntVar(&s.n, "n", 2000, "sequential calls measured per cost cell")
	flag.IntVar(&s.warmup, "warmup", 200, "untimed calls before each cost cell")
	flag.DurationVar(&s.duration, "duration", 3*time.Second, "how long each latency cell calls")
	flag.IntVar(&s.idle, "idle", 200, "idle client sessions opened for the memory row")
	flag.IntVar(&s.anchorMax, "anchor-max", 64, "most sessions opened to an anchor that starts a server per session or per call (supergateway)")
	flag.StringVar(&s.anchorsDir, "anchors", "", "npm directory with supergateway, mcp-hub and mcp-proxy (default: installed into a temporary one)")
	flag.StringVar(&s.node, "node", "", "Node 22 (default: from go run ./internal/testenv/cmd/npmsetup)")
	flag.BoolVar(&s.noAnchors, "no-anchors", false, "measure the gateway only")
	flag.BoolVar(&s.idleOwnConns, "idle-own-conns", false, "give each idle session of the memory row an http.Client of its own, so that it keeps its own keep-alive connection (by default they share one client's)")
	costOnly := flag.Bool("cost-only", false, "measure the cost per call only (-only cost)")
	only := flag.String("only", strings.Join(rowNames, ","), "the rows to measure, of "+strings.Join(rowNames, ","))
	eras := flag.String("eras", era2025+","+era2026, "client versions of the cost cells")
	flag.Parse()
	s.eras = strings.Split(*eras, ",")
	if *costOnly {
		*only = "cost"
	}
	s.rows = map[string]bool{}
	for _, r := range strings.Split(*only, ",") {
		r = strings.TrimSpace(r)
		if !slices.Contains(rowNames, r) {
			log.Fatalf("-only %q: want rows of %s", *only, strings.Join(rowNames, ","))
		}
		s.rows[r] = true
	}
	if *floor {
		if err := runFloor(); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *host != "" {
		if err := runHost(*host); err != nil {
			log.Fatal(err)
		}
		return
	}
	for _, f := range strings.Split(*clients, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 || v > 4096 {
			log.Fatalf("-clients %q: want numbers 1..4096", *clients)
		}
		s.clients = append(s.clients, v)
	}
	if s.runs < 1 || s.n < 1 || s.idle < 1 {
		log.Fatal("-runs, -n and -idle want at least 1")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kids := &children{}
	err := drive(ctx, kids, s)
	kids.killAll()
	if err != nil {
		log.Fatal(err)
	}
}

// goBuild builds pkg into out.
func goBuild(ctx context.Context, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// nodeFromTestenv runs npmsetup (from the repository root, the parent of
// the bench module) and returns its node=.
func nodeFromTestenv(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "run", "./internal/testenv/cmd/npmsetup")
	cmd.Dir = ".."
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("npmsetup: %w", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "node="); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("npmsetup printed no node=: %s", out)
}

// startHostGateway starts this program with -host config and returns the
// gateway's URL and the host as a proxy.
func startHostGateway(kids *children, self, config, name string) (*proxy, string, error) {
	p, url, err := startSelf(kids, self, name, "-host", config)
	if err != nil {
		return nil, "", err
	}
	p.stats = strings.TrimSuffix(url, "/mcp")
	return p, url, nil
}

// startFloor starts the floor (runFloor) and returns it as a proxy.
func startFloor(kids *children, self string) (*proxy, string, error) {
	return startSelf(kids, self, "floor", "-floor")
}

// startSelf starts this program with args, as a process that serves until
// its standard input is closed, and returns it and its URL.
func startSelf(kids *children, self, name string, args ...string) (*proxy, string, error) {
	cmd := exec.Command(self, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	kids.hold(in)
	line, err := kids.startListening(cmd, false, "listening on ", time.Minute)
	if err != nil {
		return nil, "", err
	}
	return &proxy{name: name, pid: cmd.Process.Pid}, strings.TrimSpace(strings.TrimPrefix(line, "listening on ")), nil
}

// writeOne writes a config of one server named b.
func writeOne(dir, name, entry string) (string, error) {
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, []byte(`{"mcpServers":{"b":`+entry+`}}`), 0o600)
}
