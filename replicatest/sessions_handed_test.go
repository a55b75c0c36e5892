package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// countingStore counts the writes of a session store.
type countingStore struct {
	gateway.SessionStore
	writes atomic.Int64
}

func (c *countingStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	c.writes.Add(1)
	return c.SessionStore.SaveSession(ctx, id, rec, ttl)
}

func (c *countingStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	c.writes.Add(1)
	return c.SessionStore.ReplaceSession(ctx, id, old, rec, ttl)
}

// handedLeft returns the answers handed and not taken in the record of
// session id.
func handedLeft(t *testing.T, store gateway.SessionStore, id string) int {
	t.Helper()
	b, err := store.LoadSession(limitCtx(t, 5*time.Second), id)
	if err != nil || b == nil {
		t.Fatalf("the session's record: %v %s", err, b)
	}
	var rec struct {
		Handed []json.RawMessage `json:"handed"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return len(rec.Handed)
}

// TestSharedSessionsHandedRaceStores: with sessions in Redis and
// PostgreSQL, the client's answers to one question sent at once, four to
// each replica, give the question one of them, once, round after round;
// nothing is left in the record; and a flood of answers with ids no
// question has writes nothing to the store.
func TestSharedSessionsHandedRaceStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			base, _ := stores[name]()
			store := &countingStore{SessionStore: base}
			a := newAnswerRig(t, []gateway.SessionStore{store, store}, gateway.Options{})
			for round := range 3 {
				s := a.call(1, 30+round, "book")
				qid := questionID(a.next(s, "book's question"))
				var wg sync.WaitGroup
				for i := range 8 {
					wg.Go(func() { a.answer(i%2, qid, fmt.Sprintf("round %d answer %d", round, i)) })
				}
				wg.Wait()
				if l := a.next(s, "book's result"); !strings.Contains(l, fmt.Sprintf("map[for:round %d answer ", round)) {
					t.Fatalf("round %d: book's result: %s", round, l)
				}
			}
			time.Sleep(500 * time.Millisecond)
			if n := handedLeft(t, base, a.id); n != 0 {
				t.Errorf("%d answers left in the record", n)
			}
			w0 := store.writes.Load()
			for i := range 100 {
				a.answer(i%2, fmt.Sprint(1000+i), "flood")
			}
			if w := store.writes.Load() - w0; w != 0 {
				t.Errorf("100 answers with unknown ids made %d writes", w)
			}
		})
	}
}

// proxiedSessions opens a session store of kind on db through a new
// proxy.
func proxiedSessions(t *testing.T, kind string, db *testdb.Server) (gateway.SessionStore, *testdb.Proxy) {
	p := testdb.NewProxy(t, db.Addr)
	if kind == "redis" {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, ReadTimeout: time.Minute, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		return redisstore.NewSessionStore(rdb, nil), p
	}
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.Addr
	pool, err := pgxpool.New(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s, err := pgstore.NewSessionStore(context.Background(), pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// pollers counts the goroutines of gateways polling for handed answers.
func pollers() int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "gateway.(*Gateway).pollHanded(")
}

// TestSharedSessionsHandedStoreStallStores: with sessions in Redis and
// PostgreSQL, the store stops answering the replica that asked (a
// network that lost its route) while an answer is handed to it: its
// question ends by ParkTimeout, the replica closes within a few seconds
// all the same, and its goroutine polling for answers ends.
func TestSharedSessionsHandedStoreStallStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			direct, db := stores[name]()
			proxied, p := proxiedSessions(t, name, db)
			before := pollers()
			const park = 1500 * time.Millisecond
			a := newAnswerRig(t, []gateway.SessionStore{direct, proxied}, gateway.Options{ParkTimeout: park})
			if n := pollers() - before; n != 2 {
				t.Errorf("%d goroutines poll for answers, want one a replica", n)
			}
			s := a.call(1, 11, "book")
			qid := questionID(a.next(s, "book's question"))
			p.Set(testdb.Stall)
			start := time.Now()
			a.answer(0, qid, "stalled")
			if l := a.next(s, "book's end"); strings.Contains(l, " got ") || time.Since(start) > park+2*time.Second {
				t.Fatalf("book after %s: %s", time.Since(start), l)
			}
			if n := handedLeft(t, direct, a.id); n != 1 {
				t.Errorf("%d answers in the record, want the one the stalled replica could not take", n)
			}
			start = time.Now()
			a.close(1)
			if d := time.Since(start); d > 8*time.Second {
				t.Errorf("Close of the replica whose store stalls took %s", d)
			}
			p.Set(testdb.Forward)
			a.close(0)
			if n := pollers() - before; n != 0 {
				t.Errorf("%d goroutines poll for answers after Close", n)
			}
		})
	}
}

// TestSharedSessionsHandedKilledStores: with sessions in Redis and
// PostgreSQL, a replica that dies (it no longer reaches the store, and
// closes nothing) right after it handed an answer over does not keep it
// from its question; a replica that dies with an answer handed to it and
// not taken leaves it to no other question: the question the other
// replica asks next in the session (the first of its copy too) gets its
// own answer.
func TestSharedSessionsHandedKilledStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			mover := &killableStore{SessionStore: store}
			a := newAnswerRig(t, []gateway.SessionStore{mover, store, store}, gateway.Options{})
			s := a.call(1, 11, "book")
			qid := questionID(a.next(s, "book's question"))
			a.answer(0, qid, "from the mover")
			mover.dead.Store(true)
			if l := a.next(s, "book's result"); !strings.Contains(l, "book got accept map[for:from the mover]") {
				t.Fatalf("book's result: %s", l)
			}

			asker := &killableStore{SessionStore: store}
			b := newAnswerRig(t, []gateway.SessionStore{store, asker}, gateway.Options{})
			s = b.call(1, 11, "book")
			qid = questionID(b.next(s, "book's question"))
			asker.dead.Store(true)
			b.answer(0, qid, "for the dead replica")
			if n := handedLeft(t, store, b.id); n != 1 {
				t.Fatalf("%d answers handed to the dead replica, want 1", n)
			}
			s0 := b.call(0, 12, "delete_repo")
			q := questionID(b.next(s0, "delete_repo's question"))
			if !strings.HasSuffix(q, `.1"`) || q == qid {
				t.Fatalf("delete_repo's question: %s (the dead replica's: %s)", q, qid)
			}
			b.answer(0, q, "delete_repo")
			if l := b.next(s0, "delete_repo's result"); !strings.Contains(l, "delete_repo got accept map[for:delete_repo]") {
				t.Fatalf("delete_repo's result: %s", l)
			}
		})
	}
}
