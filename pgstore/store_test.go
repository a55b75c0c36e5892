package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/pgstore"
	"golang.org/x/oauth2"
)

func ctx60(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pool(t testing.TB, srv *testdb.Server) *pgxpool.Pool {
	p, err := pgxpool.New(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// TestStores runs against one PostgreSQL server: starting it takes
// seconds (initdb), so its parts are subtests.
func TestStores(t *testing.T) {
	srv := testdb.Postgres(t)
	t.Run("Migrate", func(t *testing.T) { testMigrate(t, srv) })
	t.Run("Cache", func(t *testing.T) { testCache(t, srv) })
	t.Run("Token", func(t *testing.T) { testToken(t, srv) })
	t.Run("Limits", func(t *testing.T) { testLimits(t, srv) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, srv) })
	t.Run("Tasks", func(t *testing.T) { testTasks(t, srv) })
	t.Run("Checkpoint", func(t *testing.T) { testCheckpoint(t, srv) }) // stops the server: last
}

// testMigrate: replicas starting at once create the tables once, and
// Migrate again is harmless.
func testMigrate(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		p := pool(t, srv)
		wg.Add(1)
		go func() { defer wg.Done(); errs <- pgstore.Migrate(ctx, p, &pgstore.Options{TablePrefix: "m_"}) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pool(t, srv).QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename LIKE 'm\_%'`).Scan(&n); err != nil || n != 10 {
		t.Errorf("tables: %d %v", n, err)
	}
	// A prefix may name a schema.
	p := pool(t, srv)
	if _, err := p.Exec(ctx, `CREATE SCHEMA agents`); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.Migrate(ctx, p, &pgstore.Options{TablePrefix: "agents.mcp_"}); err != nil {
		t.Fatal(err)
	}
	if err := p.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'agents'`).Scan(&n); err != nil || n != 10 {
		t.Errorf("tables in schema agents: %d %v", n, err)
	}
}

func testCache(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	p := pool(t, srv)
	if err := p.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	s, err := pgstore.NewCacheStore(ctx, p, &pgstore.Options{SweepInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	exp := time.Now().Add(time.Hour).Truncate(time.Microsecond)
	for _, k := range []string{"srv%1|tools/list|", "srv%1|tools/list|page2", "srv%1|prompts/list|", "srvX1|tools/list|", "srv%1|tools/list\x00|"} {
		s.Set(ctx, k, mcpadapter.CacheEntry{Value: []byte(`{"k":1}`), Expires: exp})
	}
	e, ok := s.Get(ctx, "srv%1|tools/list|")
	if !ok || !e.Expires.Equal(exp) || string(e.Value) != `{"k":1}` {
		t.Fatalf("Get: %v %+v", ok, e)
	}
	s.DeletePrefix(ctx, "srv%1|tools/list|")
	for k, want := range map[string]bool{"srv%1|tools/list|": false, "srv%1|tools/list|page2": false, "srv%1|tools/list\x00|": true, "srv%1|prompts/list|": true, "srvX1|tools/list|": true} {
		if _, ok := s.Get(ctx, k); ok != want {
			t.Errorf("after DeletePrefix, %q present: %v, want %v", k, ok, want)
		}
	}
	// A row past expires_at is not returned, and the sweeper deletes it.
	if _, err := p.Exec(ctx, `UPDATE mcpadapter_cache SET expires_at = now() - interval '1 second' WHERE key = $1`, []byte("srvX1|tools/list|")); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Get(ctx, "srvX1|tools/list|"); ok {
		t.Error("an expired row was returned")
	}
	deadline := time.Now().Add(20 * time.Second)
	for n := 1; n > 0; {
		if err := p.QueryRow(ctx, `SELECT count(*) FROM mcpadapter_cache WHERE key = $1`, []byte("srvX1|tools/list|")).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper did not delete the expired row")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	testenv.WaitGoroutines(t, before) // the sweeper has ended
}

var key32 = bytes.Repeat([]byte{42}, 32)

func token(access, refresh string) *mcpadapter.StoredToken {
	return &mcpadapter.StoredToken{Token: &oauth2.Token{AccessToken: access, RefreshToken: refresh}, ClientID: "c", TokenURL: "http://127.0.0.1/token"}
}

func testToken(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	p := pool(t, srv)
	if _, err := pgstore.NewTokenStore(ctx, p, nil); err == nil || !strings.Contains(err.Error(), "no encryption key") {
		t.Errorf("no key: %v", err)
	}
	s, err := pgstore.NewTokenStore(ctx, p, &pgstore.TokenOptions{Key: key32})
	if err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:1/mcp"
	if err := s.Save(ctx, url, token("at-secret", "rt-secret")); err != nil {
		t.Fatal(err)
	}
	var raw []byte
	if err := p.QueryRow(ctx, `SELECT data FROM mcpadapter_tokens WHERE key = $1`, url).Scan(&raw); err != nil || bytes.Contains(raw, []byte("secret")) {
		t.Fatalf("stored form: %q %v", raw, err)
	}
	got, err := s.Load(ctx, url)
	if err != nil || got.Token.AccessToken != "at-secret" || got.Token.RefreshToken != "rt-secret" {
		t.Fatalf("Load: %v %v", got, err)
	}
	const replicas, rounds = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, replicas*rounds)
	for i := range replicas {
		st, err := pgstore.NewTokenStore(ctx, pool(t, srv), &pgstore.TokenOptions{Key: key32})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				errs <- st.Update(ctx, url, func(_ context.Context, cur *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) {
					n := 0
					fmt.Sscanf(cur.Token.AccessToken, "n%d", &n)
					return token(fmt.Sprintf("n%d", n+1), fmt.Sprintf("rt-%d", i)), nil
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _ = s.Load(ctx, url)
	if got.Token.AccessToken != fmt.Sprintf("n%d", replicas*rounds) {
		t.Errorf("after %d concurrent updates: %s", replicas*rounds, got.Token.AccessToken)
	}
	boom := errors.New("refresh refused")
	if err := s.Update(ctx, url, func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("Update: %v", err)
	}
}

// testCheckpoint: a checkpoint written before the database stops is there
// once it is back; while it is away, Get and Set say so and where.
func testCheckpoint(t *testing.T, srv *testdb.Server) {
	ctx := ctx60(t)
	s, err := pgstore.NewCheckpointStore(ctx, pool(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Get(ctx, "run-1"); ok || err != nil {
		t.Fatalf("empty store: %v %v", ok, err)
	}
	if err := s.Set(ctx, "run-1", []byte("state")); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Get(ctx, "run-1")
	if err == nil || !strings.Contains(err.Error(), `reading checkpoint "run-1" from postgres 127.0.0.1:`) {
		t.Errorf("Get with the database stopped: %v", err)
	}
	if err := s.Set(ctx, "run-2", []byte("x")); err == nil || !strings.Contains(err.Error(), "writing checkpoint") {
		t.Errorf("Set with the database stopped: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	b, ok, err := s.Get(ctx, "run-1")
	if err != nil || !ok || string(b) != "state" {
		t.Errorf("after the restart: %q %v %v", b, ok, err)
	}
}
