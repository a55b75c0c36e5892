package redisstore_test

import (
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
)

func TestLimitStore(t *testing.T) {
	storetest.CheckLimitStore(t, redisstore.NewLimitStore(client(t, testdb.Redis(t)), nil))
}
