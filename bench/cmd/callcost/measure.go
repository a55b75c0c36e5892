package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// measurement is one run of one cell.
type measurement struct {
	Transport string  `json:"transport"`
	Era       string  `json:"era"` // the protocol version the client got
	Client    string  `json:"client"`
	N         int     `json:"n"`
	CPUus     float64 `json:"cpu_us"`   // user+system CPU µs per call
	Bytes     float64 `json:"bytes"`    // bytes allocated per call
	Allocs    float64 `json:"allocs"`   // objects allocated per call
	NewConns  float64 `json:"newconns"` // new TCP connections per call (HTTP)
	WallUs    float64 `json:"wall_us"`  // wall time per call (noisy; not in the table)
}

// caller makes one echo call.
type caller interface {
	call(ctx context.Context) error
	close() error
}

// echoArgs are the arguments of every call.
var echoArgs = json.RawMessage(`{"text":"hello"}`)

const warmup = 200

// measure runs one cell: connect, warm up, then n calls measured.
// The caller closes the client it returns.
func measure(tr, era, cl, server, url string, n int, prof profiles) (measurement, caller, error) {
	m := measurement{Transport: tr, Era: era, Client: cl, N: n}
	var dials atomic.Int64
	hc := countingClient(&dials)
	ctx := context.Background()
	c, version, err := connect(ctx, tr, era, cl, server, url, hc)
	if err != nil {
		return m, nil, err
	}
	m, err = measureCalls(ctx, c, m, &dials, version, prof)
	if err != nil {
		_ = c.close()
		return m, nil, err
	}
	return m, c, nil
}

// measureCalls warms c up and measures n calls.
func measureCalls(ctx context.Context, c caller, m measurement, dials *atomic.Int64, version string, prof profiles) (measurement, error) {
	n := m.N
	if version != m.Era {
		return m, fmt.Errorf("connected with protocol version %q, want %q", version, m.Era)
	}
	for range warmup {
		if err := c.call(ctx); err != nil {
			return m, err
		}
	}
	stop, err := prof.start()
	if err != nil {
		return m, err
	}
	runtime.GC()
	var before, after runtime.MemStats
	var ru0, ru1 syscall.Rusage
	runtime.ReadMemStats(&before)
	d0 := dials.Load()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	start := time.Now()
	for range n {
		if err := c.call(ctx); err != nil {
			return m, err
		}
	}
	wall := time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	d1 := dials.Load()
	runtime.ReadMemStats(&after)
	if err := stop(); err != nil {
		return m, err
	}
	cpu := tv(ru1.Utime) - tv(ru0.Utime) + tv(ru1.Stime) - tv(ru0.Stime)
	f := float64(n)
	m.CPUus = float64(cpu.Microseconds()) / f
	m.WallUs = float64(wall.Microseconds()) / f
	m.Bytes = float64(after.TotalAlloc-before.TotalAlloc) / f
	m.Allocs = float64(after.Mallocs-before.Mallocs) / f
	m.NewConns = float64(d1-d0) / f
	return m, nil
}

// profiles names the files for a CPU and an allocation profile of the
// measured calls (empty: none). Profiling costs CPU and, for allocations
// (every one recorded), a lot of it: profile in a run of its own.
type profiles struct{ cpu, mem string }

// start starts the profiles; stop writes them.
func (p profiles) start() (stop func() error, _ error) {
	var cpu *os.File
	if p.cpu != "" {
		f, err := os.Create(p.cpu)
		if err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, err
		}
		cpu = f
	}
	rate := runtime.MemProfileRate
	if p.mem != "" {
		runtime.MemProfileRate = 1
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return err
			}
		}
		if p.mem == "" {
			return nil
		}
		// pprof scales the samples by the rate in force when it
		// writes them: restore it after.
		defer func() { runtime.MemProfileRate = rate }()
		f, err := os.Create(p.mem)
		if err != nil {
			return err
		}
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}, nil
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// countingClient is a keep-alive HTTP client that counts the TCP
// connections it opens.
func countingClient(dials *atomic.Int64) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 10 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: t}
}

// connect makes the client of the cell and returns the protocol version
// it got.
func connect(ctx context.Context, tr, era, cl, server, url string, hc *http.Client) (caller, string, error) {
	flags := []string{"-minimal"}
	if era == era2025 {
		flags = append(flags, "-era", "legacy")
	}
	switch cl {
	case "limit":
		if tr == "stdio" {
			l, err := newLimitStdio(server, era, echoArgs)
			return l, era, err
		}
		l, err := newLimitHTTP(hc, url, era, echoArgs)
		return l, era, err
	case "fast", "sdkpath":
		var target any = url
		opts := &mcpadapter.ClientOptions{DisableFastPath: cl == "sdkpath"}
		if tr == "stdio" {
			target = mcpadapter.Command{Path: server, Args: flags}
		} else {
			opts.HTTPClient = hc
		}
		client, err := mcpadapter.NewClient(target, opts)
		if err != nil {
			return nil, "", err
		}
		a, err := mcpadapter.New(client, nil)
		if err != nil {
			return nil, "", err
		}
		tools, err := a.Tools(ctx)
		if err != nil {
			return nil, "", err
		}
		info, err := client.Connect(ctx)
		if err != nil {
			return nil, "", err
		}
		for _, t := range tools {
			if t.Name == "echo" {
				return &adapterCaller{a: a, tool: t}, info.ProtocolVersion, nil
			}
		}
		return nil, "", errors.New("no echo tool")
	case "gosdk":
		var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}
		if tr == "stdio" {
			t = &mcp.CommandTransport{Command: commandOf(server, flags)}
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "gosdk", Version: "0"}, nil)
		cs, err := client.Connect(ctx, t, nil)
		if err != nil {
			return nil, "", err
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return nil, "", err
		}
		return &sdkCaller{cs: cs}, cs.InitializeResult().ProtocolVersion, nil
	}
	return nil, "", fmt.Errorf("unknown client %q", cl)
}

type adapterCaller struct {
	a    *mcpadapter.Adapter
	tool *mcpadapter.Tool
}

func (c *adapterCaller) call(ctx context.Context) error {
	res, err := c.tool.Call(ctx, echoArgs)
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("unexpected result %+v", res)
	}
	return nil
}

func (c *adapterCaller) close() error { return c.a.Close() }

type sdkCaller struct{ cs *mcp.ClientSession }

func (c *sdkCaller) call(ctx context.Context) error {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: echoArgs})
	if err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 {
		return fmt.Errorf("unexpected result %+v", res)
	}
	return nil
}

func (c *sdkCaller) close() error { return c.cs.Close() }
