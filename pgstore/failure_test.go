package pgstore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
)

// TestFailures runs the failures an operator meets against one
// PostgreSQL 15 server (starting one takes seconds): a database whose
// default isolation is REPEATABLE READ, a short
// idle_in_transaction_session_timeout, the lock holder's connection
// terminated, a network that stops forwarding, a small pool, a sweep
// racing a Set, a DML-only role, long keys and old checkpoints.
func TestFailures(t *testing.T) {
	srv := testdb.Postgres(t)
	admin := pool(t, srv)
	t.Run("RepeatableRead", func(t *testing.T) { testRepeatableRead(t, srv, admin) })
	t.Run("IdleInTransactionTimeout", func(t *testing.T) { testIdleInTransaction(t, srv, admin) })
	t.Run("LockHolderTerminated", func(t *testing.T) { testTerminated(t, srv, admin) })
	t.Run("Stall", func(t *testing.T) { testStall(t, srv) })
	t.Run("SmallPool", func(t *testing.T) { testSmallPool(t, srv) })
	t.Run("SweepRacesSet", func(t *testing.T) { testSweepRace(t, srv, admin) })
	t.Run("LeastPrivilege", func(t *testing.T) { testLeastPrivilege(t, srv, admin) })
	t.Run("LongKeys", func(t *testing.T) { testLongKeys(t, srv) })
	t.Run("CheckpointLifetime", func(t *testing.T) { testCheckpointLifetime(t, srv, admin) })
}

// poolAt opens a pool on database db of srv as user, named app in
// pg_stat_activity.
func poolAt(t testing.TB, addr, user, db, app string, maxConns int) *pgxpool.Pool {
	cfg, err := pgxpool.ParseConfig(fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&application_name=%s", user, addr, db, app))
	if err != nil {
		t.Fatal(err)
	}
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// database creates database name with the settings given (ALTER
// DATABASE ... SET), as an operator's would be.
func database(t testing.TB, admin *pgxpool.Pool, name string, settings ...string) {
	ctx := ctx60(t)
	if _, err := admin.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if _, err := admin.Exec(ctx, `ALTER DATABASE `+name+` SET `+s); err != nil {
			t.Fatal(err)
		}
	}
}

// refresher is fn of an Update that plays a refresh at an authorization
// server that rotates refresh tokens: it takes a token another replica
// stored (a refresh token other than "rt-0"), or refreshes rt-0 into
// rt-1, counting the refreshes, taking as long as took.
type refresher struct {
	took      time.Duration
	refreshes atomic.Int32
	onRefresh func(ctx context.Context)
}

func (r *refresher) fn(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
	if cur != nil && cur.Token.RefreshToken != "rt-0" {
		return nil, nil
	}
	r.refreshes.Add(1)
	if r.onRefresh != nil {
		r.onRefresh(ctx)
	}
	select {
	case <-time.After(r.took):
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return token("at-1", "rt-1"), nil
}

func tokenStore(t testing.TB, p *pgxpool.Pool, opts pgstore.TokenOptions) *pgstore.TokenStore {
	opts.Key = key32
	s, err := pgstore.NewTokenStore(ctx60(t), p, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// replicasRefresh has n stores on pools from open refresh one expired
// token at once, and checks that one refresh was made and every Update
// succeeded.
func replicasRefresh(t *testing.T, n int, open func(i int) *pgxpool.Pool, r *refresher, opts pgstore.TokenOptions) {
	t.Helper()
	ctx := ctx60(t)
	const url = "http://127.0.0.1:1/mcp"
	stores := make([]*pgstore.TokenStore, n)
	for i := range stores {
		stores[i] = tokenStore(t, open(i), opts)
	}
	if err := stores[0].Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, s := range stores {
		wg.Go(func() { errs <- s.Update(ctx, url, r.fn) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := r.refreshes.Load(); got != 1 {
		t.Errorf("%d refreshes of one token by %d replicas, want 1", got, n)
	}
	if got, err := stores[0].Load(ctx, url); err != nil || got.Token.RefreshToken != "rt-1" {
		t.Errorf("stored %v %v, want rt-1", got, err)
	}
}

// testRepeatableRead: with default_transaction_isolation REPEATABLE READ
// on the database, four replicas refresh one token once, without
// serialization failures (the stores say READ COMMITTED), and concurrent
// cache writes of one key all succeed.
func testRepeatableRead(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	database(t, admin, "rr", "default_transaction_isolation = 'repeatable read'")
	var iso string
	if err := poolAt(t, srv.Addr, "postgres", "rr", "check", 0).QueryRow(ctx60(t), `SHOW default_transaction_isolation`).Scan(&iso); err != nil || iso != "repeatable read" {
		t.Fatalf("isolation %q %v", iso, err)
	}
	replicasRefresh(t, 4, func(i int) *pgxpool.Pool { return poolAt(t, srv.Addr, "postgres", "rr", fmt.Sprint("r", i), 0) },
		&refresher{took: 100 * time.Millisecond}, pgstore.TokenOptions{})

	var logs syncBuffer
	ctx := ctx60(t)
	var wg sync.WaitGroup
	for i := range 8 {
		c, err := pgstore.NewCacheStore(ctx, poolAt(t, srv.Addr, "postgres", "rr", fmt.Sprint("c", i), 0), &pgstore.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wg.Go(func() {
			for j := range 20 {
				c.Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte(fmt.Sprint(j)), Expires: time.Now().Add(time.Hour)})
				c.DeletePrefix(ctx, "k")
			}
		})
	}
	wg.Wait()
	if strings.Contains(logs.String(), "failed") {
		t.Errorf("cache writes failed under REPEATABLE READ:\n%s", logs.String())
	}
}

// testIdleInTransaction: a database that ends transactions idle for
// 200 ms does not end a refresh that takes 600 ms: none is open while
// it runs.
func testIdleInTransaction(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	database(t, admin, "idle", "idle_in_transaction_session_timeout = '200ms'")
	replicasRefresh(t, 2, func(i int) *pgxpool.Pool { return poolAt(t, srv.Addr, "postgres", "idle", fmt.Sprint("r", i), 0) },
		&refresher{took: 600 * time.Millisecond}, pgstore.TokenOptions{})
}

// testTerminated: the refreshing replica's connections are terminated
// (pg_terminate_backend) while it refreshes; the other replica waits for
// its lease instead of refreshing the same token, and the token is saved
// once.
func testTerminated(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	ctx := ctx60(t)
	database(t, admin, "term")
	r := &refresher{took: 500 * time.Millisecond}
	r.onRefresh = func(context.Context) {
		var n int
		err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE 'r%' AND datname = 'term'`).Scan(&n)
		if err != nil || n == 0 {
			t.Errorf("terminated %d connections: %v", n, err)
		}
	}
	replicasRefresh(t, 2, func(i int) *pgxpool.Pool { return poolAt(t, srv.Addr, "postgres", "term", fmt.Sprint("r", i), 0) },
		r, pgstore.TokenOptions{LockTTL: 2 * time.Second})
}

// testStall: the network to the database stops forwarding. A cache Get
// misses after CacheTimeout, a checkpoint Get fails after Timeout naming
// the store and address, and a replica refreshing through the stalled
// link is stopped before its lease lapses, so the other replica's
// refresh never overlaps it.
func testStall(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	if err := pgstore.Migrate(ctx, pool(t, srv), &pgstore.Options{TablePrefix: "stall_"}); err != nil {
		t.Fatal(err)
	}
	p := testdb.NewProxy(t, srv.Addr)
	via := poolAt(t, p.Addr, "postgres", "postgres", "via-proxy", 0)
	if err := via.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	opts := &pgstore.Options{TablePrefix: "stall_", Timeout: time.Second, CacheTimeout: 200 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	cache, err := pgstore.NewCacheStore(ctx, via, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	cps, err := pgstore.NewCheckpointStore(ctx, via, opts)
	if err != nil {
		t.Fatal(err)
	}
	cache.Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(time.Hour)})
	if _, ok := cache.Get(ctx, "k"); !ok {
		t.Fatal("no hit before the stall")
	}
	p.Set(testdb.Stall)
	done := make(chan bool, 1)
	go func() { _, ok := cache.Get(ctx, "k"); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a hit with the database not answering")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cache Get still waiting 10 s after the database stopped answering (CacheTimeout 200 ms)")
	}
	if !strings.Contains(logs.String(), "cache read failed") || !strings.Contains(logs.String(), "postgres 127.0.0.1:") {
		t.Errorf("logs:\n%s", logs.String())
	}
	if _, _, err := cps.Get(ctx, "run"); err == nil || !strings.Contains(err.Error(), `reading checkpoint "run" from postgres `+p.Addr) {
		t.Errorf("checkpoint Get: %v", err)
	}
	p.Set(testdb.Forward)

	topts := pgstore.TokenOptions{LockTTL: 1500 * time.Millisecond, Options: pgstore.Options{TablePrefix: "stall_", Timeout: time.Second}}
	a, b := tokenStore(t, via, topts), tokenStore(t, pool(t, srv), topts)
	const url = "http://127.0.0.1:1/mcp"
	if err := b.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []string
	note := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
	aIn := make(chan struct{})
	errA := make(chan error, 1)
	go func() {
		errA <- a.Update(ctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
			note("a starts")
			p.Set(testdb.Stall)
			close(aIn)
			<-ctx.Done()
			note("a stopped")
			return nil, context.Cause(ctx)
		})
	}()
	<-aIn
	err = b.Update(ctx, url, func(ctx context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
		note("b starts")
		return token("at-1", "rt-1"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errA; err == nil || !strings.Contains(err.Error(), "could not be extended") {
		t.Errorf("a's Update: %v, want the lease's lapse", err)
	}
	p.Set(testdb.Forward)
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(events, ", ") != "a starts, a stopped, b starts" {
		t.Errorf("events %q: the refreshes overlapped", events)
	}
}

// testSmallPool: with a pool of two connections, replicas waiting for a
// refresh lease hold none, so a checkpoint Get still gets one.
func testSmallPool(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	small := poolAt(t, srv.Addr, "postgres", "postgres", "small", 2)
	opts := pgstore.Options{TablePrefix: "small_", Timeout: 2 * time.Second}
	cps, err := pgstore.NewCheckpointStore(ctx, small, &opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := cps.Set(ctx, "run", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s := tokenStore(t, small, pgstore.TokenOptions{Options: opts})
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	holding := make(chan struct{})
	release := make(chan struct{})
	errs := make(chan error, 5)
	go func() {
		errs <- s.Update(ctx, url, func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
			close(holding)
			<-release
			return token("at-1", "rt-1"), nil
		})
	}()
	<-holding
	r := &refresher{}
	for range 4 {
		go func() { errs <- s.Update(ctx, url, r.fn) }()
	}
	for range 3 {
		if _, ok, err := cps.Get(ctx, "run"); err != nil || !ok {
			t.Errorf("checkpoint Get while 4 updates wait: %v %v", ok, err)
		}
	}
	close(release)
	for range 5 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := r.refreshes.Load(); n != 0 {
		t.Errorf("%d refreshes after the first replica's, want 0", n)
	}
}

// testSweepRace: a Set renewing an expired row holds its row lock while
// a sweep runs; the sweep leaves the row, which now lives an hour.
func testSweepRace(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	ctx := ctx60(t)
	opts := &pgstore.Options{TablePrefix: "sweep_", SweepInterval: time.Hour}
	s, err := pgstore.NewCacheStore(ctx, pool(t, srv), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := admin.Exec(ctx, `INSERT INTO sweep_cache (key, value, expires_at) VALUES ('k', 'old', now() - interval '1 minute')`); err != nil {
		t.Fatal(err)
	}
	// The Set, as the store sends it, in a transaction left open.
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO sweep_cache (key, value, expires_at) VALUES ('k', 'new', now() + interval '1 hour') ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`); err != nil {
		t.Fatal(err)
	}
	swept := make(chan error, 1)
	go func() { _, err := s.Sweep(ctx); swept <- err }()
	// Wait until the sweep has finished or waits on the Set's row lock.
	for done := false; !done; {
		select {
		case err := <-swept:
			swept <- err
			done = true
		case <-time.After(20 * time.Millisecond):
			var waiting int
			_ = admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "sweep_cache"%'`).Scan(&waiting)
			done = waiting > 0
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-swept; err != nil {
		t.Fatal(err)
	}
	var value []byte
	if err := admin.QueryRow(ctx, `SELECT value FROM sweep_cache WHERE key = 'k' AND expires_at > now()`).Scan(&value); err != nil || string(value) != "new" {
		t.Errorf("the renewed row after the sweep: %q %v, want it kept", value, err)
	}
}

// testLeastPrivilege: after Migrate, run by the tables' owner, the
// stores start and work as a role that may only read and write rows
// (PostgreSQL 15: no CREATE on schema public); where Migrate was not run,
// the error says to run it.
func testLeastPrivilege(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	ctx := ctx60(t)
	opts := &pgstore.Options{TablePrefix: "lp_"}
	if err := pgstore.Migrate(ctx, admin, opts); err != nil {
		t.Fatal(err)
	}
	// The README's statements, as they are there.
	for _, stmt := range readmeGrants(t) {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	p := poolAt(t, srv.Addr, "agent", "postgres", "agent", 0)
	var create bool
	if err := p.QueryRow(ctx, `SELECT has_schema_privilege('public', 'CREATE')`).Scan(&create); err != nil || create {
		t.Fatalf("the role may create in schema public (%v, %v): the test would prove nothing", create, err)
	}
	cps, err := pgstore.NewCheckpointStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pgstore.NewCacheStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	tokens := tokenStore(t, p, pgstore.TokenOptions{Options: *opts})
	if err := cps.Set(ctx, "run", []byte("x")); err != nil {
		t.Error(err)
	}
	if _, ok, err := cps.Get(ctx, "run"); !ok || err != nil {
		t.Errorf("checkpoint Get: %v %v", ok, err)
	}
	cache.Set(ctx, "k", mcpadapter.CacheEntry{Value: []byte("{}"), Expires: time.Now().Add(time.Hour)})
	if _, ok := cache.Get(ctx, "k"); !ok {
		t.Error("cache miss after Set")
	}
	if n, err := cache.Sweep(ctx); err != nil {
		t.Errorf("Sweep: %d %v", n, err)
	}
	if err := tokens.Save(ctx, "u", token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Update(ctx, "u", (&refresher{}).fn); err != nil {
		t.Error(err)
	}
	sessions, err := pgstore.NewSessionStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := sessions.SaveSession(ctx, "s1", []byte("{}"), time.Hour); err != nil {
		t.Error(err)
	}
	if ok, err := sessions.ClaimRequest(ctx, "s1", "n7", "o1", time.Hour); !ok || err != nil {
		t.Errorf("ClaimRequest: %v %v", ok, err)
	}
	if ok, err := sessions.RenewRequest(ctx, "s1", "n7", "o1", time.Hour); !ok || err != nil {
		t.Errorf("RenewRequest: %v %v", ok, err)
	}
	if err := sessions.ReleaseRequest(ctx, "s1", "n7", "o1"); err != nil {
		t.Error(err)
	}
	tasks, err := pgstore.NewTaskStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := tasks.AddTask(ctx, "t1", []byte("{}"), time.Hour); !ok || err != nil {
		t.Errorf("AddTask: %v %v", ok, err)
	}
	limits, err := pgstore.NewLimitStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := limits.Take(ctx, "k", time.Second, 1); !ok || err != nil {
		t.Errorf("Take: %v %v", ok, err)
	}
	if ok, _, err := limits.Acquire(ctx, "k", "l1", 1, time.Minute); !ok || err != nil {
		t.Errorf("Acquire: %v %v", ok, err)
	}
	if fresh, _, err := limits.Once(ctx, "b", "id", time.Minute, 10); !fresh || err != nil {
		t.Errorf("Once: %v %v", fresh, err)
	}
	_, err = pgstore.NewCacheStore(ctx, p, &pgstore.Options{TablePrefix: "notmigrated_"})
	if err == nil || !strings.Contains(err.Error(), "run pgstore.Migrate") || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("a store on tables Migrate did not create: %v, want permission denied and a pointer to Migrate", err)
	}
}

// readmeGrants returns the statements of the README's least-privilege
// setup, its tables under the prefix lp_ and its role without a password.
func readmeGrants(t *testing.T) []string {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```sql\nCREATE ROLE agent")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("the README has no least-privilege setup")
	}
	block = strings.ReplaceAll("CREATE ROLE agent"+block, "mcpadapter_", "lp_")
	block = strings.Replace(block, " PASSWORD '…'", "", 1)
	var stmts []string
	for _, stmt := range strings.Split(block, ";") {
		if stmt = strings.TrimSpace(stmt); stmt != "" {
			stmts = append(stmts, stmt)
		}
	}
	return stmts
}

// testLongKeys: keys over the B-tree limit (long resource URIs, run
// IDs) are stored, found, and selected by their prefix.
func testLongKeys(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	p := pool(t, srv)
	var logs syncBuffer
	opts := &pgstore.Options{TablePrefix: "long_", Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	cache, err := pgstore.NewCacheStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	long := "srv|resources/read|" + strings.Repeat("file:///very/long/path/", 400)
	other := long[:len(long)-1] + "X"
	for _, k := range []string{long, other} {
		cache.Set(ctx, k, mcpadapter.CacheEntry{Value: []byte(`"` + k[len(k)-1:] + `"`), Expires: time.Now().Add(time.Hour)})
	}
	if e, ok := cache.Get(ctx, long); !ok || string(e.Value) != `"/"` {
		t.Errorf("a %d-byte key: %v %s", len(long), ok, e.Value)
	}
	if e, ok := cache.Get(ctx, other); !ok || string(e.Value) != `"X"` {
		t.Errorf("another key of the same length and start: %v %s", ok, e.Value)
	}
	cache.DeletePrefix(ctx, "srv|")
	if _, ok := cache.Get(ctx, long); ok {
		t.Error("DeletePrefix left a long key")
	}
	cps, err := pgstore.NewCheckpointStore(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("é", 3000) // multi-byte characters across the cut
	if err := cps.Set(ctx, id, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := cps.Get(ctx, id); err != nil || !ok || string(b) != "x" {
		t.Errorf("a long checkpoint id: %q %v %v", b, ok, err)
	}
	tokens := tokenStore(t, p, pgstore.TokenOptions{Options: *opts})
	url := "https://mcp.example/" + strings.Repeat("a", 4000)
	if err := tokens.Save(ctx, url, token("at-0", "rt-0")); err != nil {
		t.Fatal(err)
	}
	if err := tokens.Update(ctx, url, (&refresher{}).fn); err != nil {
		t.Fatal(err)
	}
	if got, err := tokens.Load(ctx, url); err != nil || got.Token.RefreshToken != "rt-1" {
		t.Errorf("a long token key: %v %v", got, err)
	}
	if logs.String() != "" {
		t.Errorf("warnings:\n%s", logs.String())
	}
}

// testCheckpointLifetime: a checkpoint older than CheckpointTTL (7 days
// by default) is not returned and Sweep deletes it; a negative TTL keeps
// it.
func testCheckpointLifetime(t *testing.T, srv *testdb.Server, admin *pgxpool.Pool) {
	ctx := ctx60(t)
	p := pool(t, srv)
	def, err := pgstore.NewCheckpointStore(ctx, p, &pgstore.Options{TablePrefix: "life_"})
	if err != nil {
		t.Fatal(err)
	}
	keep, err := pgstore.NewCheckpointStore(ctx, p, &pgstore.Options{TablePrefix: "life_", CheckpointTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"six-days", "eight-days"} {
		if err := def.Set(ctx, id, []byte(id)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctx, `UPDATE life_checkpoints SET updated_at = now() - CASE id WHEN 'six-days' THEN interval '6 days' ELSE interval '8 days' END`); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := def.Get(ctx, "six-days"); !ok {
		t.Error("a 6-day-old checkpoint is gone (default TTL 7 days)")
	}
	if _, ok, _ := def.Get(ctx, "eight-days"); ok {
		t.Error("an 8-day-old checkpoint was returned (default TTL 7 days)")
	}
	if _, ok, _ := keep.Get(ctx, "eight-days"); !ok {
		t.Error("CheckpointTTL -1 does not return an 8-day-old checkpoint")
	}
	if n, err := def.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep deleted %d (%v), want 1", n, err)
	}
	if err := def.Delete(ctx, "six-days"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM life_checkpoints`).Scan(&n); err != nil || n != 0 {
		t.Errorf("%d rows left (%v), want 0", n, err)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
