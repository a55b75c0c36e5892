package redisstore_test

import (
	"log/slog"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
)

func TestSessionStore(t *testing.T) {
	storetest.CheckSessionStore(t, redisstore.NewSessionStore(client(t, testdb.Redis(t)), nil))
}

func TestTaskStore(t *testing.T) {
	storetest.CheckTaskStore(t, redisstore.NewTaskStore(client(t, testdb.Redis(t)), nil))
}

// TestSessionNotices: notices of changed sessions between two replicas'
// stores, through a subscription whose connection Redis kills (CLIENT
// KILL TYPE pubsub) and one made again.
func TestSessionNotices(t *testing.T) {
	srv := testdb.Redis(t)
	a := redisstore.NewSessionStore(client(t, srv), &redisstore.Options{Logger: slog.New(slog.DiscardHandler)})
	b := redisstore.NewSessionStore(client(t, srv), &redisstore.Options{Logger: slog.New(slog.DiscardHandler)})
	storetest.CheckSessionNotices(t, a, b, "redisstore.(*SessionStore).receive", func(t *testing.T) {
		if _, err := testdb.RedisCommand(srv.Addr, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
			t.Fatal(err)
		}
	})
}
