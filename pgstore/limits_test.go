package pgstore_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

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
	t.Run("NoticeNames", func(t *testing.T) { testSessionNoticeNames(t, srv) })
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

// testSessionNoticeNames: notices reach a subscription whatever the
// sessions' table is named (a quote, upper case, a schema, a name over
// 63 bytes), and a subscription whose context ends leaves no listening
// connection at the server.
func testSessionNoticeNames(t *testing.T, srv *testdb.Server) {
	admin := pool(t, srv)
	for _, prefix := range []string{`Odd"Quote'_`, "MixedCase_", "public.Upper_", strings.Repeat("long_", 14)} {
		opts := &pgstore.Options{TablePrefix: prefix, Logger: slog.New(slog.DiscardHandler)}
		a, err := pgstore.NewSessionStore(ctx60(t), pool(t, srv), opts)
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		b, err := pgstore.NewSessionStore(ctx60(t), pool(t, srv), opts)
		if err != nil {
			t.Fatalf("prefix %q: %v", prefix, err)
		}
		ctx, cancel := context.WithCancel(ctx60(t))
		ch, err := a.SubscribeSessions(ctx)
		if err != nil {
			cancel()
			t.Fatalf("prefix %q: SubscribeSessions: %v", prefix, err)
		}
		if err := b.NotifySession(ctx, "KX3JQ7ABCDEFGHIJKLMNOPQRST"); err != nil {
			t.Errorf("prefix %q: NotifySession: %v", prefix, err)
		}
		select {
		case id := <-ch:
			if id != "KX3JQ7ABCDEFGHIJKLMNOPQRST" {
				t.Errorf("prefix %q: notice %q", prefix, id)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("prefix %q: no notice within 10 s", prefix)
		}
		cancel()
		for range ch {
		}
		var n int
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if err := admin.QueryRow(ctx60(t), `SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN %'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("prefix %q: %d listening connections left 10 s after the subscription ended", prefix, n)
			}
		}
	}
}
