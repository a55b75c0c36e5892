package replicatest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"golang.org/x/oauth2"
)

// benchStores are the stores to compare: in memory, Redis, PostgreSQL.
func benchStores(b *testing.B) map[string]*stores {
	mem := &stores{
		checkpoints: eino.NewMemoryStore(),
		cache:       mcpadapter.NewMemoryCacheStore(0),
		close:       func() {},
	}
	return map[string]*stores{
		"memory":   mem,
		"redis":    mustOpen(b, "redis", startDB(b, "redis").URL),
		"postgres": mustOpen(b, "postgres", startDB(b, "postgres").URL),
	}
}

// BenchmarkStoreOps: one checkpoint write and read, one cache write and
// read, one token save and load, per store (loopback; the database shares
// the machine's cores with the benchmark).
func BenchmarkStoreOps(b *testing.B) {
	ctx := context.Background()
	all := benchStores(b)
	all["memory"].tokens = memUpdater{mcpadapter.NewMemoryTokenStore()}
	checkpoint := []byte(strings.Repeat("x", 4096))
	entry := mcpadapter.CacheEntry{Value: []byte(strings.Repeat(`{"name":"tool"},`, 64)), Expires: time.Now().Add(time.Hour)}
	tok := &mcpadapter.StoredToken{Token: &oauth2.Token{AccessToken: "at", RefreshToken: "rt"}, ClientID: "c", TokenURL: "http://127.0.0.1/t"}
	for _, kind := range []string{"memory", "redis", "postgres"} {
		s := all[kind]
		b.Run("checkpoint/"+kind, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprint("cp-", i%64)
				if err := s.checkpoints.Set(ctx, id, checkpoint); err != nil {
					b.Fatal(err)
				}
				if _, ok, err := s.checkpoints.Get(ctx, id); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
		b.Run("cache/"+kind, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprint("srv\x00tools/list\x00", i%64)
				s.cache.Set(ctx, key, entry)
				if _, ok := s.cache.Get(ctx, key); !ok {
					b.Fatal("miss")
				}
			}
		})
		b.Run("token/"+kind, func(b *testing.B) {
			for b.Loop() {
				if err := s.tokens.Save(ctx, "http://127.0.0.1/mcp", tok); err != nil {
					b.Fatal(err)
				}
				if t, err := s.tokens.Load(ctx, "http://127.0.0.1/mcp"); t == nil || err != nil {
					b.Fatal(t, err)
				}
			}
		})
	}
}

// memUpdater is the in-memory token store, for the comparison only.
type memUpdater struct{ mcpadapter.TokenStore }

func (memUpdater) Update(context.Context, string, func(context.Context, *mcpadapter.StoredToken) (*mcpadapter.StoredToken, error)) error {
	return nil
}

// BenchmarkResume: an eino run that a 2026-07-28 server interrupts with a
// question, and its resume with the answer, through each checkpoint
// store (the MCP server over loopback HTTP in this process).
func BenchmarkResume(b *testing.B) {
	ctx := context.Background()
	all := benchStores(b)
	url := testserver.ServeStreamable(b, testserver.New(testserver.Options{}), testserver.Stateless())
	a, err := mcpadapter.New(url, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	tools, err := a.Tools(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"memory", "redis", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			agent, err := eino.NewAgent(ctx, &scripted{rounds: [][]schema.ToolCall{bookRound()}}, tools, eino.AgentConfig{Store: all[kind].checkpoints})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; b.Loop(); i++ {
				roundTrip(b, ctx, agent, fmt.Sprint("bench-", i))
			}
		})
	}
}

func roundTrip(b *testing.B, ctx context.Context, agent *eino.Agent, id string) {
	first := drain(agent.Query(ctx, id, "book"))
	if len(first.Interrupts) != 1 {
		b.Fatalf("run: %+v", first)
	}
	done, err := resume(ctx, agent, id, first)
	if err != nil || !strings.Contains(done.Final, "Booked 3 guests") {
		b.Fatalf("resume: %v %+v", err, done)
	}
}

var _ adk.CheckPointStore = (*eino.MemoryStore)(nil)
