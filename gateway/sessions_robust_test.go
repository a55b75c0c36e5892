//lint:file-ignore SA1019 handshake-era clients set their log level, which the session carries

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpadapter "github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/storetest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawPost sends body to url as token, in session id (if any) with the
// protocol version header version (if any), and returns the status, the
// session id header and the body of the answer.
func rawPost(t *testing.T, ctx context.Context, url, token, id, version, body string) (int, string, string) {
	t.Helper()
	return rawRequest(t, ctx, http.MethodPost, url, token, id, version, body)
}

// rawRequest is rawPost with another HTTP method.
func rawRequest(t *testing.T, ctx context.Context, method, url, token, id, version, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
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

// TestSharedSessionsGateStorm: on one replica at once, new sessions,
// sessions made again from their records, and requests go-sdk refuses
// before it asks for a session id (bad Content-Type, Accept or protocol
// version, a client that goes away): every session gets its own id, a
// session made again gets its own, and the gate is free afterwards.
func TestSharedSessionsGateStorm(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 60*time.Second)
	url := rs[1].ts.URL + "/mcp"
	init := func(name string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`
	}
	// Sessions made on replica 0, to be made again on replica 1.
	var old []string
	oldName := map[string]string{}
	for i := range 8 {
		name := fmt.Sprintf("old%d", i)
		code, id, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", "", "", init(name))
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		old = append(old, id)
		oldName[id] = name
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	newName := map[string]string{}
	for i := range 16 {
		wg.Go(func() {
			name := fmt.Sprintf("new%d", i)
			code, id, body := rawPost(t, ctx, url, "alice", "", "", init(name))
			if code != http.StatusOK || id == "" {
				t.Errorf("initialize %s: %d %s", name, code, body)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if prev, dup := newName[id]; dup {
				t.Errorf("sessions %s and %s got one id", prev, name)
			}
			newName[id] = name
		})
	}
	for _, id := range old {
		wg.Go(func() {
			if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
				t.Errorf("remade session: %d %s", code, body)
			}
		})
	}
	refused := func(mut func(*http.Request)) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(init("refused")))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		mut(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("a request go-sdk should refuse was answered 200")
		}
	}
	for range 8 {
		wg.Go(func() { refused(func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }) })
		wg.Go(func() { refused(func(r *http.Request) { r.Header.Set("Accept", "text/html") }) })
		wg.Go(func() { refused(func(r *http.Request) { r.Header.Set("Mcp-Protocol-Version", "1999-01-01") }) })
		wg.Go(func() {
			gone, cancel := context.WithCancel(ctx)
			req, _ := http.NewRequestWithContext(gone, http.MethodPost, url, strings.NewReader(init("gone")))
			req.Header.Set("Authorization", "Bearer alice")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			time.AfterFunc(time.Millisecond, cancel)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
			cancel()
		})
	}
	wg.Wait()
	ids := map[string]int{}
	for ss := range rs[1].g.server.Sessions() {
		ids[ss.ID()]++
		want := newName[ss.ID()]
		if want == "" {
			want = oldName[ss.ID()]
		}
		if p := ss.InitializeParams(); p != nil && want != "" && p.ClientInfo.Name != want {
			t.Errorf("session %s is %s's", ss.ID(), p.ClientInfo.Name)
		}
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("%d sessions with id %s", n, id)
		}
	}
	for _, id := range old {
		if ids[id] != 1 {
			t.Errorf("remade session %s: %d sessions", id, ids[id])
		}
	}
	if code, id, body := rawPost(t, ctx, url, "alice", "", "", init("after")); code != http.StatusOK || id == "" {
		t.Errorf("initialize after the storm: %d %s", code, body)
	}
}

// TestSharedSessionsReplayRecordsNoStreams: the requests a replica
// replays to make a session again record no stream: only the client's
// own request's stream names its id.
func TestSharedSessionsReplayRecordsNoStreams(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 2, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if code, _, body := rawPost(t, ctx, rs[1].ts.URL+"/mcp", "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":4242,"method":"tools/list"}`); code != http.StatusOK {
		t.Fatalf("on the other replica: %d %s", code, body)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	n := 0
	for k, r := range store.recs {
		if strings.HasPrefix(k, "stream.") && strings.Contains(string(r.rec), "4242") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d stream records name the request, want 1", n)
	}
}

// rawGet resumes a stream of session id with Last-Event-ID eid, as token.
func rawGet(t *testing.T, ctx context.Context, url, token, id, eid string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	req.Header.Set("Last-Event-ID", eid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // a stream go-sdk keeps open ends with ctx
	return resp.StatusCode, string(b)
}

// firstEventID returns the first SSE event id in body.
func firstEventID(t *testing.T, body string) string {
	t.Helper()
	for line := range strings.SplitSeq(body, "\n") {
		if eid, ok := strings.CutPrefix(line, "id: "); ok {
			return eid
		}
	}
	t.Fatalf("no event id in %q", body)
	return ""
}

// TestSharedSessionsResumeHostile: a stream one replica wrote, resumed on
// another: never by another principal or by nobody (and their tries do
// not spend it), once by its own client, with its requests' ids as the
// client sent them (quotes, newlines, markup) in well-formed events.
func TestSharedSessionsResumeHostile(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	const rid = `"a\"b\nc\r\n\ndata: {}</script>"`
	code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":`+rid+`,"method":"tools/list"}`)
	if code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	eid := firstEventID(t, body)
	other := rs[1].ts.URL + "/mcp"
	for _, tok := range []string{"bob", ""} {
		code, body := rawGet(t, ctx, other, tok, cs.ID(), eid)
		if code == http.StatusOK || strings.Contains(body, "-32015") {
			t.Errorf("%q resumed alice's stream: %d %s", tok, code, body)
		}
	}
	code, body = rawGet(t, ctx, other, "alice", cs.ID(), eid)
	if code != http.StatusOK {
		t.Fatalf("alice resuming her stream: %d %s", code, body)
	}
	var datas []string
	for line := range strings.SplitSeq(strings.TrimRight(body, "\n"), "\n") {
		switch {
		case line == "", strings.HasPrefix(line, "event: message"), strings.HasPrefix(line, "id: "):
		case strings.HasPrefix(line, "data: "):
			datas = append(datas, strings.TrimPrefix(line, "data: "))
		default:
			t.Errorf("a line that is no part of an event: %q", line)
		}
	}
	if len(datas) != 1 {
		t.Fatalf("%d events, want 1: %s", len(datas), body)
	}
	var msg struct {
		ID    string `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(datas[0]), &msg); err != nil || msg.ID != "a\"b\nc\r\n\ndata: {}</script>" || msg.Error.Code != CodeCallInterrupted {
		t.Errorf("the event: %v %+v", err, msg)
	}
	if code, body := rawGet(t, ctx, other, "alice", cs.ID(), eid); strings.Contains(body, "-32015") {
		t.Errorf("the stream answered twice: %d %s", code, body)
	}
}

// TestSharedSessionsOtherPrincipalNowhere: on a replica that does not
// hold alice's session, bob can neither use it, nor make it
// there, nor end it.
func TestSharedSessionsOtherPrincipalNowhere(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 2, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	other := rs[1].ts.URL + "/mcp"
	for _, tok := range []string{"bob", "Alice"} {
		if code, _, body := rawPost(t, ctx, other, tok, cs.ID(), v1125, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != http.StatusForbidden {
			t.Errorf("%q used alice's session: %d %s", tok, code, body)
		}
		if code, _ := rawGet(t, ctx, other, tok, cs.ID(), ""); code != http.StatusForbidden {
			t.Errorf("%q listened on alice's session: %d", tok, code)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, other, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Mcp-Session-Id", cs.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%q ended alice's session: %d", tok, resp.StatusCode)
		}
	}
	if n := sessionsWithID(rs[1].g, cs.ID()); n != 0 {
		t.Errorf("bob made alice's session on the other replica (%d)", n)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("alice after bob's tries: %v", err)
	}
}

// TestSharedSessionsLiveTTLAfterLastRequest: a session's record lives at
// least its TTL after the session's last request, not after the last
// time the record was written.
func TestSharedSessionsLiveTTLAfterLastRequest(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	for range 3 {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		store.mu.Lock()
		expires := store.recs[cs.ID()].expires
		store.mu.Unlock()
		if expires.Before(after.Add(DefaultSessionTTL)) {
			t.Errorf("the record expires %v after the last request, want at least %v", expires.Sub(after), DefaultSessionTTL)
		}
	}
	// A record written half its TTL ago, expiring soon: a request extends it.
	b, _ := store.LoadSession(ctx, cs.ID())
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	rec.Touched = time.Now().Add(-DefaultSessionTTL / 2)
	b, _ = json.Marshal(&rec)
	if err := store.SaveSession(ctx, cs.ID(), b, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	store.mu.Lock()
	expires := store.recs[cs.ID()].expires
	store.mu.Unlock()
	if expires.Before(after.Add(DefaultSessionTTL)) {
		t.Errorf("an old record expires %v after a request, want at least %v", expires.Sub(after), DefaultSessionTTL)
	}
}

// blockingStore is a MemorySessionStore whose operations can block until
// their context ends (a store that is slow or gone).
type blockingStore struct {
	MemorySessionStore
	block atomic.Bool
}

func (s *blockingStore) wait(ctx context.Context) error {
	if !s.block.Load() {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *blockingStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.MemorySessionStore.LoadSession(ctx, id)
}

func (s *blockingStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.MemorySessionStore.SaveSession(ctx, id, rec, ttl)
}

func (s *blockingStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	if err := s.wait(ctx); err != nil {
		return false, err
	}
	return s.MemorySessionStore.ReplaceSession(ctx, id, old, rec, ttl)
}

func (s *blockingStore) DeleteSession(ctx context.Context, id string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.MemorySessionStore.DeleteSession(ctx, id)
}

// TestSharedSessionsSlowStore: a store that does not answer bounds every
// path by StoreTimeout: requests are refused (503), new sessions refused,
// nothing is served unchecked and nothing is left behind.
func TestSharedSessionsSlowStore(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &blockingStore{}
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{Logger: quietLogger(t), Sessions: &SessionOptions{Store: store, StoreTimeout: 50 * time.Millisecond}})
	ctx := testCtx(t, 30*time.Second)
	code, id, body := rawPost(t, ctx, url, "alice", "", "", initBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	store.block.Store(true)
	if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusServiceUnavailable {
		t.Errorf("a request with the store gone: %d %s", code, body)
	}
	if code, _ := rawGet(t, ctx, url, "alice", id, "x_1"); code != http.StatusServiceUnavailable {
		t.Errorf("a resumption with the store gone: %d", code)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a DELETE with the store gone: %d", resp.StatusCode)
	}
	before := 0
	for range g.server.Sessions() {
		before++
	}
	if code, _, body := rawPost(t, ctx, url, "alice", "", "", initBody); code == http.StatusOK && !strings.Contains(body, `"error"`) {
		t.Errorf("a session made with the store gone: %d %s", code, body)
	}
	after := 0
	for range g.server.Sessions() {
		after++
	}
	if after != before {
		t.Errorf("%d sessions after a refused initialize, want %d", after, before)
	}
	store.block.Store(false)
	if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != http.StatusOK {
		t.Errorf("after the store came back: %d %s", code, body)
	}
}

// TestSharedSessionsCopiesEnd: a replica's copy of a session that ended
// elsewhere (DELETE on another replica) and gets no more requests here
// ends within the session's TTL, though Options.SessionTimeout is zero.
func TestSharedSessionsCopiesEnd(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	var gs []*Gateway
	var urls []string
	for range 2 {
		g, err := New([]Server{{Name: "s", Target: up.URL}}, &Options{Logger: quietLogger(t), Sessions: &SessionOptions{Store: store, TTL: 300 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		if err := g.Start(testCtx(t, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(g))
		t.Cleanup(ts.Close)
		gs, urls = append(gs, g), append(urls, ts.URL+"/mcp")
	}
	ctx := testCtx(t, 30*time.Second)
	code, id, body := rawPost(t, ctx, urls[0], "alice", "", "", initBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	rawPost(t, ctx, urls[0], "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _, body := rawPost(t, ctx, urls[1], "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
		t.Fatalf("on the other replica: %d %s", code, body)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, urls[0], nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for i := 0; sessionsWithID(gs[1], id) != 0; i++ {
		if i == 200 {
			t.Fatal("the other replica's copy of the ended session lives on")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if gs[1].shared.held(id) != nil {
		t.Error("the other replica still holds the ended session")
	}
}

// TestSharedSessionsLocalResumeAndEndedCopy: a stream resumed on the
// replica that wrote it is replayed (the request's real answer), and a
// replica's copy of a session ended elsewhere is closed by its next
// request.
func TestSharedSessionsLocalResumeAndEndedCopy(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	home := rs[0].ts.URL + "/mcp"
	code, _, body := rawPost(t, ctx, home, "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":77,"method":"tools/list"}`)
	if code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	eid := firstEventID(t, body)
	code, body = rawGet(t, ctx, home, "alice", cs.ID(), eid)
	if code != http.StatusOK || strings.Contains(body, "-32015") || !strings.Contains(body, `"tools"`) {
		t.Errorf("resuming a stream on the replica that wrote it: %d %s", code, body)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, rs[1].ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if code, _, body := rawPost(t, ctx, home, "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":78,"method":"tools/list"}`); code != http.StatusNotFound {
		t.Errorf("the ended session on its home replica: %d %s", code, body)
	}
	if n := sessionsWithID(rs[0].g, cs.ID()); n != 0 {
		t.Errorf("the home replica keeps its copy of the ended session (%d)", n)
	}
}

// deleteAfterLoadStore is a MemorySessionStore that deletes a record
// right after the after-th load from now: a DELETE on another replica
// between a replica's read of the record and its write of it.
type deleteAfterLoadStore struct {
	MemorySessionStore
	after atomic.Int64
}

func (s *deleteAfterLoadStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	b, err := s.MemorySessionStore.LoadSession(ctx, id)
	if b != nil && s.after.Add(-1) == 0 {
		_ = s.MemorySessionStore.DeleteSession(ctx, id)
	}
	return b, err
}

// TestSharedSessionsDeleteNotUndone: a session ended on one replica while
// another is writing its record (extending it, or recording a change of
// its log level) stays ended.
func TestSharedSessionsDeleteNotUndone(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &deleteAfterLoadStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	url := rs[0].ts.URL + "/mcp"
	for _, step := range []string{"extend", "setLevel"} {
		code, id, body := rawPost(t, ctx, url, "alice", "", "", initBody)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %s", code, body)
		}
		rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		msg := `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`
		store.after.Store(2) // the request's check, then the change's read
		if step == "extend" {
			// A record old enough to be extended by the next request.
			b, _ := store.MemorySessionStore.LoadSession(ctx, id)
			var rec sessionRecord
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			rec.Touched = time.Now().Add(-DefaultSessionTTL / 2)
			b, _ = json.Marshal(&rec)
			_ = store.MemorySessionStore.SaveSession(ctx, id, b, time.Hour)
			msg = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
			store.after.Store(1) // the request's check
		}
		rawPost(t, ctx, url, "alice", id, v1125, msg)
		if b, _ := store.MemorySessionStore.LoadSession(ctx, id); b != nil {
			t.Errorf("%s: the session's record is back after it was deleted: %s", step, b)
		}
	}
}

// TestMemorySessionStore: MemorySessionStore keeps the SessionStore
// contract the store modules are checked against.
func TestMemorySessionStore(t *testing.T) {
	t.Parallel()
	storetest.CheckSessionStore(t, &MemorySessionStore{})
}

// TestSharedSessionsOversizeRecords: nothing goes into the store that a
// replica would refuse to read back (over maxSessionRecord): a session
// whose initialize is that big is refused at once (not recorded and then
// failing on every later request), and a request whose ids are that big
// is served without a stream record.
func TestSharedSessionsOversizeRecords(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	url := rs[0].ts.URL + "/mcp"
	big := strings.Repeat("x", maxSessionRecord+1)
	code, id, body := rawPost(t, ctx, url, "alice", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"`+big+`","version":"1"}}}`)
	if code == http.StatusOK && !strings.Contains(body, `"error"`) {
		if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
			t.Errorf("a session with a big initialize was made, and then refused: %d %.200s", code, body)
		}
	}
	cs := bearerClient(t, url, "alice")
	if code, _, body := rawPost(t, ctx, url, "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":"`+big+`","method":"tools/list"}`); code != http.StatusOK {
		t.Errorf("a request with a big id: %d %.200s", code, body)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for k, r := range store.recs {
		if len(r.rec) > maxSessionRecord {
			t.Errorf("a record of %d bytes was stored (%s), over the %d a replica reads", len(r.rec), k, maxSessionRecord)
		}
	}
}

// TestSharedSessionsCorruptRecords: records that are not the gateway's
// (not JSON, wrong types, no initialize, odd levels and subscriptions)
// are never served, crash nothing and leave no session behind.
func TestSharedSessionsCorruptRecords(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 60*time.Second)
	now := `"touched":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"`
	init := `"init":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`
	for i, rec := range []string{
		`not json`,
		`{"principal":1}`,
		`{"principal":"alice","version":"2025-11-25",` + now + `}`,
		`{"principal":"alice","version":"2025-11-25","init":null,` + now + `}`,
		`{"principal":"alice","version":"2025-11-25","init":"x",` + now + `}`,
		`{"principal":"alice","version":"","init":{},` + now + `}`,
		`{"principal":"alice","version":"2025-11-25",` + init + `,"level":"\n\"}",` + now + `}`,
		`{"principal":"alice","version":"2025-11-25",` + init + `,"subs":["","\u0000",` + strings.Repeat(`"x",`, 300) + `"y"],` + now + `}`,
		`{"principal":"alice","version":"2026-07-28",` + init + `,` + now + `}`,
	} {
		id := fmt.Sprintf("CORRUPT%019d", i)
		id = strings.NewReplacer("0", "A", "1", "B", "8", "C", "9", "D").Replace(id)
		if !validSessionID(id) {
			t.Fatalf("%q is no session id", id)
		}
		if err := store.SaveSession(ctx, id, []byte(rec), time.Hour); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if code == http.StatusOK && strings.Contains(body, `"tools"`) {
				t.Logf("record %d served: %.300s", i, body)
			}
		}
		if n := sessionsWithID(rs[0].g, id); n > 1 {
			t.Errorf("record %d: %d sessions with its id", i, n)
		}
	}
	cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("a good session after the corrupt ones: %v", err)
	}
}

// TestSharedSessionsCloseEndsHeld: Close of a replica that holds sessions
// made again there, one with a stream open to its client, returns, and
// holds nothing afterwards.
func TestSharedSessionsCloseEndsHeld(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	var ids []string
	for range 3 {
		cs := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
		if code, _, body := rawPost(t, ctx, rs[1].ts.URL+"/mcp", "alice", cs.ID(), v1125, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusOK {
			t.Fatalf("on the other replica: %d %s", code, body)
		}
		ids = append(ids, cs.ID())
	}
	before := rs[1].hits.Load()
	streamDone := make(chan struct{})
	go func() {
		defer close(streamDone)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rs[1].ts.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", ids[0])
		req.Header.Set("Mcp-Protocol-Version", v1125)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	for i := 0; rs[1].hits.Load() == before; i++ { // the stream's request is in
		if i == 500 {
			t.Fatal("the stream's request did not come")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and, most likely, its stream open
	closed := make(chan error, 1)
	go func() { closed <- rs[1].g.Close() }()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return")
	}
	for _, id := range ids {
		if rs[1].g.shared.held(id) != nil || sessionsWithID(rs[1].g, id) != 0 {
			t.Errorf("session %s outlived Close", id)
		}
	}
	select {
	case <-streamDone:
	case <-ctx.Done():
		t.Error("the client's stream outlived Close")
	}
}

// methodTelemetry records the methods of the operations it sees.
type methodTelemetry struct {
	mu      sync.Mutex
	methods []string
}

func (m *methodTelemetry) StartServerOperation(ctx context.Context, op mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	m.mu.Lock()
	m.methods = append(m.methods, op.Method)
	m.mu.Unlock()
	return ctx, func(mcpadapter.ServerOperationResult) {}
}

func (*methodTelemetry) InjectMeta(context.Context, map[string]any) {}

func (m *methodTelemetry) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.methods...)
}

// TestSharedSessionsReplayHeader: the requests a replica replays are not
// observed, the client's own are; a client that sends the replay header
// itself, even with the replica's own value, is treated as any client
// (its session recorded, its requests observed).
func TestSharedSessionsReplayHeader(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &MemorySessionStore{}
	tel := &methodTelemetry{}
	g, url := startForPrincipals(t, []Server{{Name: "s", Target: up.URL}}, &Options{Logger: quietLogger(t), Telemetry: tel, Sessions: &SessionOptions{Store: store}})
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)

	// A session made on the other replica, with a log level, made again here.
	code, id, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", "", "", initBody)
	if code != http.StatusOK {
		t.Fatalf("initialize: %d %s", code, body)
	}
	rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); code != http.StatusOK {
		t.Fatalf("here: %d %s", code, body)
	}
	if got := tel.seen(); len(got) != 1 || got[0] != "tools/list" {
		t.Errorf("observed %q, want only the client's tools/list", got)
	}

	// A client sending the header with this replica's own value.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Authorization", "Bearer bob")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(replayHeader, g.shared.replayToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	bobID := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || bobID == "" {
		t.Fatalf("bob's initialize: %d", resp.StatusCode)
	}
	if b, _ := store.LoadSession(ctx, bobID); b == nil || !strings.Contains(string(b), `"principal":"bob"`) {
		t.Errorf("a session made with the replay header was not recorded: %s", b)
	}
	if got := tel.seen(); len(got) != 2 || got[1] != "initialize" {
		t.Errorf("observed %q, want bob's initialize too", got)
	}
}

// TestSharedSessionsResumeOtherSession: a client naming, in one of its
// sessions, a stream of another of its sessions gets nothing of it, and
// does not spend it.
func TestSharedSessionsResumeOtherSession(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	rs := startReplicas(t, 2, &MemorySessionStore{}, up.URL)
	ctx := testCtx(t, 30*time.Second)
	a := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	b := bearerClient(t, rs[0].ts.URL+"/mcp", "alice")
	code, _, body := rawPost(t, ctx, rs[0].ts.URL+"/mcp", "alice", a.ID(), v1125, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", code, body)
	}
	eid := firstEventID(t, body)
	other := rs[1].ts.URL + "/mcp"
	if _, body := rawGet(t, ctx, other, "alice", b.ID(), eid); strings.Contains(body, "-32015") {
		t.Errorf("another session's stream was answered: %s", body)
	}
	if _, body := rawGet(t, ctx, other, "alice", a.ID(), eid); !strings.Contains(body, "-32015") {
		t.Errorf("the stream's own session after another tried it: %s", body)
	}
}

// changeAfterLoadStore is a MemorySessionStore that, after the after-th
// load from now, writes change into the record: another replica
// recording a change of the session between a replica's read of the
// record and its write of it.
type changeAfterLoadStore struct {
	MemorySessionStore
	after  atomic.Int64
	change func(*sessionRecord)
}

func (s *changeAfterLoadStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	b, err := s.MemorySessionStore.LoadSession(ctx, id)
	if b != nil && s.after.Add(-1) == 0 {
		var rec sessionRecord
		if json.Unmarshal(b, &rec) == nil {
			s.change(&rec)
			nb, _ := json.Marshal(&rec)
			_ = s.MemorySessionStore.SaveSession(ctx, id, nb, time.Hour)
		}
	}
	return b, err
}

// TestSharedSessionsConcurrentChangesKept: two changes of a session
// recorded at once by two replicas (a subscription here, another there)
// are both kept.
func TestSharedSessionsConcurrentChangesKept(t *testing.T) {
	t.Parallel()
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	store := &changeAfterLoadStore{change: func(r *sessionRecord) { r.Subs = append(r.Subs, "test://elsewhere") }}
	rs := startReplicas(t, 1, store, up.URL)
	ctx := testCtx(t, 30*time.Second)
	url := rs[0].ts.URL + "/mcp"
	code, id, body := rawPost(t, ctx, url, "alice", "", "", initBody)
	if code != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d %s", code, body)
	}
	rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	store.after.Store(2) // the request's check, then the change's read
	if code, _, body := rawPost(t, ctx, url, "alice", id, v1125, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`); code != http.StatusOK {
		t.Fatalf("setLevel: %d %s", code, body)
	}
	b, _ := store.MemorySessionStore.LoadSession(ctx, id)
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Level != "debug" || !slices.Contains(rec.Subs, "test://elsewhere") {
		t.Errorf("the record after two changes at once: level %q, subscriptions %q", rec.Level, rec.Subs)
	}
}
