package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
)

// statsPath is where a gateway host answers with its allocation counters.
const statsPath = "/bench-gatewaycost/memstats"

// allocStats are a process's cumulative allocation counters.
type allocStats struct {
	TotalAlloc uint64 `json:"total_alloc"`
	Mallocs    uint64 `json:"mallocs"`
}

// runHost serves the gateway of the config at path on 127.0.0.1 as
// mcpadapter serve does (gateway.New, Start, an http.Server with the
// gateway as handler, its idle connections parked:
// gateway.ParkIdleConnections, serve's default options: TakeOverStreams),
// plus statsPath. It prints "listening on URL" on stdout and runs until its
// standard input ends.
func runHost(path string) error {
	if prefix := os.Getenv(profileEnv); prefix != "" {
		stop, err := profileCPU(fmt.Sprintf("%s-%d.pprof", prefix, os.Getpid()))
		if err != nil {
			return err
		}
		defer stop()
	}
	if prefix := os.Getenv(allocProfileEnv); prefix != "" {
		defer profileAllocs(fmt.Sprintf("%s-%d.pprof", prefix, os.Getpid()))()
	}
	if prefix := os.Getenv(traceEnv); prefix != "" {
		stop, err := traceRun(fmt.Sprintf("%s-%d.trace", prefix, os.Getpid()))
		if err != nil {
			return err
		}
		defer stop()
	}
	cfg, err := mcpadapter.LoadConfig(path)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.New(gateway.FromConfig(cfg), &gateway.Options{Logger: logger, TakeOverStreams: true})
	if err != nil {
		return err
	}
	defer gw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	err = gw.Start(ctx)
	cancel()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc(statsPath, func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(allocStats{TotalAlloc: ms.TotalAlloc, Mallocs: ms.Mallocs})
	})
	mux.Handle("/", gw)
	serveUntilDone(ln, mux, true)
	return nil
}

// serveUntilDone serves h on ln, its idle connections parked if park says
// so (gateway.ParkIdleConnections), saying "listening on URL" on stdout,
// until standard input ends (the parent is gone or done) or SIGTERM
// comes.
func serveUntilDone(ln net.Listener, h http.Handler, park bool) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	if park {
		ln = gateway.ParkIdleConnections(srv, ln)
	}
	go func() { _ = srv.Serve(ln) }()
	stdinDone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinDone) }()
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	select {
	case <-stdinDone:
	case <-term:
	}
	_ = srv.Close()
}

// profileEnv names the environment variable that has each gateway host
// write a CPU profile of its whole run to $GATEWAYCOST_CPUPROFILE-PID.pprof
// (for finding where the gateway's CPU goes; it adds its own cost).
const profileEnv = "GATEWAYCOST_CPUPROFILE"

// profileCPU starts a CPU profile written to path; stop ends it.
func profileCPU(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// allocProfileEnv names the environment variable that has each gateway
// host write a profile of every allocation of its run (MemProfileRate 1,
// which slows it down) to $GATEWAYCOST_ALLOCPROFILE-PID.pprof.
const allocProfileEnv = "GATEWAYCOST_ALLOCPROFILE"

// profileAllocs has every allocation sampled; the returned func writes the
// profile to path.
func profileAllocs(path string) (write func()) {
	runtime.MemProfileRate = 1
	return func() {
		f, err := os.Create(path)
		if err != nil {
			slog.Error("allocation profile", "err", err)
			return
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			slog.Error("allocation profile", "err", err)
		}
	}
}

// traceEnv names the environment variable that has each gateway host
// write an execution trace of its run (runtime/trace: goroutines made,
// blocked and woken) to $GATEWAYCOST_TRACE-PID.trace.
const traceEnv = "GATEWAYCOST_TRACE"

// traceRun starts an execution trace written to path; stop ends it.
func traceRun(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := trace.Start(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { trace.Stop(); f.Close() }, nil
}

// hostStats reads a gateway host's allocation counters.
func hostStats(ctx context.Context, hc *http.Client, base string) (allocStats, error) {
	var s allocStats
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+statsPath, nil)
	if err != nil {
		return s, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&s)
	return s, err
}
