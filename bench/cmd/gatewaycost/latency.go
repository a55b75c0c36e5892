package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
)

// loadCell is one run of concurrent clients calling for a while.
type loadCell struct {
	Backend, Path   string
	Clients         int
	P50us, P99us    float64
	CallsPerSec     float64
	ProxyCPUPerCall float64 // µs of the proxy's CPU per call (0: direct)
	// ClientCPUPerCall is µs of the client process's CPU per call: on a
	// machine of few cores the clients' transport competes with the
	// proxy for them.
	ClientCPUPerCall float64
	Errors           int
	FirstErr         string
}

// measureLoad opens clients sessions with openOne (with shared, one
// session serves every worker: a stdio server has one client), then every
// worker calls one by one for dur; the latencies of all calls give p50
// and p99.
func measureLoad(ctx context.Context, clients int, dur time.Duration, shared bool, openOne func(context.Context) (*session, error), p *proxy) (loadCell, error) {
	c := loadCell{Clients: clients}
	sessions := make([]*session, clients)
	defer func() {
		var wg sync.WaitGroup
		for _, s := range sessions {
			if s != nil {
				wg.Go(s.close)
			}
		}
		wg.Wait()
	}()
	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if shared {
		s, err := openOne(octx)
		if err != nil {
			return c, err
		}
		sessions[0] = s
	} else {
		sem := make(chan struct{}, 32)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for i := range clients {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				s, err := openOne(octx)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				sessions[i] = s
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			return c, fmt.Errorf("opening %d sessions: %d failed, first: %w", clients, len(errs), errs[0])
		}
	}
	sessionOf := func(i int) *session {
		if shared {
			return sessions[0]
		}
		return sessions[i]
	}
	// One untimed call per worker: every connection is warm.
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() { _ = sessionOf(i).call(octx) })
	}
	wg.Wait()

	var pcpu0 time.Duration
	if p != nil {
		var err error
		if pcpu0, err = cpuOf(p.pid); err != nil {
			return c, err
		}
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	lats := make([][]time.Duration, clients)
	errCount := make([]int, clients)
	firstErr := make([]error, clients)
	start := time.Now()
	end := start.Add(dur)
	cctx, ccancel := context.WithTimeout(ctx, dur+30*time.Second)
	defer ccancel()
	for i := range clients {
		wg.Go(func() {
			s := sessionOf(i)
			for time.Now().Before(end) {
				t0 := time.Now()
				if err := s.call(cctx); err != nil {
					errCount[i]++
					if firstErr[i] == nil {
						firstErr[i] = err
					}
					if errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil {
						return
					}
					continue
				}
				lats[i] = append(lats[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	var all []time.Duration
	for i := range clients {
		all = append(all, lats[i]...)
		c.Errors += errCount[i]
		if firstErr[i] != nil && c.FirstErr == "" {
			c.FirstErr = firstErr[i].Error()
		}
	}
	if len(all) == 0 {
		return c, fmt.Errorf("no call succeeded (%d errors, first: %s)", c.Errors, c.FirstErr)
	}
	slices.Sort(all)
	c.P50us = float64(all[len(all)/2].Microseconds())
	c.P99us = float64(all[min(len(all)-1, len(all)*99/100)].Microseconds())
	c.CallsPerSec = float64(len(all)) / wall.Seconds()
	cpu := tv(ru1.Utime) - tv(ru0.Utime) + tv(ru1.Stime) - tv(ru0.Stime)
	c.ClientCPUPerCall = float64(cpu.Microseconds()) / float64(len(all))
	if p != nil {
		pcpu1, err := cpuOf(p.pid)
		if err != nil {
			return c, err
		}
		c.ProxyCPUPerCall = float64((pcpu1 - pcpu0).Microseconds()) / float64(len(all))
	}
	return c, nil
}
