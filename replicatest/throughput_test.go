package replicatest

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// throughputPrincipals and throughputWorkers shape the load of
// BenchmarkServeThroughput: that many principals, each a client session,
// called by that many goroutines at once.
const (
	throughputPrincipals = 1000
	throughputWorkers    = 32
)

// BenchmarkServeThroughput measures the requests per second one
// `mcpadapter serve` replica answers for 1,000 principals (half with API
// keys, half with JWTs of the test authorization server), each a client
// session of its own, half of them at 2025-11-25 (sessions) and half at
// 2026-07-28 (stateless), calling echo on a go-sdk server on loopback
// behind the replica; with its sessions and limit counters in the
// process (memory), in Redis and in PostgreSQL, and a rate limit per
// principal counted on every call. b.N calls are made by 32 goroutines
// over the sessions in turn. It reports calls per second, calls per
// second of the replica's CPU (per core: its whole process, all
// threads), how many cores the replica kept busy, and the calls' p50 and
// p99.
//
//	cd replicatest && go test -run XXX -bench BenchmarkServeThroughput -benchtime 20000x .
func BenchmarkServeThroughput(b *testing.B) {
	for _, store := range []string{"memory", "redis", "postgres"} {
		b.Run(store, func(b *testing.B) {
			storeURL := ""
			if store != "memory" {
				db := startDB(b, store)
				if store == "redis" {
					if _, err := testdb.RedisCommand(db.Addr, "CONFIG", "SET", "appendfsync", "everysec"); err != nil {
						b.Fatal(err)
					}
				}
				storeURL = db.URL
			}
			e := newServeEnv(b, throughputPrincipals, storeURL, "--limit", "name=per-user,per=principal,rate=100000/1s")
			p := e.start()
			ctx := serveCtx(b, 20*time.Minute)
			sessions := e.connectAll(ctx, p.url)
			for _, cs := range sessions { // every session warm
				echoOnce(b, ctx, cs)
			}
			latencies := make([][]time.Duration, throughputWorkers)
			var next atomic.Int64
			cpu0, err := p.cpu()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, throughputWorkers)
			for w := range throughputWorkers {
				wg.Go(func() {
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						t0 := time.Now()
						if err := echo(ctx, sessions[i%len(sessions)]); err != nil {
							errs <- err
							return
						}
						latencies[w] = append(latencies[w], time.Since(t0))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			wall := time.Since(start)
			b.StopTimer()
			cpu1, err := p.cpu()
			if err != nil {
				b.Fatal(err)
			}
			all := slices.Concat(latencies...)
			slices.Sort(all)
			cpu := cpu1 - cpu0
			n := float64(b.N)
			b.ReportMetric(n/wall.Seconds(), "calls/s")
			b.ReportMetric(n/cpu.Seconds(), "calls/cpu-s")
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cores")
			b.ReportMetric(quantileMs(all, 50), "p50-ms")
			b.ReportMetric(quantileMs(all, 99), "p99-ms")
		})
	}
}

// connectAll connects a client session of every principal to url, the
// even ones at 2025-11-25, the odd ones at 2026-07-28, over one shared
// transport.
func (e *serveEnv) connectAll(ctx context.Context, url string) []*mcp.ClientSession {
	e.t.Helper()
	tr := sharedTransport()
	e.t.Cleanup(tr.CloseIdleConnections)
	out := make([]*mcp.ClientSession, len(e.principals))
	errs := make(chan error, len(e.principals))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(e.principals) {
					return
				}
				v := "2025-11-25"
				if (i/2)%2 == 1 { // both credentials in both eras
					v = "2026-07-28"
				}
				p := e.principals[i]
				c := mcp.NewClient(&mcp.Implementation{Name: p, Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{tr, e.bearer[p]}}, DisableStandaloneSSE: true},
					&mcp.ClientSessionOptions{ProtocolVersion: v})
				if err != nil {
					errs <- fmt.Errorf("connect %s at %s: %w", p, v, err)
					return
				}
				out[i] = cs
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		for _, cs := range out {
			_ = cs.Close()
		}
	})
	return out
}

// echoOnce calls echo in cs and fails the test unless it succeeds.
func echoOnce(t testing.TB, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	if err := echo(ctx, cs); err != nil {
		t.Fatal(err)
	}
}

// echo calls echo in cs; it fails unless the call succeeds.
func echo(ctx context.Context, cs *mcp.ClientSession) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("echo: a tool error: %+v", res.Content)
	}
	return nil
}
