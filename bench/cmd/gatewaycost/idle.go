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

// idleCell is the memory that idle client sessions hold in a proxy.
type idleCell struct {
	Path              string
	Sessions          int
	Before, After     int64 // RSS of the proxy's process group, bytes
	Processes0        int   // processes in the group before
	Processes1        int   // and after
	BytesPerSession   float64
	NegotiatedVersion string
}

// measureIdle opens n sessions with openOne, leaves them idle for a
// second, and reads the RSS of the proxy's process group (the proxy and
// whatever it started: supergateway starts a server per session) before
// and after.
func measureIdle(ctx context.Context, n int, openOne func(context.Context) (*session, error), p *proxy) (idleCell, error) {
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
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := openOne(octx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			sessions[i] = s
			c.NegotiatedVersion = s.version
		})
	}
	wg.Wait()
	if first != nil {
		return c, fmt.Errorf("opening %d idle sessions: %w", n, first)
	}
	time.Sleep(time.Second)
	if c.After, c.Processes1, err = groupRSS(p.pid); err != nil {
		return c, err
	}
	c.BytesPerSession = float64(c.After-c.Before) / float64(n)
	return c, nil
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
