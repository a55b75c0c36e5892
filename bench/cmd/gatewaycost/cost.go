package main

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"syscall"
	"time"
)

// proxy is a process between the client and the server: the gateway or
// an anchor. stats is the gateway host's base URL for allocation counters
// (empty for an anchor: not a Go process).
type proxy struct {
	name  string
	pid   int
	stats string
}

// costCell is one run of sequential calls on one path.
type costCell struct {
	Backend, Era, Path string
	Version            string  // the version the client got
	ClientCPUus        float64 // the client process's CPU per call
	ProxyCPUus         float64 // the proxy process's CPU per call (0: direct)
	ClientBytes        float64 // bytes the client allocated per call
	ProxyBytes         float64 // bytes the proxy allocated per call (-1: unknown)
	WallUs             float64
}

// measureCost makes warmup untimed calls, then n calls one by one, and
// reads the client's and the proxy's CPU and allocations around them.
func measureCost(ctx context.Context, s *session, n, warmup int, p *proxy, hc *http.Client) (costCell, error) {
	var c costCell
	c.Version = s.version
	c.ProxyBytes = -1
	for range warmup {
		if err := s.call(ctx); err != nil {
			return c, fmt.Errorf("warm-up call: %w", err)
		}
	}
	runtime.GC()
	var st0, st1 allocStats
	var pcpu0, pcpu1 time.Duration
	var err error
	if p != nil {
		if p.stats != "" {
			if st0, err = hostStats(ctx, hc, p.stats); err != nil {
				return c, err
			}
		}
		if pcpu0, err = cpuOf(p.pid); err != nil {
			return c, err
		}
	}
	var ms0, ms1 runtime.MemStats
	var ru0, ru1 syscall.Rusage
	runtime.ReadMemStats(&ms0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	for range n {
		if err := s.call(ctx); err != nil {
			return c, err
		}
	}
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&ms1)
	if p != nil {
		if pcpu1, err = cpuOf(p.pid); err != nil {
			return c, err
		}
		if p.stats != "" {
			if st1, err = hostStats(ctx, hc, p.stats); err != nil {
				return c, err
			}
			c.ProxyBytes = float64(st1.TotalAlloc-st0.TotalAlloc) / float64(n)
		}
		c.ProxyCPUus = float64((pcpu1 - pcpu0).Microseconds()) / float64(n)
	}
	cpu := tv(ru1.Utime) - tv(ru0.Utime) + tv(ru1.Stime) - tv(ru0.Stime)
	c.ClientCPUus = float64(cpu.Microseconds()) / float64(n)
	c.ClientBytes = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(n)
	c.WallUs = float64(wall.Microseconds()) / float64(n)
	return c, nil
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}
