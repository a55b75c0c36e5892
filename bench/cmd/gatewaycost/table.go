package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// medianOf returns the median of vs (0 for none).
func medianOf(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	v := slices.Clone(vs)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func (b *bench) print(w io.Writer, elapsed time.Duration, node, npmDir string) {
	fmt.Fprintf(w, "## gatewaycost\n\n`go run ./cmd/gatewaycost %s`, %s, %d cores, %s", strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.Version())
	if node != "" {
		if out, err := exec.Command(node, "--version").Output(); err == nil {
			fmt.Fprintf(w, ", Node %s", strings.TrimSpace(string(out)))
		}
	}
	if npmDir != "" {
		fmt.Fprintf(w, ", supergateway %s, mcp-hub %s, mcp-proxy %s", pkgVersion(npmDir, "supergateway"), pkgVersion(npmDir, "mcp-hub"), pkgVersion(npmDir, "mcp-proxy"))
	}
	fmt.Fprintf(w, "; measuring took %s; load average (1, 5, 15 min) at the start %s, at the end %s\n\n", elapsed.Round(time.Second), b.loadStart, loadavg())
	if b.s.wants("cost") {
		b.printCost(w)
	}
	if b.s.wants("latency") {
		b.printLoad(w)
	}
	if b.s.wants("idle") {
		b.printIdle(w)
	}
	if b.s.wants("cold") {
		b.printCold(w)
	}
	if len(b.notes) > 0 {
		fmt.Fprintln(w, "Not measured, or measured only in part:")
		fmt.Fprintln(w)
		for _, n := range b.notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		fmt.Fprintln(w)
	}
}

func (b *bench) printCost(w io.Writer) {
	fmt.Fprintf(w, "### Cost per call\n\n%d sequential echo calls per cell after %d untimed, median of %d runs. Client CPU: user+system of the client process (getrusage); proxy CPU: the gateway's or anchor's process, /proc/PID/stat (10 ms ticks, all threads); bytes: runtime.MemStats.TotalAlloc (the gateway's read from its own process; an anchor is not a Go process: —). Ratio: proxy CPU ÷ the direct call's own client CPU, same backend and era (goal ≤ 1.3). The floor is not a proxy: a net/http server in a process of its own that answers each request with a canned answer and has no server behind it (floor.go), the least CPU any HTTP gateway spends per call.\n\n", b.s.n, b.s.warmup, b.s.runs)
	fmt.Fprintln(w, "| backend | client | path | got | client CPU µs/call | proxy CPU µs/call | proxy ÷ direct client | client bytes/call | proxy bytes/call | wall µs/call |")
	fmt.Fprintln(w, "|---|---|---|---|---:|---:|---:|---:|---:|---:|")
	var order []string
	for _, c := range b.res.cost {
		k := c.Backend + "|" + c.Era + "|" + c.Path
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	slices.SortStableFunc(order, func(x, y string) int {
		xs, ys := strings.Split(x, "|"), strings.Split(y, "|")
		if c := strings.Compare(xs[0]+xs[1], ys[0]+ys[1]); c != 0 {
			return c
		}
		return pathRank(xs[2]) - pathRank(ys[2])
	})
	med := func(backend, era, path string, f func(costCell) float64) (float64, int) {
		var vs []float64
		for _, c := range b.res.cost {
			if c.Backend == backend && c.Era == era && c.Path == path {
				vs = append(vs, f(c))
			}
		}
		return medianOf(vs), len(vs)
	}
	for _, k := range order {
		p := strings.Split(k, "|")
		got := ""
		for _, c := range b.res.cost {
			if c.Backend == p[0] && c.Era == p[1] && c.Path == p[2] {
				got = c.Version
			}
		}
		ccpu, runs := med(p[0], p[1], p[2], func(c costCell) float64 { return c.ClientCPUus })
		pcpu, _ := med(p[0], p[1], p[2], func(c costCell) float64 { return c.ProxyCPUus })
		direct, _ := med(p[0], p[1], "direct", func(c costCell) float64 { return c.ClientCPUus })
		cb, _ := med(p[0], p[1], p[2], func(c costCell) float64 { return c.ClientBytes })
		pb, _ := med(p[0], p[1], p[2], func(c costCell) float64 { return c.ProxyBytes })
		wall, _ := med(p[0], p[1], p[2], func(c costCell) float64 { return c.WallUs })
		proxyCPU, ratio, proxyBytes := "—", "—", "—"
		if p[2] != "direct" {
			proxyCPU = fmt.Sprintf("%.0f", pcpu)
			if direct > 0 {
				ratio = fmt.Sprintf("%.2f×", pcpu/direct)
			}
			if pb >= 0 {
				proxyBytes = fmt.Sprintf("%.0f", pb)
			}
		}
		path := p[2]
		if runs != b.s.runs {
			path += fmt.Sprintf(" (%d runs)", runs)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.0f | %s | %s | %.0f | %s | %.0f |\n", p[0], p[1], path, got, ccpu, proxyCPU, ratio, cb, proxyBytes, wall)
	}
	fmt.Fprintln(w)
}

func pathRank(p string) int {
	switch p {
	case "direct":
		return 0
	case "gateway":
		return 1
	case "floor":
		return 2
	}
	return 3
}

func (b *bench) printLoad(w io.Writer) {
	fmt.Fprintf(w, "### Latency under load\n\nClients at 2025-11-25, each session calling echo one call after another for %s (the stdio server has one client: direct, all workers share its one session). Added: minus the direct row of the same backend and client count. Proxy CPU per call: the proxy process's CPU over the cell ÷ calls; calls per proxy CPU-second = 10⁶ ÷ that. Client CPU per call: the client process's (all its sessions'), which shares the machine's cores with the proxy: a client transport that costs more leaves the proxy less CPU when the cores are busy.\n\n", b.s.duration)
	fmt.Fprintln(w, "| backend | clients | path | p50 ms | p99 ms | p50 added ms | p99 added ms | calls/s | proxy CPU µs/call | calls per proxy CPU-second | client CPU µs/call | errors |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range b.res.load {
		var d *loadCell
		for i := range b.res.load {
			x := &b.res.load[i]
			if x.Backend == c.Backend && x.Clients == c.Clients && x.Path == "direct" {
				d = x
			}
		}
		added50, added99, pcpu, perSec := "—", "—", "—", "—"
		if c.Path != "direct" && d != nil {
			added50 = fmt.Sprintf("%+.2f", (c.P50us-d.P50us)/1000)
			added99 = fmt.Sprintf("%+.2f", (c.P99us-d.P99us)/1000)
		}
		if c.Path != "direct" {
			pcpu = fmt.Sprintf("%.0f", c.ProxyCPUPerCall)
			if c.ProxyCPUPerCall > 0 {
				perSec = fmt.Sprintf("%.0f", 1e6/c.ProxyCPUPerCall)
			}
		}
		errs := fmt.Sprint(c.Errors)
		if c.Errors > 0 {
			errs += " (" + firstLine(c.FirstErr) + ")"
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.2f | %.2f | %s | %s | %.0f | %s | %s | %.0f | %s |\n", c.Backend, c.Clients, c.Path, c.P50us/1000, c.P99us/1000, added50, added99, c.CallsPerSec, pcpu, perSec, c.ClientCPUPerCall, errs)
	}
	fmt.Fprintln(w)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func (b *bench) printIdle(w io.Writer) {
	fmt.Fprintln(w, "### Memory per idle client session")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Sessions opened at 2025-11-25 (initialize, tools/list) and left idle, in %d equal steps, a second after each; RSS (VmRSS) summed over the proxy's process group, which holds the servers an anchor starts per session, before the first step and after each. The first step is a warm-up: a garbage-collected heap (Go's, Node's) with room to spare takes sessions in at no RSS until it grows. KiB per session: the least-squares slope of RSS over the sessions open from the first step's end on; overall: (RSS after − RSS before) ÷ sessions. (A 2026-07-28 client has no session to hold.)", idleSteps)
	if b.s.idleOwnConns {
		fmt.Fprint(w, " Each session has an http.Client of its own (-idle-own-conns): besides its standalone stream it keeps a keep-alive connection of its own, as a client process does.")
	} else {
		fmt.Fprint(w, " The sessions share one http.Client's keep-alive connections (a few for all); each holds its standalone stream.")
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| proxy | sessions (warm-up) | version | RSS before MiB | after warm-up MiB | after MiB | processes before → after | KiB per session | overall KiB per session |")
	fmt.Fprintln(w, "|---|---:|---|---:|---:|---:|---|---:|---:|")
	for _, c := range b.res.idle {
		fmt.Fprintf(w, "| %s | %d (%d) | %s | %.1f | %.1f | %.1f | %d → %d | %.1f | %.1f |\n", c.Path, c.Sessions, c.Warm, c.NegotiatedVersion, float64(c.Before)/(1<<20), float64(c.Warmed)/(1<<20), float64(c.After)/(1<<20), c.Processes0, c.Processes1, c.BytesPerSession/1024, c.Overall/1024)
	}
	fmt.Fprintln(w)
}

func (b *bench) printCold(w io.Writer) {
	fmt.Fprintf(w, "### Cold start, %d stdio servers\n\nFrom exec to a client (2025-11-25) holding all %d tools; direct: a client that starts the %d servers itself, all at once, and lists each. Median of %d runs.\n\n", coldServers, coldServers*2, coldServers, b.s.runs)
	fmt.Fprintln(w, "| what | median ms | min ms | max ms | runs |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, k := range []string{"direct", "gateway", "mcp-hub"} {
		ds := b.res.cold[k]
		if len(ds) == 0 {
			continue
		}
		vs := make([]float64, len(ds))
		for i, d := range ds {
			vs[i] = float64(d.Microseconds()) / 1000
		}
		name := k
		if k == "gateway" {
			name = "mcpadapter serve"
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f | %d |\n", name, medianOf(vs), slices.Min(vs), slices.Max(vs), len(vs))
	}
	fmt.Fprintln(w)
}
