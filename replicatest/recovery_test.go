package replicatest

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkServeRecovery measures how long a handshake-era client waits
// when the `mcpadapter serve` replica that answered its session's last
// request is killed: three replicas share their sessions in Redis (and
// again in PostgreSQL) behind a round-robin balancer with no affinity
// (roundRobin). Each of the b.N rounds connects a new client at
// 2025-11-25 through the balancer (its initialize and its initialized
// notification land on two replicas), kills the replica that answered
// the notification (A) with SIGKILL, turns the balancer to A, and times
// from the kill to the first of the client's calls that succeeds: the
// worst case, where the balancer tries A first, finds its port closed
// and goes on to the next replica (B), which has not seen the session
// and makes it again from the store. A call that fails is made again at
// once. A new replica then takes A's place. It reports p50, p99 and the
// longest of those times, and the calls that failed per kill.
//
//	cd replicatest && go test -run XXX -bench BenchmarkServeRecovery -benchtime 30x .
func BenchmarkServeRecovery(b *testing.B) {
	for _, store := range []string{"redis", "postgres"} {
		b.Run(store, func(b *testing.B) {
			e := newServeEnv(b, 2, startDB(b, store).URL)
			var procs []*serveProc
			var urls []string
			for range 3 {
				p := e.start()
				procs, urls = append(procs, p), append(urls, p.url)
			}
			rr, lbURL := newRoundRobin(b, urls...)
			ctx := serveCtx(b, 20*time.Minute)
			tr := sharedTransport()
			b.Cleanup(tr.CloseIdleConnections)
			principal := e.principals[0]
			waits := make([]time.Duration, 0, b.N)
			failed := 0
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				c := mcp.NewClient(&mcp.Implementation{Name: principal, Version: "1"}, nil)
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: lbURL, HTTPClient: &http.Client{Transport: bearerTransport{tr, e.bearer[principal]}}, DisableStandaloneSSE: true},
					&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
				if err != nil {
					b.Fatal(err)
				}
				a, ok := rr.lastOf(cs.ID())
				if !ok {
					b.Fatal("the balancer saw no request of the session")
				}
				b.StartTimer()
				killed := time.Now()
				_ = procs[a].cmd.Process.Kill()
				rr.aim(a)
				for {
					err := echo(ctx, cs)
					if err == nil {
						break
					}
					if failed++; time.Since(killed) > 30*time.Second {
						b.Fatalf("no call succeeded 30 s after the kill: %v", err)
					}
				}
				waits = append(waits, time.Since(killed))
				if on, _ := rr.lastOf(cs.ID()); on != (a+1)%len(procs) {
					b.Fatalf("the call after the kill of slot %d was answered by slot %d; want the next one", a, on)
				}
				b.StopTimer()
				_ = cs.Close()
				procs[a].kill()
				procs[a] = e.start()
				rr.set(a, procs[a].url)
				b.StartTimer()
			}
			b.StopTimer()
			slices.Sort(waits)
			b.ReportMetric(quantileMs(waits, 50), "p50-ms")
			b.ReportMetric(quantileMs(waits, 99), "p99-ms")
			b.ReportMetric(float64(waits[len(waits)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(float64(failed)/float64(b.N), "failed-calls/kill")
		})
	}
}
