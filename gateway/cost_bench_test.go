package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallThroughGateway measures one echo call from a go-sdk client
// through the gateway to a server over streamable HTTP on loopback, next
// to the same call made directly ("direct"), in one process: the
// difference of their ns/op, B/op and allocs/op is what the gateway adds.
func BenchmarkCallThroughGateway(b *testing.B) {
	for _, era := range []struct {
		name string
		era  testserver.Era
		opts []testserver.StreamableOption
		v    string
	}{
		{"2025-11-25", testserver.Legacy, nil, v1125},
		{"2026-07-28", testserver.Modern, []testserver.StreamableOption{testserver.Stateless()}, v0728},
	} {
		up := testserver.StartStreamable(b, testserver.New(testserver.Options{Name: "up", Era: era.era}), era.opts...)
		_, gw := startGateway(b, []Server{{Name: "up", Target: up.URL}}, nil)
		for _, side := range []struct{ name, url string }{{"direct", up.URL}, {"gateway", gw}} {
			b.Run(era.name+"/"+side.name, func(b *testing.B) {
				benchEcho(b, connect(b, side.url, era.v, nil))
			})
		}
	}
}

// BenchmarkStdioCallThroughGateway measures one echo call from a go-sdk
// client over loopback HTTP through the gateway to the test server over
// stdio (mcptestserver -minimal, a process of its own), at each client
// version: the gateway's fast paths for a plain call (fastsession.go,
// fastpath.go) and its server's client over stdio. The client and the
// gateway run in the benchmark's process; the server does not.
// cpu-µs/op is the process's CPU time (user and system: client and
// gateway) per call. The gateway logs as mcpadapter serve does by default
// (warnings and errors), so that a profile of it holds what serve spends.
func BenchmarkStdioCallThroughGateway(b *testing.B) {
	bin := testserver.Build(b)
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	_, gw := startGateway(b, []Server{{Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-minimal"}}}}, &Options{Logger: logger})
	for _, v := range []string{v1125, v0728} {
		b.Run(v, func(b *testing.B) {
			benchEcho(b, connect(b, gw, v, nil))
		})
	}
}

// benchEcho calls echo b.N times on cs; cpu-µs/op is the process's CPU
// time (user and system) per call.
func benchEcho(b *testing.B, cs *mcp.ClientSession) {
	ctx := testCtx(b, 10*time.Minute)
	params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %v", err, texts(res))
		}
	}
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkProgressCallThroughGateway measures one call with a progress
// token (notify, whose server sends one progress report before its
// answer) from a go-sdk client through the gateway to a handshake-era
// server over streamable HTTP on loopback, at each client version, on the
// fast paths ("fast": fastsession.go, fastpath.go, the report written by
// the gateway on the request's stream) and on go-sdk's handler ("sdk":
// Options.slowPathOnly). cpu-µs/op is the process's CPU time (user and
// system: client, gateway and server, all in the process) per call; run
// it with -count to alternate the two.
func BenchmarkProgressCallThroughGateway(b *testing.B) {
	up := testserver.StartStreamable(b, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy, Notify: true}))
	fast, fastURL := startGateway(b, []Server{{Name: "up", Target: up.URL}}, nil)
	_, sdkURL := startGateway(b, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: true})
	for _, v := range []string{v1125, v0728} {
		for _, side := range []struct{ name, url string }{{"fast", fastURL}, {"sdk", sdkURL}} {
			b.Run(v+"/"+side.name, func(b *testing.B) {
				var reports atomic.Int64
				cs := connect(b, side.url, v, &mcp.ClientOptions{
					ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { reports.Add(1) },
				})
				ctx := testCtx(b, 10*time.Minute)
				params := &mcp.CallToolParams{Name: "notify", Arguments: map[string]any{"text": "hello", "progress": true}}
				params.SetProgressToken("p")
				before := fast.sessionFast.Load()
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for range b.N {
					res, err := cs.CallTool(ctx, params)
					if err != nil || res.IsError {
						b.Fatalf("notify: %v %v", err, texts(res))
					}
				}
				b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
				b.StopTimer()
				if v == v1125 && side.name == "fast" && fast.sessionFast.Load()-before != int64(b.N) {
					b.Fatalf("%d of %d calls on the session fast path", fast.sessionFast.Load()-before, b.N)
				}
				// go-sdk's client hands reports to its handler on a
				// goroutine of its own: the last may come after its call.
				for deadline := time.Now().Add(10 * time.Second); reports.Load() < int64(b.N) && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				if n := reports.Load(); n != int64(b.N) {
					b.Fatalf("%d progress reports reached the client, want %d", n, b.N)
				}
			})
		}
	}
}

// BenchmarkSharedSessionCallThroughGateway measures one echo call from a
// handshake-era go-sdk client through two replicas of the gateway that
// share their sessions (a MemorySessionStore), its requests dealt between
// them by turns as a balancer without affinity does, to a server over
// streamable HTTP on loopback: on the session fast path of the replica
// that gets each call ("fast") and on go-sdk's handler ("sdk":
// Options.slowPathOnly). A client that declares no capability ("plain")
// has every call on the fast path; one that can be asked (go-sdk's
// default client declares roots: "roots") only on the replica that holds
// its standalone stream, here every other call. cpu-µs/op is the
// process's CPU time (user and system: client, replicas and server, all
// in the process) per call; run it with -count to alternate the two.
func BenchmarkSharedSessionCallThroughGateway(b *testing.B) {
	up := testserver.StartStreamable(b, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy}))
	for _, client := range []struct {
		name string
		opts *mcp.ClientOptions
	}{{"plain", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}}, {"roots", nil}} {
		for _, side := range []struct {
			name string
			slow bool
		}{{"fast", false}, {"sdk", true}} {
			b.Run(client.name+"/"+side.name, func(b *testing.B) {
				store := &MemorySessionStore{}
				var gs [2]*Gateway
				for i := range gs {
					gs[i], _ = startGateway(b, []Server{{Name: "up", Target: up.URL}}, &Options{slowPathOnly: side.slow, Sessions: &SessionOptions{Store: store}})
				}
				var turn atomic.Uint64
				lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					gs[turn.Add(1)%2].ServeHTTP(w, r)
				}))
				b.Cleanup(lb.Close)
				cs := connect(b, lb.URL, v1125, client.opts)
				before := gs[0].sessionFast.Load() + gs[1].sessionFast.Load()
				benchEcho(b, cs)
				b.StopTimer()
				want := int64(b.N)
				if client.opts == nil {
					want = int64(b.N) / 2
				}
				n := gs[0].sessionFast.Load() + gs[1].sessionFast.Load() - before
				if side.slow {
					want = 0
				}
				if (n < want) || (side.slow && n > 0) {
					b.Fatalf("%d of %d calls on the session fast path, want %d", n, b.N, want)
				}
			})
		}
	}
}

// BenchmarkIdleSession measures the gateway's heap held per idle
// handshake-era client session (initialized, tools listed, then left
// open), next to the same sessions held directly by the server
// ("direct"): heap-B/session is the growth of the live heap after a
// collection, divided by the sessions opened. Each op opens one session.
func BenchmarkIdleSession(b *testing.B) {
	up := testserver.StartStreamable(b, testserver.New(testserver.Options{Name: "up", Era: testserver.Legacy}))
	_, gw := startGateway(b, []Server{{Name: "up", Target: up.URL}}, nil)
	for _, side := range []struct{ name, url string }{{"direct", up.URL}, {"gateway", gw}} {
		b.Run(side.name, func(b *testing.B) {
			before := liveHeap()
			for range b.N {
				cs := connect(b, side.url, v1125, nil)
				if _, err := cs.ListTools(testCtx(b, time.Minute), nil); err != nil {
					b.Fatalf("tools/list: %v", err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(liveHeap()-before)/float64(b.N), "heap-B/session")
		})
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
