package mcpadapter_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks compare one echo call made through a Tool with the same
// call made directly on a go-sdk ClientSession, over the same server and
// transport. README reports the ratio.

var echoArgs = json.RawMessage(`{"text":"hello"}`)

func benchAdapter(b *testing.B, target any) {
	ctx := context.Background()
	a, err := mcpadapter.New(target, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		b.Fatal(err)
	}
	var echo *mcpadapter.Tool
	for _, t := range tools {
		if t.Name == "echo" {
			echo = t
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := echo.Call(ctx, echoArgs)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func benchSDK(b *testing.B, t mcp.Transport) {
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(ctx, t, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: echoArgs}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

func BenchmarkCallInMemory(b *testing.B) {
	for _, e := range eras {
		b.Run(e.era.String()+"/adapter", func(b *testing.B) {
			benchAdapter(b, testserver.New(testserver.Options{Era: e.era}))
		})
		b.Run(e.era.String()+"/go-sdk", func(b *testing.B) {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := testserver.New(testserver.Options{Era: e.era}).Connect(context.Background(), st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			benchSDK(b, ct)
		})
	}
}

// BenchmarkToolsCache lists the tools of a 2026-07-28 server whose
// listings carry ttlMs 60000, with and without the response cache, in
// process and over stateless streamable HTTP on 127.0.0.1. One iteration
// is one Client.Tools call; requests/op is the tools/list requests the
// server saw per call. docs/dev/benchmarks.md reports it.
func BenchmarkToolsCache(b *testing.B) {
	for _, transport := range []string{"inmemory", "http"} {
		for _, mode := range []string{"uncached", "cached"} {
			b.Run(transport+"/"+mode, func(b *testing.B) {
				ctx := context.Background()
				srv, st := testserver.NewWithState(testserver.Options{CacheTTLMs: 60000})
				var target any = srv
				if transport == "http" {
					target = testserver.ServeStreamable(b, srv, testserver.Stateless())
				}
				var opts mcpadapter.ClientOptions
				if mode == "cached" {
					opts.Cache = &mcpadapter.CacheConfig{}
				}
				c, err := mcpadapter.NewClient(target, &opts)
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Connect(ctx); err != nil {
					b.Fatal(err)
				}
				before := st.Requests("tools/list")
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if _, err := c.Tools(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(st.Requests("tools/list")-before)/float64(b.N), "requests/op")
			})
		}
	}
}

func BenchmarkCallStdio(b *testing.B) {
	bin := testserver.Build(b)
	for _, e := range eras {
		b.Run(e.era.String()+"/adapter", func(b *testing.B) {
			benchAdapter(b, mcpadapter.Command{Path: bin, Args: []string{"-era", e.era.String()}})
		})
		b.Run(e.era.String()+"/go-sdk", func(b *testing.B) {
			benchSDK(b, &mcp.CommandTransport{Command: exec.Command(bin, "-era", e.era.String())})
		})
	}
}

// BenchmarkReadResource reads a resource of an in-process server of each
// era: one iteration is one Client.ReadResource call.
func BenchmarkReadResource(b *testing.B) {
	for _, e := range eras {
		b.Run(e.era.String(), func(b *testing.B) {
			ctx := context.Background()
			c, err := mcpadapter.NewClient(testserver.New(testserver.Options{Era: e.era, Resources: true}), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.ReadResource(ctx, testserver.ResourceA); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
