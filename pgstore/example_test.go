package pgstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/pgstore"
)

// A token store keeps tokens sealed with the application's key, and
// refuses to start without one unless plaintext is asked for explicitly
// (before it asks PostgreSQL anything: the pool is never dialled here).
func ExampleNewTokenStore() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://127.0.0.1:5432/agents")
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	_, err = pgstore.NewTokenStore(ctx, pool, nil)
	fmt.Println(err)
	_, err = pgstore.NewTokenStore(ctx, pool, &pgstore.TokenOptions{Key: []byte("too short")})
	fmt.Println(err)
	// Output:
	// pgstore: NewTokenStore: no encryption key: give a 16, 24 or 32-byte key (AES-128/192/256-GCM), or allow plaintext explicitly
	// pgstore: NewTokenStore: encryption key: crypto/aes: invalid key size 9 (want 16, 24 or 32 bytes)
}

// Every replica of an agent service opens the same stores: checkpoints
// for eino.AgentConfig.Store, the cache and the tokens for the Client.
func Example() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	checkpoints, err := pgstore.NewCheckpointStore(ctx, pool, nil) // eino.AgentConfig{Store: checkpoints}
	if err != nil {
		log.Fatal(err)
	}
	_ = checkpoints
	cache, err := pgstore.NewCacheStore(ctx, pool, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cache.Close() // stops the sweeper
	tokens, err := pgstore.NewTokenStore(ctx, pool, &pgstore.TokenOptions{Key: []byte(os.Getenv("TOKEN_KEY"))})
	if err != nil {
		log.Fatal(err) // no key: the store refuses to keep tokens in clear
	}
	c, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &mcpadapter.ClientOptions{
		Cache: &mcpadapter.CacheConfig{Store: cache},
		Auth:  &mcpadapter.OAuth{Store: tokens},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}
