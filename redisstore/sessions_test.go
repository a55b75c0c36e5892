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

func TestTaskStore(t *testing.T) {
	storetest.CheckTaskStore(t, redisstore.NewTaskStore(client(t, testdb.Redis(t)), nil))
}
