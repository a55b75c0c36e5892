package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// idleSteps is how many equal steps measureIdle opens sessions in: the
// first warms the proxy up, the others are measured.
const idleSteps = 5

// idleCell is the memory that idle client sessions hold in a proxy.
type idleCell struct {
	Path              string
	Sessions          int     // sessions open at the end, over all steps
	Warm              int     // of which the first step's
	Before            int64   // RSS of the proxy's process group before the first step, bytes
	Warmed            int64   // after the first step
	After             int64   // after the last
	Processes0        int     // processes in the group before
	Processes1        int     // and after
	BytesPerSession   float64 // least-squares slope of RSS over sessions open, after the first step
	Overall           float64 // (After - Before) / Sessions
	Steps             []int64 // RSS after each step
	NegotiatedVersion string
}

// measureIdle opens n sessions with openOne in idleSteps equal steps and
// reads the RSS of the proxy's process group (the proxy and whatever it
// started: supergateway starts a server per session) before the first
// step and a second after each. The first step lets every process grow
// its heaps (a garbage-collected heap with room to spare takes sessions
// in at no RSS until it grows); BytesPerSession is the least-squares
// slope of RSS over the sessions open from the first step's end on.
func measureIdle(ctx context.Context, n int, openOne func(context.Context) (*session, error), p *proxy) (idleCell, error) {
	n = max(n, idleSteps)
	c := idleCell{Sessions: n}
	time.Sleep(500 * time.Millisecond)
	var err error
	if c.Before, c.Processes0, err = groupRSS(p.pid); err != nil {
		return c, err
	}
	sessions := make([]*session, n)
	defer func() {
		var wg sync.WaitGroup
		for _, s := range sessions {
			if s != nil {
				wg.Go(s.close)
			}
		}
		wg.Wait()
	}()
	octx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var xs, ys []float64
	for step := range idleSteps {
		lo, hi := n*step/idleSteps, n*(step+1)/idleSteps
		if err := openIdle(octx, sessions[lo:hi], openOne, &c.NegotiatedVersion); err != nil {
			return c, fmt.Errorf("opening %d idle sessions: %w", n, err)
		}
		time.Sleep(time.Second)
		rss, procs, err := groupRSS(p.pid)
		if err != nil {
			return c, err
		}
		if step == 0 {
			c.Warm, c.Warmed = hi, rss
		}
		c.After, c.Processes1 = rss, procs
		c.Steps = append(c.Steps, rss)
		xs, ys = append(xs, float64(hi)), append(ys, float64(rss))
	}
	c.BytesPerSession = slope(xs, ys)
	c.Overall = float64(c.After-c.Before) / float64(n)
	return c, nil
}

// openIdle fills sessions with sessions opened by openOne, 16 at a time.
func openIdle(ctx context.Context, sessions []*session, openOne func(context.Context) (*session, error), version *string) error {
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range sessions {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := openOne(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			sessions[i] = s
			*version = s.version
		})
	}
	wg.Wait()
	return first
}

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// groupRSS sums VmRSS over the processes of process group pgid.
func groupRSS(pgid int) (int64, int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0, err
	}
	var sum int64
	count := 0
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) { // field 5: pgrp
			continue
		}
		rss, err := rssOf(pid)
		if err != nil {
			continue // a zombie or gone
		}
		sum += rss
		count++
	}
	if count == 0 {
		return 0, 0, fmt.Errorf("no process in group %d", pgid)
	}
	return sum, count, nil
}
