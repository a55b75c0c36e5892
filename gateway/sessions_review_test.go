package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// rawPost sends body to url as token, in session id (if any) with the
// protocol version header version (if any), and returns the status, the
// session id header and the body of the answer.
func rawPost(t *testing.T, ctx context.Context, url, token, id, version, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// sessionsWithID counts the sessions of g's server with id.
func sessionsWithID(g *Gateway, id string) int {
	n := 0
	for ss := range g.server.Sessions() {
		if ss.ID() == id {
			n++
		}
	}
	return n
}

// TestSharedSessionsFailedRemakeLeavesNothing: a record that cannot be
// made again (here a protocol version no replica speaks) is refused on
// every request, and leaves no session behind however many times it is
// tried.
func TestSharedSessionsFailedRemakeLeavesNothing(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	const id = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	rec := `{"principal":"alice","version":"1999-01-01","init":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"c","version":"1"}},"touched":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}`
	if err := store.SaveSession(ctx, id, []byte(rec), time.Hour); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusServiceUnavailable {
			t.Errorf("request %d: %d %s, want 503", i, code, body)
		}
	}
	if n := sessionsWithID(rs[0].g, id); n != 0 {
		t.Errorf("%d sessions with the id were left behind, want 0", n)
	}
}

// saveFailingStore is a MemorySessionStore whose saves can fail.
type saveFailingStore struct {
	MemorySessionStore
	failSave atomic.Bool
}

func (s *saveFailingStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	if s.failSave.Load() {
		return errStoreDown
	}
	return s.MemorySessionStore.SaveSession(ctx, id, rec, ttl)
}

// TestSharedSessionsUnrecordedEnds: a session whose record cannot be
// saved is refused, and go-sdk's handler does not keep it.
func TestSharedSessionsUnrecordedEnds(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &saveFailingStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	store.failSave.Store(true)
	for i := range 3 {
		code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", "", "", initBody)
		if code == http.StatusOK && !strings.Contains(body, `"error"`) {
			t.Fatalf("initialize %d with the store down: %d %s", i, code, body)
		}
	}
	n := 0
	for range rs[0].g.server.Sessions() {
		n++
	}
	if n != 0 {
		t.Errorf("%d sessions kept after their initialize was refused, want 0", n)
	}
}

// TestSharedSessionsNotRemadeAfterClose: a replica that is closed makes
// no session again (none would be closed, and Close's wait for them is
// over).
func TestSharedSessionsNotRemadeAfterClose(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	if err := rs[1].g.Close(); err != nil {
		t.Fatal(err)
	}
	code, _, body := rawPost(t, ctx, rs[1].ts.URL+"/mcp", "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if code == http.StatusOK {
		t.Errorf("a closed replica served a session: %d %s", code, body)
	}
	if n := sessionsWithID(rs[1].g, cs.ID()); n != 0 {
		t.Errorf("a closed replica made the session again (%d)", n)
	}
}
