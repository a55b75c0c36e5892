package engine

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRetiredSessionTakesNoRequest: a request given a session that is
// then retired (Retire) or found lost (expire) before the request starts
// is not run on it, where the session's close, which no request in
// flight held back, would cancel it: it is refused as never sent, and
// goes on a new session.
func TestRetiredSessionTakesNoRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		retire func(*Engine, *Session)
	}{
		{"Retire", func(e *Engine, _ *Session) { e.Retire() }},
		{"expire", (*Engine).expire},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			e := New(Config{
				Name: "s", Kind: InProcess, Server: testserver.New(testserver.Options{Era: testserver.Legacy}),
				SDK:            mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil),
				ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
			})
			defer e.Close()
			for i := range 20 {
				s, err := e.Session(ctx)
				if err != nil {
					t.Fatal(err)
				}
				tc.retire(e, s)
				ran := false
				err = s.run(ctx, nil, func(ctx context.Context, _ *Session) error {
					ran = true
					select {
					case <-ctx.Done():
						return context.Cause(ctx)
					case <-time.After(50 * time.Millisecond):
						return nil
					}
				})
				switch {
				case ran && err != nil:
					t.Fatalf("request %d ran on the retired session and was cancelled by its close: %v", i, err)
				case !ran && !neverSent(err, false):
					t.Fatalf("request %d was refused with %v, not as a request never sent", i, err)
				}
				if s2, err := e.Session(ctx); err != nil || s2 == s {
					t.Fatalf("request %d: the next session is %p (%v), the retired one %p", i, s2, err, s)
				}
			}
		})
	}
}

// TestRetireWhileRequestsEnd: sessions retired (Retire, expire) while
// their last requests end close once, without a data race between the
// retirement and the request that closes the session (run with -race).
func TestRetireWhileRequestsEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := New(Config{
		Name: "s", Kind: InProcess, Server: testserver.New(testserver.Options{Era: testserver.Legacy}),
		SDK:            mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil),
		ConnectTimeout: 10 * time.Second, ProbeTimeout: 5 * time.Second, CloseGrace: time.Second,
	})
	defer e.Close()
	for i := range 20 {
		s, err := e.Session(ctx)
		if err != nil {
			t.Fatal(err)
		}
		release := s.Hold()
		ended := make(chan struct{})
		go func() {
			release()
			close(ended)
		}()
		if i%2 == 0 {
			e.Retire()
		} else {
			e.expire(s)
		}
		<-ended
		select {
		case <-s.life.Done():
		case <-ctx.Done():
			t.Fatalf("session %d: retired with no request left, it was never closed", i)
		}
	}
}
