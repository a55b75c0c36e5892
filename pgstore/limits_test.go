package pgstore_test

import (
	"log/slog"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/pgstore"
)

func testLimits(t *testing.T, srv *testdb.Server) {
	s, err := pgstore.NewLimitStore(ctx60(t), pool(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckLimitStore(t, s)
}

func testSessions(t *testing.T, srv *testdb.Server) {
	s, err := pgstore.NewSessionStore(ctx60(t), pool(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckSessionStore(t, s)
	t.Run("Notices", func(t *testing.T) { testSessionNotices(t, srv) })
}

// testSessionNotices: notices of changed sessions between two replicas'
// stores (each with a pool of its own), through a subscription whose
// connection the server terminates (pg_terminate_backend) and one made
// again.
func testSessionNotices(t *testing.T, srv *testdb.Server) {
	opts := &pgstore.Options{Logger: slog.New(slog.DiscardHandler)}
	a, err := pgstore.NewSessionStore(ctx60(t), pool(t, srv), opts)
	if err != nil {
		t.Fatal(err)
	}
	admin := pool(t, srv)
	b, err := pgstore.NewSessionStore(ctx60(t), pool(t, srv), opts)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckSessionNotices(t, a, b, "pgstore.(*notices).receive", func(t *testing.T) {
		var n int
		err := admin.QueryRow(ctx60(t), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`).Scan(&n)
		if err != nil || n != 2 {
			t.Fatalf("terminating the listening connections: %d, %v; want 2", n, err)
		}
	})
}

func testTasks(t *testing.T, srv *testdb.Server) {
	s, err := pgstore.NewTaskStore(ctx60(t), pool(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckTaskStore(t, s)
}
