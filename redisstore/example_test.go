package redisstore_test

import (
	"fmt"
	"log"
	"os"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

// A token store keeps tokens sealed with the application's key, and
// refuses to start without one unless plaintext is asked for explicitly
// (before it sends Redis anything).
func ExampleNewTokenStore() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	_, err := redisstore.NewTokenStore(rdb, nil)
	fmt.Println(err)
	_, err = redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: []byte("too short")})
	fmt.Println(err)
	_, err = redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: make([]byte, 32)})
	fmt.Println(err)
	// Output:
	// redisstore: NewTokenStore: no encryption key: give a 16, 24 or 32-byte key (AES-128/192/256-GCM), or allow plaintext explicitly
	// redisstore: NewTokenStore: encryption key: crypto/aes: invalid key size 9 (want 16, 24 or 32 bytes)
	// <nil>
}

// Every replica of an agent service opens the same stores: checkpoints
// for eino.AgentConfig.Store, the cache and the tokens for the Client.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	defer rdb.Close()
	checkpoints := redisstore.NewCheckpointStore(rdb, nil) // eino.AgentConfig{Store: checkpoints}
	_ = checkpoints
	tokens, err := redisstore.NewTokenStore(rdb, &redisstore.TokenOptions{Key: []byte(os.Getenv("TOKEN_KEY"))})
	if err != nil {
		log.Fatal(err) // no key: the store refuses to keep tokens in clear
	}
	c, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &mcpadapter.ClientOptions{
		Cache: &mcpadapter.CacheConfig{Store: redisstore.NewCacheStore(rdb, nil)},
		Auth:  &mcpadapter.OAuth{Store: tokens},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
}
