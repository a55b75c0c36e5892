package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// bench is everything a run has started.
type bench struct {
	s         settings
	kids      *children
	hc        *http.Client
	server    string // mcptestserver
	backend   map[string]endpoint
	gw        map[string]*proxy // the gateway host per backend
	gwURL     map[string]string // its URL
	floor     *proxy            // the floor of any HTTP gateway (floor.go)
	floorURL  string
	anchors   []*anchor // in front of the stdio server
	notes     []string  // what could not be measured and why
	res       results
	loadStart string // load average when measuring started
}

// results are every cell of the run.
type results struct {
	cost []costCell
	load []loadCell
	idle []idleCell
	cold map[string][]time.Duration
}

func drive(ctx context.Context, kids *children, s settings) error {
	dir, err := os.MkdirTemp("", "gatewaycost")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{s: s, kids: kids, hc: httpClient(), gw: map[string]*proxy{}, gwURL: map[string]string{},
		res: results{cold: map[string][]time.Duration{}}}
	b.server = filepath.Join(dir, "mcptestserver")
	self := filepath.Join(dir, "gatewaycost")
	cli := filepath.Join(dir, "mcpadapter")
	log.Print("== build")
	for out, pkg := range map[string]string{
		b.server: "github.com/mcpadapter/mcpadapter/internal/testserver/cmd/mcptestserver",
		self:     "github.com/mcpadapter/mcpadapter/bench/cmd/gatewaycost",
		cli:      "github.com/mcpadapter/mcpadapter/cmd/mcpadapter",
	} {
		if err := goBuild(ctx, out, pkg); err != nil {
			return err
		}
	}

	// The backends: one HTTP server for every client; stdio servers are
	// started by each client (and by the gateway, and by the anchors).
	hcmd := commandOf(b.server, "-transport", "http", "-addr", "127.0.0.1:0", "-stateless", "-minimal")
	line, err := kids.startListening(hcmd, true, "listening on ", 30*time.Second)
	if err != nil {
		return err
	}
	httpURL := line[len("listening on "):]
	b.backend = map[string]endpoint{"http": {url: httpURL}, "stdio": {stdio: []string{b.server, "-minimal"}}}
	cfgHTTP, err := writeOne(dir, "http.json", fmt.Sprintf(`{"url":%q}`, httpURL))
	if err != nil {
		return err
	}
	entry, _ := json.Marshal(map[string]any{"command": b.server, "args": []string{"-minimal"}})
	cfgStdio, err := writeOne(dir, "stdio.json", string(entry))
	if err != nil {
		return err
	}
	for backend, cfg := range map[string]string{"http": cfgHTTP, "stdio": cfgStdio} {
		p, url, err := startHostGateway(kids, self, cfg, "gateway")
		if err != nil {
			return fmt.Errorf("gateway in front of the %s server: %w", backend, err)
		}
		b.gw[backend], b.gwURL[backend] = p, url
	}
	if b.floor, b.floorURL, err = startFloor(kids, self); err != nil {
		return fmt.Errorf("the floor: %w", err)
	}
	cold, err := writeConfig(dir, "cold.json", b.server, coldServers)
	if err != nil {
		return err
	}
	var node, npmDir string
	if !s.noAnchors {
		node, npmDir = b.startAnchors(ctx, dir, cfgStdio)
	} else {
		b.note("anchors: not run (-no-anchors)")
	}

	start := time.Now()
	b.loadStart = loadavg()
	if s.wants("cost") {
		log.Printf("== cost per call (%d runs × %d calls)", s.runs, s.n)
		for run := range s.runs {
			if err := b.costRun(ctx, run); err != nil {
				return err
			}
		}
	}
	// Idle sessions before the load: a process's RSS shrinks for a while
	// after a load, which would be read as negative memory per session.
	if s.wants("idle") {
		log.Printf("== idle sessions (%d)", s.idle)
		b.idleRows(ctx)
	}
	if s.wants("latency") {
		log.Printf("== latency under load (%s per cell)", s.duration)
		if err := b.loadRows(ctx); err != nil {
			return err
		}
	}
	if s.wants("cold") {
		log.Printf("== cold start, %d servers", coldServers)
		b.coldRows(ctx, cli, cold, node, npmDir, dir)
	}
	b.print(os.Stdout, time.Since(start), node, npmDir)
	return nil
}

func (b *bench) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	log.Print(msg)
	b.notes = append(b.notes, msg)
}

// startAnchors installs and starts the anchors; a failure is a note.
func (b *bench) startAnchors(ctx context.Context, dir, cfgStdio string) (node, npmDir string) {
	log.Print("== anchors")
	node = b.s.node
	if node == "" {
		var err error
		if node, err = nodeFromTestenv(ctx); err != nil {
			b.note("anchors: no Node 22: %v", err)
			return "", ""
		}
	}
	npmDir = b.s.anchorsDir
	if npmDir == "" {
		npmDir = filepath.Join(dir, "npm")
	}
	if err := npmAnchors(ctx, node, npmDir); err != nil {
		b.note("anchors: %v", err)
		return node, ""
	}
	for _, stateful := range []bool{true, false} {
		a, err := startSupergateway(ctx, b.kids, node, npmDir, b.server, stateful)
		if err != nil {
			b.note("supergateway (stateful %v): not run: %v", stateful, err)
			continue
		}
		b.anchors = append(b.anchors, a)
	}
	home := filepath.Join(dir, "hub-home")
	_ = os.MkdirAll(home, 0o700)
	a, err := startHub(ctx, b.kids, node, npmDir, cfgStdio, home)
	if err != nil {
		b.note("mcp-hub: not run: %v", err)
	} else {
		b.anchors = append(b.anchors, a)
	}
	if a, err := startMCPProxy(ctx, b.kids, node, npmDir, b.server); err != nil {
		b.note("mcp-proxy: not run: %v", err)
	} else {
		b.anchors = append(b.anchors, a)
	}
	return node, npmDir
}

// costRun measures every cost cell once, in an order rotated by run.
func (b *bench) costRun(ctx context.Context, run int) error {
	type cell struct {
		backend, era, path string
		ep                 endpoint
		p                  *proxy
	}
	var cells []cell
	for _, backend := range []string{"http", "stdio"} {
		for _, era := range b.s.eras {
			cells = append(cells,
				cell{backend, era, "direct", b.backend[backend], nil},
				cell{backend, era, "gateway", endpoint{url: b.gwURL[backend]}, b.gw[backend]},
				cell{backend, era, "floor", endpoint{url: b.floorURL}, b.floor})
			if backend != "stdio" {
				continue
			}
			for _, a := range b.anchors {
				if a.perRequest {
					continue // a process per call: the latency rows show it
				}
				cells = append(cells, cell{backend, era, a.name, a.ep, &a.proxy})
			}
		}
	}
	for i := range cells {
		c := cells[(i+run)%len(cells)]
		// The session lives in the context it was opened with (a legacy
		// SSE client's stream ends with it), so one context bounds both.
		cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		s, err := open(cctx, c.ep, c.era, b.hc)
		if err != nil {
			cancel()
			if c.p != nil && c.p.name != "gateway" {
				b.note("%s, %s client: %v", c.p.name, c.era, err)
				continue
			}
			return fmt.Errorf("%s %s %s: %w", c.backend, c.era, c.path, err)
		}
		m, err := measureCost(cctx, s, b.s.n, b.s.warmup, c.p, b.hc)
		s.close()
		cancel()
		if err != nil {
			if c.p != nil && c.p.name != "gateway" {
				b.note("%s, %s client: %v", c.p.name, c.era, err)
				continue
			}
			return fmt.Errorf("%s %s %s: %w", c.backend, c.era, c.path, err)
		}
		m.Backend, m.Era, m.Path = c.backend, c.era, c.path
		b.res.cost = append(b.res.cost, m)
	}
	log.Printf("run %d of %d done", run+1, b.s.runs)
	return nil
}

// loadRows measures every latency cell once, at 2025-11-25 (the version
// every anchor speaks).
func (b *bench) loadRows(ctx context.Context) error {
	for _, n := range b.s.clients {
		for _, backend := range []string{"http", "stdio"} {
			ep := b.backend[backend]
			direct := func(ctx context.Context) (*session, error) { return open(ctx, ep, era2025, b.hc) }
			c, err := measureLoad(ctx, n, b.s.duration, backend == "stdio", direct, nil)
			if err != nil {
				return fmt.Errorf("latency, direct %s, %d clients: %w", backend, n, err)
			}
			c.Backend, c.Path = backend, "direct"
			b.res.load = append(b.res.load, c)
			gwEP := endpoint{url: b.gwURL[backend]}
			viaGW := func(ctx context.Context) (*session, error) { return open(ctx, gwEP, era2025, b.hc) }
			c, err = measureLoad(ctx, n, b.s.duration, false, viaGW, b.gw[backend])
			if err != nil {
				return fmt.Errorf("latency, gateway %s, %d clients: %w", backend, n, err)
			}
			c.Backend, c.Path = backend, "gateway"
			b.res.load = append(b.res.load, c)
			log.Printf("latency: %s, %d clients done", backend, n)
		}
		for _, a := range b.anchors {
			if (a.perSession || a.perRequest) && n > b.s.anchorMax {
				// a process per session or per call
				b.note("%s at %d clients: not run (it starts a server process per session or per call; -anchor-max %d)", a.name, n, b.s.anchorMax)
				continue
			}
			aep := a.ep
			viaA := func(ctx context.Context) (*session, error) { return open(ctx, aep, era2025, b.hc) }
			c, err := measureLoad(ctx, n, b.s.duration, false, viaA, &a.proxy)
			if err != nil {
				b.note("%s at %d clients: %v", a.name, n, err)
				continue
			}
			c.Backend, c.Path = "stdio", a.name
			b.res.load = append(b.res.load, c)
		}
	}
	return nil
}

// idleRows measures memory per idle session in the gateway (HTTP
// backend: the group holds the gateway alone) and in each anchor; with
// -idle-own-conns each session has a client of its own (openOwn).
func (b *bench) idleRows(ctx context.Context) {
	opener := func(ep endpoint) func(context.Context) (*session, error) {
		if b.s.idleOwnConns {
			return func(ctx context.Context) (*session, error) { return openOwn(ctx, ep, era2025) }
		}
		return func(ctx context.Context) (*session, error) { return open(ctx, ep, era2025, b.hc) }
	}
	c, err := measureIdle(ctx, b.s.idle, opener(endpoint{url: b.gwURL["http"]}), b.gw["http"])
	if err != nil {
		b.note("idle sessions, gateway: %v", err)
	} else {
		c.Path = "gateway"
		b.logIdle(c)
		b.res.idle = append(b.res.idle, c)
	}
	for _, a := range b.anchors {
		if a.perRequest {
			continue // no session to hold
		}
		n := b.s.idle
		if a.perSession {
			n = min(n, b.s.anchorMax)
		}
		c, err := measureIdle(ctx, n, opener(a.ep), &a.proxy)
		if err != nil {
			b.note("idle sessions, %s: %v", a.name, err)
			continue
		}
		c.Path = a.name
		b.logIdle(c)
		b.res.idle = append(b.res.idle, c)
	}
}

// logIdle logs the RSS of c's proxy after each step.
func (b *bench) logIdle(c idleCell) {
	mib := make([]string, len(c.Steps))
	for i, r := range c.Steps {
		mib[i] = fmt.Sprintf("%.1f", float64(r)/(1<<20))
	}
	log.Printf("idle sessions, %s: RSS %.1f MiB before, after each step (MiB): %s", c.Path, float64(c.Before)/(1<<20), strings.Join(mib, " "))
}

// coldRows times the cold start of the 10-server config, runs times each.
func (b *bench) coldRows(ctx context.Context, cli, cold, node, npmDir, dir string) {
	want := coldServers * 2 // echo and slow
	for range b.s.runs {
		if d, err := coldDirect(ctx, b.server); err != nil {
			b.note("cold start, direct: %v", err)
		} else {
			b.res.cold["direct"] = append(b.res.cold["direct"], d)
		}
		if d, err := coldCLI(ctx, b.kids, cli, cold, want, b.hc); err != nil {
			b.note("cold start, mcpadapter serve: %v", err)
		} else {
			b.res.cold["gateway"] = append(b.res.cold["gateway"], d)
		}
		if npmDir == "" {
			continue
		}
		start := time.Now()
		home := filepath.Join(dir, "hub-home-cold")
		_ = os.MkdirAll(home, 0o700)
		a, err := startHub(ctx, b.kids, node, npmDir, cold, home)
		if err != nil {
			b.note("cold start, mcp-hub: %v", err)
			continue
		}
		d, err := untilTools(ctx, start, a.ep, want, b.hc)
		b.kids.stop(a.cmd)
		if err != nil {
			b.note("cold start, mcp-hub: %v", err)
			continue
		}
		b.res.cold["mcp-hub"] = append(b.res.cold["mcp-hub"], d)
	}
}
