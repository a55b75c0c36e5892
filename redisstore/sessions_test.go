package redisstore_test

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
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

// TestSessionNoticesLeastPrivilege: the session store and its notices
// work as a Redis user with the README's least-privilege ACL (Redis 7
// gives a new user no Pub/Sub channel unless the ACL names it).
func TestSessionNoticesLeastPrivilege(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var acl []string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "ACL SETUSER ") {
			acl = strings.Fields(strings.Replace(l, ">PASSWORD", ">least-privilege", 1))
		}
	}
	if len(acl) < 4 || acl[2] != "agent" {
		t.Fatalf("the README's ACL line: %q", acl)
	}
	srv := testdb.Redis(t)
	if out, err := testdb.RedisCommand(srv.Addr, acl...); err != nil {
		t.Fatalf("%q: %s, %v", acl, out, err)
	}
	agent := func() *redis.Client {
		o, err := redis.ParseURL(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		o.Username, o.Password, o.MaxRetries = "agent", "least-privilege", -1
		rdb := redis.NewClient(o)
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	if err := agent().Ping(ctx30(t)).Err(); err != nil {
		t.Fatalf("PING as the README's user: %v", err)
	}
	opts := &redisstore.Options{Logger: slog.New(slog.DiscardHandler)}
	a, b := redisstore.NewSessionStore(agent(), opts), redisstore.NewSessionStore(agent(), opts)
	storetest.CheckSessionStore(t, a)
	storetest.CheckSessionNotices(t, a, b, "redisstore.(*SessionStore).receive", func(t *testing.T) {
		if _, err := testdb.RedisCommand(srv.Addr, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
			t.Fatal(err)
		}
	})
}
