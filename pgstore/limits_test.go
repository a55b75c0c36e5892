package pgstore_test

import (
	"testing"

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
}

func testTasks(t *testing.T, srv *testdb.Server) {
	s, err := pgstore.NewTaskStore(ctx60(t), pool(t, srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckTaskStore(t, s)
}
