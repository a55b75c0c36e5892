package redisstore_test

import (
	"log"
	"os"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/redisstore"
	"github.com/redis/go-redis/v9"
)

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
