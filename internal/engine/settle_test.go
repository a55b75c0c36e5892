package engine

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSettleForgetsEndedSessions: the engine's sessions, found by their
// go-sdk sessions for Settle, are forgotten once they end: retired (Retire)
// and idle, or closed (Close). None stays behind after 20 sessions.
func TestSettleForgetsEndedSessions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := New(Config{
		Name: "s", Kind: InProcess, Server: testserver.New(testserver.Options{Era: testserver.Legacy}),
		SDK:            mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil),
		ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
	})
	defer e.Close()
	count := func() int {
		n := 0
		e.bySDK.Range(func(_, _ any) bool { n++; return true })
		return n
	}
	for i := range 20 {
		s, err := e.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.sessionOf(s.SDK()); got != s {
			t.Fatalf("session %d: Settle finds %p for its go-sdk session, want %p", i, got, s)
		}
		if i%2 == 0 {
			e.Retire()
		} else if err := e.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); count() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n != 0 {
		t.Errorf("%d ended sessions are still known to Settle", n)
	}
}
