package replicatest

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// claimPost posts body in session id at url as alice, in the background,
// and sends its status and body (or the error) on the channel returned.
func claimPost(ctx context.Context, url, id, body string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+limitKeys["alice"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			ch <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ch <- resp.Status + " " + string(b)
	}()
	return ch
}

// TestSharedSessionClaimStores: over a session store on a real server,
// alice's call under id "retry-7" is in flight on replica A; the same id
// sent to replica B is refused as a duplicate in-flight id, the server
// running the call once; once A answered, the id runs on B.
func TestSharedSessionClaimStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := newLimitEnv(t)
			store, _ := stores[name]()
			urlA, urlB := e.sessionReplica(store), e.sessionReplica(store)
			id := e.client(urlA, "alice").ID()
			const call = `{"jsonrpc":"2.0","id":"retry-7","method":"tools/call","params":{"name":"hold","arguments":{}}}`
			ctx := limitCtx(t, 60*time.Second)
			onA := claimPost(ctx, urlA, id, call)
			wait := func(ch <-chan struct{}, what string) {
				t.Helper()
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("no %s", what)
				}
			}
			wait(e.started, "run of the call on A")
			select {
			case got := <-claimPost(ctx, urlB, id, call):
				if !strings.HasPrefix(got, "400") || !strings.Contains(got, "duplicate in-flight request ID") {
					t.Errorf("the id again on B: %s, want 400 and a duplicate id error", got)
				}
			case <-e.started:
				t.Error("the server ran the call a second time, on B")
				e.finish <- struct{}{}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer from B")
			}
			e.finish <- struct{}{}
			if got := <-onA; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
				t.Fatalf("A's answer: %s", got)
			}
			// A releases the claim once its answer is written: B runs the
			// id then (a refusal meanwhile is the claim not yet released).
			deadline := time.Now().Add(10 * time.Second)
			for {
				ch := claimPost(ctx, urlB, id, call)
				select {
				case <-e.started:
					e.finish <- struct{}{}
					if got := <-ch; !strings.HasPrefix(got, "200") || !strings.Contains(got, "held") {
						t.Fatalf("B's answer: %s", got)
					}
					return
				case got := <-ch:
					if !strings.Contains(got, "duplicate in-flight request ID") || time.Now().After(deadline) {
						t.Fatalf("the id on B once A answered: %s", got)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}
