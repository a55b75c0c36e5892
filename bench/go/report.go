package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// The -report mode reads the JSON result lines of many runs (bench/run.sh
// collects them) and prints the markdown table of medians and ratios, then
// the goals checked against it.

// clients in table order; the first is compared with the others.
var clients = []struct{ key, title string }{
	{"mcpadapter", "mcpadapter"},
	{"sdk", "go-sdk"},
	{"langchain", "@langchain/mcp-adapters"},
}

var serverTitles = map[string]string{
	"go-stdio":   "Go test server, stdio",
	"everything": "server-everything, stdio",
	"go-http":    "Go test server, streamable HTTP",
}

type row struct {
	title    string
	workload string
	server   string
	cold     bool // report the cold (first in process) value
	cpu      bool // report the client's CPU time
	speedup  bool // slow1 / slow64, higher is better
}

var rows = []row{
	{title: "connect + list tools, ms", workload: "connect", server: "go-stdio"},
	{title: "connect + list tools, ms", workload: "connect", server: "everything"},
	{title: "connect + list tools, ms", workload: "connect", server: "go-http"},
	{title: "connect + list tools, first in process, ms", workload: "connect", server: "go-stdio", cold: true},
	{title: "connect + list tools, first in process, ms", workload: "connect", server: "everything", cold: true},
	{title: "connect + list tools, first in process, ms", workload: "connect", server: "go-http", cold: true},
	{title: "echo, µs per call ({echo} sequential)", workload: "echo", server: "go-stdio"},
	{title: "echo, µs per call ({echo} sequential)", workload: "echo", server: "everything"},
	{title: "echo, µs per call ({echo} sequential)", workload: "echo", server: "go-http"},
	{title: "{slow} × slow 10 ms, 64 in flight, ms", workload: "slow64", server: "go-stdio"},
	{title: "{slow} × slow 10 ms, 64 in flight, ms", workload: "slow64", server: "go-http"},
	{title: "{slow} × slow 10 ms, one by one, ms", workload: "slow1", server: "go-stdio"},
	{title: "{slow} × slow 10 ms, one by one, ms", workload: "slow1", server: "go-http"},
	{title: "concurrency speedup, × (higher is better)", workload: "speedup", server: "go-stdio", speedup: true},
	{title: "concurrency speedup, × (higher is better)", workload: "speedup", server: "go-http", speedup: true},
	{title: "discovery: connect + list, 8 servers, ms", workload: "discover8", server: "go-stdio"},
	{title: "discovery: connect + list, 8 servers, first in process, ms", workload: "discover8", server: "go-stdio", cold: true},
	{title: "peak RSS of the client, 8 servers connected, MiB", workload: "rss8", server: "go-stdio"},
	{title: "client CPU, connect + list tools, ms", workload: "connect", server: "go-stdio", cpu: true},
	{title: "client CPU, connect + list tools, ms", workload: "connect", server: "go-http", cpu: true},
	{title: "client CPU, µs per echo call", workload: "echo", server: "go-stdio", cpu: true},
	{title: "client CPU, µs per echo call", workload: "echo", server: "everything", cpu: true},
	{title: "client CPU, µs per echo call", workload: "echo", server: "go-http", cpu: true},
	{title: "client CPU, {slow} × slow, 64 in flight, ms", workload: "slow64", server: "go-stdio", cpu: true},
	{title: "client CPU, {slow} × slow, 64 in flight, ms", workload: "slow64", server: "go-http", cpu: true},
	{title: "client CPU, discovery across 8 servers, ms", workload: "discover8", server: "go-stdio", cpu: true},
}

type key struct{ client, server, workload string }

// report prints the table of medians and the goals for the result lines
// in path.
func report(path string, w io.Writer) error {
	rs, err := readResults(path)
	if err != nil {
		return err
	}
	runs := rs.table(w)
	fmt.Fprintf(w, "\nMedians of %d runs per cell (the speedup: median of the runs' one-by-one / 64-in-flight); ratios are ratios of the medians, below 1 when mcpadapter is faster or smaller (above 1 for the speedup); — : not run (server-everything has no sleep tool).\n", runs)
	goals(w, rs.med, rs.paired, rs.calls["slow"])
	return nil
}

// results are the result lines of a run.sh run, per client, server and
// workload, in run order.
type results struct {
	values, colds, cpus map[key][]float64
	// calls are the calls per run of the echo and slow workloads, as run.
	calls map[string]int
}

// readResults reads the result lines in path.
func readResults(path string) (*results, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	rs := &results{
		values: map[key][]float64{},
		colds:  map[key][]float64{},
		cpus:   map[key][]float64{},
		calls:  map[string]int{"echo": 2000, "slow": 256}, // as run; see sizes in table
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var r result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s: %q: %v", path, line, err)
		}
		k := key{r.Client, r.Server, r.Workload}
		rs.values[k] = append(rs.values[k], r.Value)
		rs.colds[k] = append(rs.colds[k], r.Cold)
		rs.cpus[k] = append(rs.cpus[k], r.CPU)
		switch r.Workload {
		case "echo":
			rs.calls["echo"] = r.N
		case "slow64", "slow1":
			rs.calls["slow"] = r.N
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rs, nil
}

// series returns the per-run values of a row for a client, in run order
// (run.sh runs every combination once per run).
func (rs *results) series(rw row, client string) []float64 {
	if rw.speedup {
		one, many := rs.values[key{client, rw.server, "slow1"}], rs.values[key{client, rw.server, "slow64"}]
		out := make([]float64, 0, len(one))
		for i := range min(len(one), len(many)) {
			if many[i] > 0 {
				out = append(out, one[i]/many[i])
			}
		}
		return out
	}
	src := rs.values
	switch {
	case rw.cold:
		src = rs.colds
	case rw.cpu:
		src = rs.cpus
	}
	return src[key{client, rw.server, rw.workload}]
}

// med returns the median for a row and client, and the number of runs.
func (rs *results) med(rw row, client string) (float64, int) {
	xs := rs.series(rw, client)
	return median(xs), len(xs)
}

// paired returns the ratios mcpadapter / peer of the runs, each from one
// run, where the clients ran one after the other.
func (rs *results) paired(rw row, peer string) []float64 {
	a, b := rs.series(rw, "mcpadapter"), rs.series(rw, peer)
	var out []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

// table prints the medians of every row and client, and the ratios
// mcpadapter / peer, as a markdown table; it returns the most runs a cell
// has.
func (rs *results) table(w io.Writer) int {
	fmt.Fprintf(w, "| workload | server |")
	for _, c := range clients {
		fmt.Fprintf(w, " %s |", c.title)
	}
	for _, c := range clients[1:] {
		fmt.Fprintf(w, " mcpadapter / %s |", c.title)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|---|")
	fmt.Fprint(w, strings.Repeat("---:|", 2*len(clients)-1))
	fmt.Fprintln(w)
	runs := 0
	sizes := strings.NewReplacer("{echo}", strconv.Itoa(rs.calls["echo"]), "{slow}", strconv.Itoa(rs.calls["slow"]))
	for _, rw := range rows {
		fmt.Fprintf(w, "| %s | %s |", sizes.Replace(rw.title), serverTitles[rw.server])
		vals := make([]float64, len(clients))
		for i, c := range clients {
			v, n := rs.med(rw, c.key)
			vals[i] = v
			runs = max(runs, n)
			if n == 0 {
				fmt.Fprint(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %s |", format(v))
		}
		for i := range clients[1:] {
			if vals[0] == 0 || vals[i+1] == 0 {
				fmt.Fprint(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %.2f |", vals[0]/vals[i+1])
		}
		fmt.Fprintln(w)
	}
	return runs
}

// goals prints the goals checked against the medians.
func goals(w io.Writer, med func(row, string) (float64, int), paired func(row, string) []float64, slowN int) {
	// ratio returns mcpadapter / peer for a row as the ratio of the
	// medians and as the median of the per-run paired ratios, and a note
	// giving both with the paired ratios' range.
	ratio := func(rw row, peer string) (float64, float64, string, bool) {
		a, n := med(rw, "mcpadapter")
		b, m := med(rw, peer)
		p := slices.Clone(paired(rw, peer))
		if n == 0 || m == 0 || b == 0 || len(p) == 0 {
			return 0, 0, "", false
		}
		slices.Sort(p)
		note := fmt.Sprintf("ratio of medians %.2f, per-run paired ratios median %.2f (range %.2f–%.2f)", a/b, median(p), p[0], p[len(p)-1])
		return a / b, median(p), note, true
	}
	// verdict: met when both estimates meet the goal, NOT met when
	// neither does, mixed otherwise.
	verdict := func(x, y, goal float64, le bool) string {
		okX, okY := x <= goal, y <= goal
		if !le {
			okX, okY = x >= goal, y >= goal
		}
		switch {
		case okX && okY:
			return "met"
		case !okX && !okY:
			return "NOT met"
		}
		return "mixed (one estimate meets it)"
	}
	fmt.Fprintln(w, "\nGoals:")
	for _, s := range []string{"go-stdio", "everything", "go-http"} {
		rw := row{workload: "echo", server: s}
		if x, y, note, ok := ratio(rw, "langchain"); ok {
			fmt.Fprintf(w, "- per-call latency ≥ 2× better than @langchain/mcp-adapters (ratio ≤ 0.50), %s: %s: %s\n", serverTitles[s], note, verdict(x, y, 0.5, true))
		}
		if x, y, note, ok := ratio(rw, "sdk"); ok {
			fmt.Fprintf(w, "- per-call latency ≤ 1.05× raw go-sdk, %s: %s: %s\n", serverTitles[s], note, verdict(x, y, 1.05, true))
		}
	}
	rw := row{workload: "discover8", server: "go-stdio"}
	if x, y, note, ok := ratio(rw, "langchain"); ok {
		fmt.Fprintf(w, "- discovery across 8 servers ≥ 2× better than @langchain/mcp-adapters (ratio ≤ 0.50): %s: %s\n", note, verdict(x, y, 0.5, true))
	}
	if x, y, note, ok := ratio(rw, "sdk"); ok {
		fmt.Fprintf(w, "- discovery across 8 servers ≤ 1.05× raw go-sdk (8 concurrent connects): %s: %s\n", note, verdict(x, y, 1.05, true))
	}
	for _, s := range []string{"go-stdio", "go-http"} {
		if v, n := med(row{speedup: true, server: s}, "mcpadapter"); n > 0 {
			fmt.Fprintf(w, "- %d calls with 64 in flight ≥ 8× faster than one by one, %s: median speedup %.1f×: %s\n", slowN, serverTitles[s], v, verdict(v, v, 8, false))
		}
		if x, y, note, ok := ratio(row{workload: "slow64", server: s}, "sdk"); ok {
			fmt.Fprintf(w, "- 64 in flight ≤ 1.05× raw go-sdk, %s: %s: %s\n", serverTitles[s], note, verdict(x, y, 1.05, true))
		}
	}
}

// format prints v with about three significant digits.
func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
