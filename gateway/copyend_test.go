package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// heldSaves is a session store whose next SaveSession, once armed, waits
// until it is let go: a store slow to record a new session.
type heldSaves struct {
	SessionStore
	mu      sync.Mutex
	armed   bool
	reached chan struct{}
	release chan struct{}
}

func (h *heldSaves) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.reached, h.release = true, make(chan struct{}), make(chan struct{})
}

func (h *heldSaves) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	h.mu.Lock()
	armed, reached, release := h.armed, h.reached, h.release
	h.armed = false
	h.mu.Unlock()
	if armed {
		close(reached)
		<-release
	}
	return h.SessionStore.SaveSession(ctx, id, rec, ttl)
}

// TestSharedCopyEndedAtCapBusy: replica B, at its cap of 1, holds its copy
// of alice's session, idle, which bob's initialize on B claims; while his
// session is being made (its record slow to save), alice calls a slow tool
// through B, so the claimed copy is busy when the cap ends it. Alice's
// next request of her session on B (a ping) is served by a copy made
// again, not held until the slow call ends by itself (go-sdk closes a
// session only once its requests have ended); her call ends with the copy
// (the server is told, once) and its POST ends, on either path; bob's
// session is made, and the claimed copy, not his, is ended.
func TestSharedCopyEndedAtCapBusy(t *testing.T) {
	for _, slow := range []bool{false, true} {
		t.Run(map[bool]string{false: "fast", true: "go-sdk"}[slow], func(t *testing.T) {
			srv, st := testserver.NewWithState(testserver.Options{Name: "old", Era: testserver.Legacy})
			up := testserver.StartStreamable(t, srv)
			mem := &MemorySessionStore{}
			hs := &heldSaves{SessionStore: mem}
			rs := startReplicasWith(t, []SessionStore{mem, hs}, up.URL, Options{MaxSessions: 1, MaxSessionsPerPrincipal: -1, slowPathOnly: slow})
			hc := &http.Client{Transport: &http.Transport{}}
			t.Cleanup(hc.CloseIdleConnections)
			a := rawInitialize(t, hc, rs[0].ts.URL+"/mcp", "alice")
			if a.status != http.StatusOK || a.id == "" {
				t.Fatalf("alice's initialize on A: %d %q", a.status, a.body)
			}
			onA := &rawSession{t: t, url: rs[0].ts.URL + "/mcp", id: a.id}
			onA.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
			gb, b := rs[1].g, rs[1].ts.URL+"/mcp"
			onB := &rawSession{t: t, url: b, id: a.id}
			resp := onB.postAs(testCtx(t, 10*time.Second), "alice", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			waitIdle(t, gb, 1)

			hs.arm()
			bob := make(chan capAnswer, 1)
			go func() { bob <- rawInitializeErr(hc, b, "bob") }()
			within(t, hs.reached, 10*time.Second, "bob's initialize on B saving his record")

			call := make(chan string, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				call <- postAlice(ctx, b, a.id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"ms":30000}}}`)
			}()
			if err := st.Wait(testCtx(t, 15*time.Second), func(s *testserver.State) bool { return s.Calls("slow") == 1 }); err != nil {
				t.Fatalf("alice's call never reached the server: %v", err)
			}
			onPath(t, gb, a.id, slow)
			close(hs.release)
			if d := within(t, bob, 15*time.Second, "bob's initialize"); d.status != http.StatusOK || d.id == "" {
				t.Fatalf("bob's initialize on B: %d %q, want a session", d.status, d.body)
			}
			waitFor(t, "the end of alice's busy copy on B at the cap", func() bool { return gb.shared.held(a.id) == nil })

			// Alice cancels her call through B, and pings.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done := make(chan string, 1)
			go func() { done <- postAlice(ctx, b, a.id, `{"jsonrpc":"2.0","id":3,"method":"ping"}`) }()
			select {
			case got := <-done:
				if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"result"`) {
					t.Errorf("alice's ping on B after her busy copy was ended: %s, want its result", got)
				}
			case <-ctx.Done():
				t.Errorf("alice's ping on B after her busy copy was ended: no answer in 10 s (the slow call runs 30 s)")
			}
			// Her call ended with her copy (the server told), answered.
			// (go-sdk writes no answer once its Close has begun: on its
			// path the call's POST ends without one.)
			if got := within(t, call, 10*time.Second, "the end of the POST of alice's call ended with her copy"); !slow && (!strings.HasPrefix(got, "200 ") || !strings.Contains(got, `"id":2`)) {
				t.Errorf("alice's call ended with her copy on B: %s, want its answer", got)
			}
			if err := st.Wait(testCtx(t, 10*time.Second), func(s *testserver.State) bool { return s.Cancellations() == 1 }); err != nil {
				t.Errorf("the server saw %d cancellations: %v", st.Cancellations(), err)
			}
			if n := st.Calls("slow"); n != 1 {
				t.Errorf("the server saw alice's call %d times", n)
			}
			if all, _ := gb.slots.taken(""); all != 1 || gb.shared.held(a.id) == nil {
				t.Errorf("B holds %d places, alice's copy: %v; want 1, hers made again (bob's idle session ended for it)", all, gb.shared.held(a.id) != nil)
			}
		})
	}
}

// postAlice posts body in session sid at url as alice and returns the
// answer's status and body, or the request's error.
func postAlice(ctx context.Context, url, sid, body string) string {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return fmt.Sprintf("%d %s", resp.StatusCode, got)
}
