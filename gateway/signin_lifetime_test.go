package gateway_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSignInMidCallShutdown: Shutdown with erin's call waiting for her
// sign-in (she accepted) and frank's question still open ends both at
// once with -32013 (the gateway is shutting down: the client makes the
// call again on another instance, where a sign-in completed meanwhile is
// found in the store), not at the end of its grace period; neither call
// reaches the server.
func TestSignInMidCallShutdown(t *testing.T) {
	store := &countingStore{TokenStore: mcpadapter.NewMemoryTokenStore()}
	e := startSignIn(t, func(o *gateway.Options) { o.SignIn.Store = store })
	ctx := ctxFor(t, 60*time.Second)
	asked := make(chan struct{}, 2)
	erin := e.urlClient(t, ctx, e.token(t, "erin"), func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	frank := e.urlClient(t, ctx, e.token(t, "frank"), func(ctx context.Context, _ *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		<-ctx.Done()
		return &mcp.ElicitResult{Action: "cancel"}, nil
	})
	ended := make(chan error, 2)
	for _, u := range []*urlUser{erin, frank} {
		go func() {
			_, err := u.cs.CallTool(ctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
			ended <- err
		}()
	}
	for range 2 {
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			t.Fatal("not asked")
		}
	}
	// erin's call waits: her answer reached the gateway, which reads the
	// token store for her sign-in (frank never answers).
	for asking := store.loads.Load(); store.loads.Load() == asking; {
		select {
		case <-ctx.Done():
			t.Fatal("the gateway never read the token store for erin's sign-in")
		case <-time.After(5 * time.Millisecond):
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := e.gw.Shutdown(sctx); err != nil || time.Since(start) > 3*time.Second {
		t.Fatalf("Shutdown with calls waiting for sign-ins: %v after %v", err, time.Since(start))
	}
	for range 2 {
		select {
		case err := <-ended:
			var we *jsonrpc.Error
			if !errors.As(err, &we) || we.Code != gateway.CodeShuttingDown {
				t.Fatalf("a call waiting for a sign-in at Shutdown: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a call waiting for a sign-in outlived Shutdown")
		}
	}
	if e.callsOf("erin")+e.callsOf("frank") != 0 {
		t.Fatal("a call reached the server")
	}
}

// TestSignInMidCallSessionGone: erin accepts and never signs in, and her
// session is ended (DELETE) while the call waits: the wait ends with the
// session (the token store is read no more, nothing is in flight:
// Shutdown returns at once; no goroutine of it left), and nothing reached
// the server.
func TestSignInMidCallSessionGone(t *testing.T) {
	store := &countingStore{TokenStore: mcpadapter.NewMemoryTokenStore()}
	e := startSignIn(t, func(o *gateway.Options) { o.SignIn.Store = store })
	ctx := ctxFor(t, 60*time.Second)
	asked := make(chan struct{}, 1)
	tok := e.token(t, "erin")
	erin := e.urlClient(t, ctx, tok, func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	if _, err := erin.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "up_whoami"}); err == nil {
		t.Fatal("warm-up: erin's prompt came without a sign-in")
	}
	base := settledGoroutines(0)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := erin.cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		ended <- err
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("erin was not asked")
	}
	time.Sleep(2 * signInPollTest)
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, e.url, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Mcp-Session-Id", erin.cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("DELETE of erin's session: %s", resp.Status)
	}
	time.Sleep(signInPollTest)
	loads := store.loads.Load()
	time.Sleep(3 * signInPollTest)
	if n := store.loads.Load(); n != loads || loads == 0 {
		t.Fatalf("the token store was read %d times after erin's session ended (%d before)", n-loads, loads)
	}
	sctx, scancel := context.WithTimeout(ctx, 3*time.Second)
	defer scancel()
	start := time.Now()
	if err := e.gw.Shutdown(sctx); err != nil || time.Since(start) > 2*time.Second {
		t.Fatalf("Shutdown after erin's session ended: %v after %v", err, time.Since(start))
	}
	cancel()
	<-ended
	_ = erin.cs.Close()
	if n := settledGoroutines(base); n > base {
		t.Fatalf("%d goroutines after erin's session ended, %d before", n, base)
	}
	if e.callsOf("erin") != 0 {
		t.Fatal("erin's call reached the server")
	}
}

// countingStore counts the reads of a TokenStore.
type countingStore struct {
	mcpadapter.TokenStore
	loads atomic.Int64
}

func (s *countingStore) Load(ctx context.Context, key string) (*mcpadapter.StoredToken, error) {
	s.loads.Add(1)
	return s.TokenStore.Load(ctx, key)
}
