// Command callcost measures what one tool call costs the client: CPU time,
// bytes and objects allocated, and (over HTTP) new TCP connections, for
// 2,000 sequential echo calls to the mcptestserver test server, over stdio
// and streamable HTTP, in both protocol eras, for four clients side by
// side in one run:
//
//	limit    a minimal hand-written client (limit.go): the floor
//	fast     mcpadapter as an agent uses it (New, Tools, Tool.Call), with
//	         its fast path (the default)
//	sdkpath  the same with ClientOptions.DisableFastPath: go-sdk's path
//	gosdk    go-sdk alone: mcp.Client.Connect and ClientSession.CallTool
//
// Every measurement runs in a fresh process (this program, re-run with
// -cell), after 200 warm-up calls; the table shows the median of -runs
// runs (5), and each client's ratio to the limit. CPU is the process's
// user+system time (getrusage), so it includes go-sdk's and net/http's
// goroutines but not the server's. With -callgrind, instructions per call
// are counted too: each cell runs under valgrind's callgrind with
// GOMAXPROCS=1 (and asynchronous preemption off) for 100 and for 600
// calls, and the difference is divided by 500 (perf stat counts no
// instructions in this machine's containers). Binaries are built without
// cgo, which callgrind cannot follow.
//
// Usage, from the bench directory:
//
//	go run ./cmd/callcost [-runs 5] [-n 2000] [-callgrind] [-json FILE]
//	go run ./cmd/callcost -report FILE   # the table of earlier -json output
//
// -runs 0 -callgrind counts instructions only.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	era2025 = "2025-11-25"
	era2026 = "2026-07-28"
)

var (
	transports = []string{"stdio", "http"}
	eras       = []string{era2025, era2026}
	clients    = []string{"limit", "fast", "sdkpath", "gosdk"}
)

func main() {
	log.SetFlags(0)
	var (
		cell      = flag.String("cell", "", "measure one cell: transport/era/client (internal)")
		server    = flag.String("server", "", "the mcptestserver binary (built when empty)")
		url       = flag.String("url", "", "the HTTP server's URL, for -cell over HTTP")
		n         = flag.Int("n", 2000, "calls measured per run")
		runs      = flag.Int("runs", 5, "runs per cell (the table shows medians)")
		callgrind = flag.Bool("callgrind", false, "also count instructions per call with valgrind's callgrind")
		jsonOut   = flag.String("json", "", "also write every measurement to this file, one JSON line each")
		report    = flag.String("report", "", "print the table of the JSON lines of earlier runs (-json files, concatenated) and exit")
		cpuProf   = flag.String("cpuprofile", "", "with -cell: write a CPU profile of the measured calls to this file")
		memProf   = flag.String("memprofile", "", "with -cell: write an allocation profile of the measured calls (every allocation) to this file")
		noClose   = flag.Bool("exit-without-close", false, "with -cell: exit without closing the client (callgrind trips over the signals of a process group being stopped)")
	)
	flag.Parse()
	if *cell != "" {
		parts := strings.Split(*cell, "/")
		if len(parts) != 3 {
			log.Fatalf("-cell %q: want transport/era/client", *cell)
		}
		m, c, err := measure(parts[0], parts[1], parts[2], *server, *url, *n, profiles{cpu: *cpuProf, mem: *memProf})
		if err != nil {
			log.Fatalf("%s: %v", *cell, err)
		}
		_ = json.NewEncoder(os.Stdout).Encode(m)
		if !*noClose {
			_ = c.close()
		}
		return
	}
	if *report != "" {
		if err := printReport(*report); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := drive(*server, *n, *runs, *callgrind, *jsonOut); err != nil {
		log.Fatal(err)
	}
}

// drive builds what it needs, starts the HTTP servers, runs every cell
// runs times (the clients' order rotated each run) and prints the table.
func drive(server string, n, runs int, callgrind bool, jsonOut string) error {
	dir, err := os.MkdirTemp("", "callcost")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if server == "" {
		server = filepath.Join(dir, "mcptestserver")
		if err := goBuild(server, "github.com/mcpadapter/mcpadapter/internal/testserver/cmd/mcptestserver"); err != nil {
			return err
		}
	}
	self := filepath.Join(dir, "callcost")
	if err := goBuild(self, "github.com/mcpadapter/mcpadapter/bench/cmd/callcost"); err != nil {
		return err
	}
	urls := map[string]string{}
	for _, era := range eras {
		flags := []string{"-transport", "http", "-addr", "127.0.0.1:0", "-minimal"}
		if era == era2025 {
			flags = append(flags, "-era", "legacy")
		} else {
			flags = append(flags, "-stateless")
		}
		u, stop, err := startHTTP(server, flags)
		if err != nil {
			return err
		}
		defer stop()
		urls[era] = u
	}
	var all []measurement
	var out io.Writer = io.Discard
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}
	for run := range runs {
		for _, tr := range transports {
			for _, era := range eras {
				for i := range clients {
					cl := clients[(i+run)%len(clients)]
					m, err := runCell(self, server, urls[era], tr, era, cl, n)
					if err != nil {
						return err
					}
					all = append(all, m)
					_ = json.NewEncoder(out).Encode(m)
				}
			}
		}
		log.Printf("run %d of %d done", run+1, runs)
	}
	instr := map[string]float64{}
	if callgrind {
		for _, tr := range transports {
			for _, era := range eras {
				for _, cl := range clients {
					// callgrind sometimes trips over a signal (an
					// assertion in its own code): try again, and leave
					// the cell empty if it keeps failing.
					for try := 0; try < 3; try++ {
						v, err := countInstructions(self, server, urls[era], tr, era, cl)
						if err == nil {
							instr[tr+"/"+era+"/"+cl] = v
							_ = json.NewEncoder(out).Encode(instrLine{Cell: tr + "/" + era + "/" + cl, Instructions: v})
							break
						}
						log.Printf("%s/%s/%s: callgrind failed (try %d of 3): %.200s", tr, era, cl, try+1, err)
					}
				}
			}
		}
	}
	if runs == 0 {
		printInstructions(os.Stdout, instr)
		return nil
	}
	printTable(os.Stdout, all, instr, n, runs)
	return nil
}

// goBuild builds pkg without cgo: callgrind cannot follow a cgo binary's
// threads (its signal bookkeeping asserts).
func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// startHTTP starts the test server over HTTP and returns its URL.
func startHTTP(server string, flags []string) (string, func(), error) {
	cmd := exec.Command(server, flags...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(stderr).ReadString('\n')
	u, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		stop()
		return "", nil, fmt.Errorf("the HTTP test server printed %q (%v), not its URL", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }() // ends when the server does
	return u, stop, nil
}

// runCell measures one cell in a process of its own.
func runCell(self, server, url, tr, era, cl string, n int) (measurement, error) {
	cmd := exec.Command(self, "-cell", tr+"/"+era+"/"+cl, "-server", server, "-url", url, "-n", fmt.Sprint(n))
	cmd.Stderr = os.Stderr
	timer := time.AfterFunc(5*time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	var m measurement
	if err != nil {
		return m, fmt.Errorf("%s/%s/%s: %w", tr, era, cl, err)
	}
	return m, json.Unmarshal(bytes.TrimSpace(out), &m)
}

// countInstructions runs the cell under callgrind for 100 and 600 calls
// and returns the instructions per call of the difference.
func countInstructions(self, server, url, tr, era, cl string) (float64, error) {
	var ir [2]float64
	for i, n := range []int{100, 600} {
		outFile := filepath.Join(os.TempDir(), fmt.Sprintf("callcost-cg-%d-%d.out", os.Getpid(), i))
		cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+outFile,
			self, "-cell", tr+"/"+era+"/"+cl, "-server", server, "-url", url, "-n", fmt.Sprint(n), "-exit-without-close")
		// Asynchronous preemption signals also trip callgrind, and
		// valgrind 3.19 cannot decode the RDTSCP the Go 1.26 runtime
		// uses when the CPU has it.
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("callgrind %s/%s/%s: %w: %s", tr, era, cl, err, stderr.Bytes())
		}
		v, err := callgrindTotal(outFile)
		os.Remove(outFile)
		if err != nil {
			return 0, err
		}
		ir[i] = v
	}
	return (ir[1] - ir[0]) / 500, nil
}

// callgrindTotal reads the total instruction count of a callgrind file.
func callgrindTotal(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "totals: "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			return f, err
		}
		if v, ok := strings.CutPrefix(line, "summary: "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			return f, err
		}
	}
	return 0, fmt.Errorf("%s: no totals", path)
}
