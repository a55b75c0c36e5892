package redisstore_test

import (
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/redisstore"
)

func TestSessionStore(t *testing.T) {
	storetest.CheckSessionStore(t, redisstore.NewSessionStore(client(t, testdb.Redis(t)), nil))
}
