package replicatest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// The session stores carry notices of changed sessions among the
// replicas.
var (
	_ gateway.SessionNotifier = (*redisstore.SessionStore)(nil)
	_ gateway.SessionNotifier = (*pgstore.SessionStore)(nil)
)

// noNotices hides a session store's notices: the replicas poll.
type noNotices struct{ gateway.SessionStore }

// handOver asks a question on replica 1 and posts its answer (round i)
// to replica 0, and returns how long after the POST the call got it.
func (a *answerRig) handOver(i int) time.Duration {
	a.t.Helper()
	s := a.call(1, 100+i, "book")
	qid := questionID(a.next(s, "book's question"))
	start := time.Now()
	a.answer(0, qid, fmt.Sprint("answer ", i))
	if l := a.next(s, "book's result"); !strings.Contains(l, fmt.Sprintf("book got accept map[for:answer %d]", i)) {
		a.t.Fatalf("book's result: %s", l)
	}
	return time.Since(start)
}

// median returns the median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestSharedSessionsNoticeLatencyStores: with sessions in Redis and
// PostgreSQL, an answer the balancer sends to the replica that did not
// ask reaches the question, round after round; how long after its POST
// the call gets it is logged, with the store's notices and without them
// (polling), in the same run.
func TestSharedSessionsNoticeLatencyStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			const rounds = 9
			for _, mode := range []string{"notices", "polling"} {
				s := store
				if mode == "polling" {
					s = noNotices{store}
				}
				a := newAnswerRig(t, []gateway.SessionStore{s, s}, gateway.Options{})
				var ds []time.Duration
				for i := range rounds {
					ds = append(ds, a.handOver(i))
				}
				t.Logf("%s, %s: an answer handed to the replica that asked reaches its call %s after its POST (median of %d; min %s, max %s)",
					name, mode, median(ds).Round(100*time.Microsecond), rounds, slices.Min(ds).Round(100*time.Microsecond), slices.Max(ds).Round(100*time.Microsecond))
				a.close(0)
				a.close(1)
			}
		})
	}
}

// subscribers sees, at the server, the connections that subscribe to the
// notices of sessions of a store of kind on db.
type subscribers struct {
	t    *testing.T
	kind string
	db   *testdb.Server
	pool *pgxpool.Pool // postgres
	rdb  *redis.Client // redis
}

func newSubscribers(t *testing.T, kind string, db *testdb.Server) *subscribers {
	s := &subscribers{t: t, kind: kind, db: db}
	if kind == "redis" {
		s.rdb = redis.NewClient(&redis.Options{Addr: db.Addr})
		t.Cleanup(func() { s.rdb.Close() })
		return s
	}
	var err error
	if s.pool, err = pgxpool.New(context.Background(), db.URL); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.pool.Close)
	return s
}

// kill ends the subscribed connections and returns how many it ended.
func (s *subscribers) kill() int {
	t := s.t
	t.Helper()
	ctx := limitCtx(t, 10*time.Second)
	if s.kind == "redis" {
		n, err := s.rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// count returns how many connections are subscribed.
func (s *subscribers) count() int {
	t := s.t
	t.Helper()
	ctx := limitCtx(t, 10*time.Second)
	if s.kind == "redis" {
		ch := redisstore.DefaultPrefix + "sessions"
		m, err := s.rdb.PubSubNumSub(ctx, ch).Result()
		if err != nil {
			t.Fatal(err)
		}
		return int(m[ch])
	}
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wait waits for n connections subscribed.
func (s *subscribers) wait(n int) {
	s.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got := s.count()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d connections subscribed to the notices, want %d", got, n)
		}
	}
}

// readers counts the goroutines of the gateways and the stores that read
// the notices of sessions.
func readers() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	s := string(buf)
	return strings.Count(s, "gateway.(*Gateway).listenSessions(") + strings.Count(s, "redisstore.(*SessionStore).receive(") +
		strings.Count(s, "pgstore.(*notices).receive(")
}

// TestSharedSessionsNoticeReconnectStores: with sessions in Redis and
// PostgreSQL, the server ends the connections the two replicas subscribe
// to notices with (CLIENT KILL TYPE pubsub; pg_terminate_backend): an
// answer handed at once still reaches its question (by polling, or by
// notice once subscribed again), each replica subscribes again, and the
// next answer reaches its question by notice; Close ends the
// subscriptions and every goroutine that reads them.
func TestSharedSessionsNoticeReconnectStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			before := readers()
			store, db := stores[name]()
			subs := newSubscribers(t, name, db)
			a := newAnswerRig(t, []gateway.SessionStore{store, store}, gateway.Options{})
			subs.wait(2)
			if n := readers() - before; n != 4 {
				t.Errorf("%d goroutines read notices, want 4 (a gateway's and a store's, each replica)", n)
			}
			t.Logf("subscribed: %s", a.handOver(0).Round(100*time.Microsecond))
			for round := 1; round <= 3; round++ {
				if n := subs.kill(); n != 2 {
					t.Fatalf("%d subscribed connections ended, want 2", n)
				}
				t.Logf("round %d, handed right after the subscriptions' connections ended: %s", round, a.handOver(2*round-1).Round(100*time.Microsecond))
				time.Sleep(300 * time.Millisecond) // past a connection go-redis makes again on its own before the store closes it
				subs.wait(2)
				t.Logf("round %d, subscribed again: %s", round, a.handOver(2*round).Round(100*time.Microsecond))
			}
			a.close(0)
			a.close(1)
			subs.wait(0)
			for deadline := time.Now().Add(10 * time.Second); readers() > before; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d goroutines read notices after Close", readers()-before)
				}
			}
		})
	}
}
