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
	"runtime"
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
// gateway as handler, default options), plus statsPath. It prints
// "listening on URL" on stdout and runs until its standard input ends.
func runHost(path string) error {
	cfg, err := mcpadapter.LoadConfig(path)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	gw, err := gateway.New(gateway.FromConfig(cfg), &gateway.Options{Logger: logger})
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
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())
	go func() { _ = srv.Serve(ln) }()
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent is gone or done
	_ = srv.Close()
	return nil
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
