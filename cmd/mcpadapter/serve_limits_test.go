//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testdb"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeLimitsReplicaKilled: two `serve` replicas share a concurrency
// cap of one call per principal through Redis. A call in flight on
// replica A holds the slot: replica B refuses alice's call with
// CodeLimited and a retry time within the lease. A is killed with
// SIGKILL mid-call; the slot comes back to B once its lease lapses.
func TestServeLimitsReplicaKilled(t *testing.T) {
	const key = "alice-key-0123456789abcdef"
	const lease = 2 * time.Second
	store := testdb.Redis(t)
	srv, st := testserver.NewWithState(testserver.Options{Name: "alpha"})
	up := testserver.StartStreamable(t, srv, testserver.Stateless())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"alpha": {"url": %q}}}`, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"KEY_ALICE=" + key, "STORE=" + store.URL}
	args := []string{"--config", cfg, "--listen", "127.0.0.1:0", "--api-key", "alice=KEY_ALICE",
		"--limit", "name=one-at-a-time,per=principal,concurrent=1", "--store-env", "STORE", "--limit-lease-ttl", lease.String(),
		"--store-timeout", "20s"} // the test's Redis syncs its file at every write
	a := startServe(t, dir, env, args...)
	urlA, urlB := a.URL, startServe(t, dir, env, args...).URL

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	connect := func(url string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{key}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	onA, onB := connect(urlA), connect(urlB)
	echo := func() (*jsonrpc.Error, error) {
		_, err := onB.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		var we *jsonrpc.Error
		if errors.As(err, &we) && we.Code == gateway.CodeLimited {
			return we, nil
		}
		return nil, err
	}
	if we, err := echo(); we != nil || err != nil {
		t.Fatalf("alice's first call on B: %v, %v", we, err)
	}
	endedA := make(chan error, 1)
	go func() {
		_, err := onA.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}}) // outlasts the kill; the server runs it to its end
		endedA <- err
	}()
	// Once the server has A's call, A holds alice's slot: B refuses her.
	// (A probe on B before that could take the slot first and A refuse.)
	running := make(chan error, 1)
	go func() { running <- st.Wait(ctx, func(s *testserver.State) bool { return s.Calls("slow") > 0 }) }()
	select {
	case err := <-endedA:
		t.Fatalf("alice's call on A ended before A was killed: %v\n%s", err, a.stderr)
	case err := <-running:
		if err != nil {
			t.Fatalf("the server never got alice's call on A: %v\n%s", err, a.stderr)
		}
	}
	refused, err := echo()
	if err != nil || refused == nil {
		t.Fatalf("B did not refuse alice while her call ran on A: %v\n%s", err, a.stderr)
	}
	var d gateway.LimitData
	if err := json.Unmarshal(refused.Data, &d); err != nil || d.Kind != "concurrency" || d.Limit != "one-at-a-time" || d.RetryAfterMs < 1 || d.RetryAfterMs > lease.Milliseconds() {
		t.Errorf("B's refusal: %q %s (%v); want the limit, kind concurrency and a retry within the lease", refused.Message, refused.Data, err)
	}
	_ = a.stop(syscall.SIGKILL)
	// The slot comes back within the lease: B's call goes through.
	for i := 0; ; i++ {
		we, err := echo()
		if err != nil {
			t.Fatal(err)
		}
		if we == nil {
			break
		}
		if i == 600 || ctx.Err() != nil {
			t.Fatalf("the slot of the killed replica never came back: %q", we.Message)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
