//lint:file-ignore SA1019 roots and sampling, deprecated in 2026-07-28, are alive for handshake-era sessions

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerRig is a session shared by two replicas of a gateway in front of
// a server whose tools q1 and q2 each ask the client a question and say
// which answer they got.
type answerRig struct {
	t  *testing.T
	rs []*replica
	id string
}

func newAnswerRig(t *testing.T) *answerRig {
	store := &MemorySessionStore{}
	return newAnswerRigWith(t, []SessionStore{store, store}, Options{})
}

// newAnswerRigWith is newAnswerRig with a store for each replica and
// opts; the session is made on replica 0.
func newAnswerRigWith(t *testing.T, stores []SessionStore, opts Options) *answerRig {
	return newAnswerRigHook(t, stores, opts, nil)
}

// newAnswerRigHook is newAnswerRigWith with before, when not nil, called
// with each replica's gateway before it starts.
func newAnswerRigHook(t *testing.T, stores []SessionStore, opts Options, before func(*Gateway)) *answerRig {
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	for _, name := range []string{"q1", "q2"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "question " + name, RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s got %s %v", name, res.Action, res.Content)}}}, nil, nil
		})
	}
	up := testserver.StartStreamable(t, srv)
	a := &answerRig{t: t, rs: startReplicasHook(t, stores, up.URL, opts, before)}
	resp := a.post(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v1125+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	a.id = resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	a.post(0, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return a
}

func (a *answerRig) post(replica int, body string) *http.Response {
	t := a.t
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, a.rs[replica].ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer alice")
	if a.id != "" {
		req.Header.Set("Mcp-Session-Id", a.id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// call calls tool on replica and returns the data of its stream's events.
func (a *answerRig) call(replica int, reqID int, tool string) <-chan string {
	return streamData(a.post(replica, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, reqID, tool)))
}

// streamData returns the data of the events of resp's stream, read until
// it ends.
func streamData(resp *http.Response) <-chan string {
	ch := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "data: ") && len(l) > 6 {
				ch <- strings.TrimPrefix(l, "data: ")
			}
		}
		close(ch)
	}()
	return ch
}

// answer posts the client's answer to question qid (JSON) to replica.
func (a *answerRig) answer(replica int, qid, content string) int {
	resp := a.post(replica, answerBody(qid, content))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSharedSessionsAnswerNotMixed: two replicas each ask the first
// question of their copies of one session, under ids of their own; the
// answer to replica 1's question, sent to replica 0, is given to replica
// 1's question and not to replica 0's.
func TestSharedSessionsAnswerNotMixed(t *testing.T) {
	a := newAnswerRig(t)
	s1 := a.call(0, 10, "q1")
	q1 := within(t, s1, 10*time.Second, "q1's question")
	if !tokenID(questionIDOf(q1), 1) || !strings.Contains(q1, "question q1") {
		t.Fatalf("q1's question: %s", q1)
	}
	s2 := a.call(1, 11, "q2")
	q2 := within(t, s2, 10*time.Second, "q2's question")
	if !tokenID(questionIDOf(q2), 1) || !strings.Contains(q2, "question q2") || questionIDOf(q2) == questionIDOf(q1) {
		t.Fatalf("q2's question: %s (q1's: %s)", q2, q1)
	}
	if code := a.answer(0, questionIDOf(q2), "for q2"); code != http.StatusAccepted {
		t.Errorf("the answer's POST: %d, want 202", code)
	}
	if res := within(t, s2, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
	quiet(t, s1, time.Second, "q1's call ended with an answer that was not for it")
}

// TestSharedSessionsAnswerReachesAsker: an answer sent to the replica
// that asked the question reaches it; a second answer with its id is
// dropped, and the question the other replica asks next gets its own.
func TestSharedSessionsAnswerReachesAsker(t *testing.T) {
	a := newAnswerRig(t)
	s2 := a.call(1, 11, "q2")
	qid := questionIDOf(within(t, s2, 10*time.Second, "q2's question"))
	if code := a.answer(1, qid, "for q2"); code != http.StatusAccepted {
		t.Errorf("the answer's POST: %d, want 202", code)
	}
	if res := within(t, s2, 10*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
	a.answer(1, qid, "again")
	s1 := a.call(0, 12, "q1")
	qid = questionIDOf(within(t, s1, 10*time.Second, "q1's question"))
	a.answer(0, qid, "for q1")
	if res := within(t, s1, 10*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:for q1]") {
		t.Fatalf("q1's result: %s", res)
	}
}

// TestSharedSessionsAnswerFilter: of a POST's messages, only answers to
// questions of this replica's copy of the session that wait (put back to
// the copy's ids) and those to be handed to another replica's questions
// are taken (and requests, notifications, and what is not JSON-RPC, such
// as an answer without an id, which go-sdk judges, are kept), read and
// written again as go-sdk reads them.
func TestSharedSessionsAnswerFilter(t *testing.T) {
	mine, theirs := strings.Repeat("A", 26), strings.Repeat("B", 26)
	s := &sharedSessions{replicaToken: "me", ttl: time.Hour, park: time.Minute,
		local: map[string]*heldSession{"S": {token: mine}}, waiting: map[string]map[string]*waitingAsk{}}
	now := time.Now()
	for _, n := range []int64{1, 2} {
		s.wait(t.Context(), "S", askID(mine, n), now.Add(time.Minute))
	}
	rec := &sessionRecord{Asks: []sharedAsk{{ID: askID(mine, 1), Replica: "me", Until: now.Add(time.Minute)}, {ID: askID(theirs, 2), Replica: "other", Until: now.Add(time.Minute)}}}
	id := func(tok string, n int64) string { return `"` + askID(tok, n) + `"` }
	for _, c := range []struct{ body, kept, answered string }{
		{`{"jsonrpc":"2.0","id":` + id(mine, 1) + `,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, askID(mine, 1)},
		{` {"jsonrpc":"2.0","id": ` + id(mine, 2) + `,"error":{"code":1,"message":"no"}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":1,"message":"no"}}`, askID(mine, 2)},
		{`{"jsonrpc":"2.0","id":` + id(mine, 1) + `,"result":{}} {}`, `{"jsonrpc":"2.0","id":1,"result":{}}`, askID(mine, 1)},
		{`{"jsonrpc":"2.0","id":` + id(mine, 3) + `,"Method":"x","result":{}}`, "", ""},
		{`{"jsonrpc":"2.0","id":` + id(theirs, 2) + `,"result":{}}`, "", ""},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, "", ""},
		{`{"jsonrpc":"2.0","id":"1","result":{}}`, "", ""},
		{`{"jsonrpc":"2.0","id":null,"result":{}}`, `{"jsonrpc":"2.0","id":null,"result":{}}`, ""},
		{`{"jsonrpc":"2.0","result":{}}`, `{"jsonrpc":"2.0","result":{}}`, ""},
		{`[{"jsonrpc":"2.0","id":` + id(theirs, 2) + `,"result":{}},{"jsonrpc":"2.0","id":` + id(mine, 1) + `,"result":{}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
			`[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/initialized"}]`, askID(mine, 1)},
		{`[{"jsonrpc":"2.0","id":` + id(mine, 9) + `,"result":{}}]`, "", ""},
		{`{"jsonrpc":"2.0","id":4,"method":"ping"}`, `{"jsonrpc":"2.0","id":4,"method":"ping"}`, ""},
		{`not json`, `not json`, ""},
		{`[1,`, `[1,`, ""},
	} {
		sc := s.filterAnswers("S", rec, []byte(c.body))
		if string(sc.kept) != c.kept || strings.Join(sc.answered, ",") != c.answered {
			t.Errorf("%s: kept %q answered %q, want %q %q", c.body, sc.kept, sc.answered, c.kept, c.answered)
		}
	}
	if sc := s.filterAnswers("T", rec, []byte(`{"jsonrpc":"2.0","id":`+id(mine, 1)+`,"result":{}}`)); sc.kept != nil || len(sc.answered) != 0 || !sc.dropped {
		t.Errorf("an answer naming session S's copy, in session T: %+v", sc)
	}
	if got := s.addAsk(rec.Asks, askID(mine, 3), now.Add(time.Minute), now); len(got) != 3 || got[2].ID != askID(mine, 3) || got[2].Replica != "me" {
		t.Errorf("addAsk: %+v", got)
	}
	old := []sharedAsk{{ID: askID(theirs, 9), Replica: "other", Until: now.Add(-time.Hour)}}
	if got := s.addAsk(old, askID(mine, 1), now.Add(time.Minute), now); len(got) != 1 || got[0].ID != askID(mine, 1) {
		t.Errorf("addAsk keeps a question that can no longer be waiting: %+v", got)
	}
}

// TestSharedSessionsAnswerReadAsServerReads: an answer written so that
// encoding/json and go-sdk's reader disagree on it (a "Method" key,
// which go-sdk's case-sensitive reader does not see; data after the
// message, which go-sdk ignores) is screened as go-sdk reads it: an
// answer under the number replica 0's copy gave its question (1, which
// the client never saw) does not reach that question.
func TestSharedSessionsAnswerReadAsServerReads(t *testing.T) {
	a := newAnswerRig(t)
	s1 := a.call(0, 10, "q1")
	within(t, s1, 10*time.Second, "q1's question")
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"Method":"x","result":{"action":"accept","content":{"answer":"forged"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"answer":"forged"}}} {}`,
		`[{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"answer":"forged"}}}] x`,
	} {
		resp := a.post(0, body)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case l := <-s1:
			t.Fatalf("q1's call ended with an answer that was not for it (%s): %s", body, l)
		case <-time.After(time.Second):
		}
	}
}

// TestSharedSessionsAnswerOneReplica: one replica with a store (the
// common deployment) gives a go-sdk client's answers to every kind of
// question of a server, asked one after another in one call: roots/list,
// sampling/createMessage and elicitation/create.
func TestSharedSessionsAnswerOneReplica(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	mcp.AddTool(srv, &mcp.Tool{Name: "all"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		var got []string
		for range 2 {
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, nil, err
			}
			msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				return nil, nil, err
			}
			el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "q", RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, nil, err
			}
			got = append(got, fmt.Sprintf("%s %s %s", roots.Roots[0].URI, msg.Model, el.Action))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(got, "; ")}}}, nil, nil
	})
	up := testserver.StartStreamable(t, srv)
	rs := startReplicas(t, 1, &MemorySessionStore{}, up.URL)
	c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///r"})
	cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: rs[0].ts.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"alice"}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var tools []string
	for tl, err := range cs.Tools(testCtx(t, 10*time.Second), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tl.Name)
	}
	if len(tools) != 1 {
		t.Fatalf("tools: %v", tools)
	}
	res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: tools[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := texts(res), "file:///r m accept; file:///r m accept"; got != want {
		t.Fatalf("the call's result: %q, want %q", got, want)
	}
}

// TestSharedSessionsAnswerAfterClose: once a replica closed while its
// question of a session waits, the question another replica then asks in
// that session (the first of its copy too) gets its answer.
func TestSharedSessionsAnswerAfterClose(t *testing.T) {
	a := newAnswerRig(t)
	s1 := a.call(0, 10, "q1")
	within(t, s1, 10*time.Second, "q1's question")
	a.rs[0].kill()
	s2 := a.call(1, 11, "q2")
	a.answer(1, questionIDOf(within(t, s2, 10*time.Second, "q2's question")), "for q2")
	if res := within(t, s2, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
}

// killableStore is a session store a replica stops reaching at once
// (kill), as a replica that dies does: it forgets nothing it recorded.
type killableStore struct {
	SessionStore
	dead atomic.Bool
}

var errKilled = errors.New("the replica is dead")

func (k *killableStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	if k.dead.Load() {
		return nil, errKilled
	}
	return k.SessionStore.LoadSession(ctx, id)
}

func (k *killableStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	if k.dead.Load() {
		return errKilled
	}
	return k.SessionStore.SaveSession(ctx, id, rec, ttl)
}

func (k *killableStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	if k.dead.Load() {
		return false, errKilled
	}
	return k.SessionStore.ReplaceSession(ctx, id, old, rec, ttl)
}

func (k *killableStore) DeleteSession(ctx context.Context, id string) error {
	if k.dead.Load() {
		return errKilled
	}
	return k.SessionStore.DeleteSession(ctx, id)
}

// TestSharedSessionsAsksDeadReplica: a replica that dies (drops off
// without Close: it no longer reaches the store) while its question of a
// session waits leaves that question in the session's record, where it
// holds back no other answer: the question another replica asks in that
// session right after (the first of its copy too) gets its answer. Once
// the dead replica's question can no longer be waiting (ParkTimeout and
// askMargin after it was asked), the next question recorded prunes it
// from the record.
func TestSharedSessionsAsksDeadReplica(t *testing.T) {
	store := &MemorySessionStore{}
	dying := &killableStore{SessionStore: store}
	const park = time.Second
	a := newAnswerRigWith(t, []SessionStore{dying, store}, Options{ParkTimeout: park})
	s1 := a.call(0, 10, "q1")
	within(t, s1, 10*time.Second, "q1's question")
	dying.dead.Store(true)
	a.rs[0].down.Store(true)
	a.rs[0].ts.CloseClientConnections()
	s2 := a.call(1, 11, "q2")
	q := within(t, s2, 10*time.Second, "q2's question")
	if !tokenID(questionIDOf(q), 1) {
		t.Fatalf("q2's question: %s", q)
	}
	a.answer(1, questionIDOf(q), "for q2")
	if res := within(t, s2, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
	time.Sleep(park + askMargin + 200*time.Millisecond)
	s3 := a.call(1, 12, "q1")
	a.answer(1, questionIDOf(within(t, s3, 10*time.Second, "q1's question")), "for q1")
	if res := within(t, s3, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:for q1]") {
		t.Fatalf("q1's result: %s", res)
	}
	b, err := store.LoadSession(testCtx(t, time.Second), a.id)
	if err != nil || b == nil {
		t.Fatalf("the session's record: %v %s", err, b)
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.Asks) != 0 {
		t.Errorf("the record keeps questions that can no longer be waiting: %+v", rec.Asks)
	}
}
