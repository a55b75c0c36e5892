package gateway

import (
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testdb"
)

// BenchmarkLimits measures what the limits add to a tool call through the
// gateway (HTTP, the resource server's API key check, an in-process
// server): one rate limit and one concurrency cap per principal, in each
// store, against the same call to a gateway without limits in the same
// run. PostgreSQL runs with fsync off (internal/testdb), Redis with its
// append-only file synced every second. Metrics: plain-ns/call and limited-ns/call, check-ns (their
// difference) and limited/plain (the ratio).
func BenchmarkLimits(b *testing.B) {
	stores := limitStores(b)
	stores["memory"] = func() (LimitStore, *testdb.Server) { return nil, nil }
	for _, name := range []string{"memory", "redis", "postgres"} {
		open := stores[name]
		b.Run(name, func(b *testing.B) {
			e := newLimitEnv(b)
			store, srv := open()
			if name == "redis" {
				// The test server writes its append-only file at every
				// command (fsync always); production Redis runs everysec.
				if _, err := testdb.RedisCommand(srv.Addr, "CONFIG", "SET", "appendfsync", "everysec"); err != nil {
					b.Fatal(err)
				}
			}
			rules := []LimitRule{
				{Name: "rate", Per: "principal", Rate: 1_000_000_000, Period: time.Hour},
				{Name: "cap", Per: "principal", Concurrent: 1000},
			}
			plain := e.client(e.replica(nil), "alice")
			limited := e.client(e.replica(&Limits{Rules: rules, Store: store}), "alice")
			ctx := testCtx(b, 10*time.Minute)
			warm := func(n int) {
				for range n {
					if we := call(b, ctx, plain, "echo"); we != nil {
						b.Fatal(we)
					}
					if we := call(b, ctx, limited, "echo"); we != nil {
						b.Fatal(we)
					}
				}
			}
			warm(20)
			b.ResetTimer()
			var tPlain, tLimited time.Duration
			for range b.N {
				start := time.Now()
				if we := call(b, ctx, plain, "echo"); we != nil {
					b.Fatal(we)
				}
				mid := time.Now()
				if we := call(b, ctx, limited, "echo"); we != nil {
					b.Fatal(we)
				}
				tPlain += mid.Sub(start)
				tLimited += time.Since(mid)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/call")
			b.ReportMetric(float64(tLimited.Nanoseconds())/n, "limited-ns/call")
			b.ReportMetric(float64((tLimited-tPlain).Nanoseconds())/n, "check-ns")
			b.ReportMetric(float64(tLimited)/float64(tPlain), "limited/plain")
		})
	}
}
