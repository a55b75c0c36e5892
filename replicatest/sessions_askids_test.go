package replicatest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askingServer is a server whose tools each ask the client a question,
// waiting for its answer as long as waits says, and say which answer
// they got.
func askingServer(waits map[string]time.Duration) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	for tool, wait := range waits {
		mcp.AddTool(srv, &mcp.Tool{Name: tool}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "question of " + tool, RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s got %s %v", tool, res.Action, res.Content)}}}, nil, nil
		})
	}
	return srv
}

// newAnswerRigOn starts replicas of a gateway in front of srv, replica i
// with stores[i] (all in front of the same records) and opts, and makes
// a session on replica 0.
func newAnswerRigOn(t *testing.T, srv *mcp.Server, stores []gateway.SessionStore, opts gateway.Options) *answerRig {
	up := testserver.StartStreamable(t, srv)
	a := &answerRig{t: t}
	for _, store := range stores {
		o := opts
		o.Logger, o.Sessions = quietLimitLogger(), &gateway.SessionOptions{Store: store}
		g, err := gateway.New([]gateway.Server{{Name: "q", Target: up.URL}}, &o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		if err := g.Start(limitCtx(t, 30*time.Second)); err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(g)
		t.Cleanup(ts.Close)
		a.urls = append(a.urls, ts.URL+"/mcp")
		a.gs = append(a.gs, g)
	}
	resp := a.post(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	a.id = resp.Header.Get("Mcp-Session-Id")
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	a.post(0, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return a
}

// TestSharedSessionsAskIDsLateAnswerStores: with sessions in Redis and
// PostgreSQL, replica 0 asks a question and withdraws it; replica 1 then
// asks one, the first of its copy too. The client's late answer to the
// withdrawn question, to either replica, reaches neither; replica 1's
// question takes its own answer, handed from replica 0.
func TestSharedSessionsAskIDsLateAnswerStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			srv := askingServer(map[string]time.Duration{"brief": 300 * time.Millisecond, "book": 10 * time.Second})
			a := newAnswerRigOn(t, srv, []gateway.SessionStore{store, store}, gateway.Options{})
			sa := a.call(0, 10, "brief")
			qa := questionID(a.next(sa, "brief's question"))
			for l := range sa {
				var m struct {
					Method string `json:"method"`
					Params struct {
						RequestID json.RawMessage `json:"requestId"`
					} `json:"params"`
				}
				if json.Unmarshal([]byte(l), &m) == nil && m.Method == "notifications/cancelled" && string(m.Params.RequestID) != qa {
					t.Fatalf("the withdrawal names %s, the question was %s", m.Params.RequestID, qa)
				}
				if strings.Contains(l, " got ") {
					t.Fatalf("brief's call got an answer: %s", l)
				}
			}
			sb := a.call(1, 11, "book")
			qb := questionID(a.next(sb, "book's question"))
			t.Logf("replica 0's withdrawn question: %s; replica 1's: %s", qa, qb)
			for _, replica := range []int{1, 0} {
				if code := a.answer(replica, qa, "late"); code != http.StatusAccepted {
					t.Errorf("the late answer's POST to replica %d: %d, want 202", replica, code)
				}
			}
			select {
			case l := <-sb:
				t.Fatalf("book's question took the late answer to replica 0's withdrawn question: %s", l)
			case <-time.After(1500 * time.Millisecond):
			}
			a.answer(0, qb, "book")
			if l := a.next(sb, "book's result"); !strings.Contains(l, "book got accept map[for:book]") {
				t.Fatalf("book's result: %s", l)
			}
		})
	}
}

// TestSharedSessionsAsksLeaveRecordStores: with sessions in Redis and
// PostgreSQL, the questions of a replica that died while they waited,
// and an answer another replica handed to one of them, leave the
// session's record at its next write once they can no longer be waiting
// (here its renewal by a request to the other replica).
func TestSharedSessionsAsksLeaveRecordStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			dying := &killableStore{SessionStore: store}
			const park, ttl = 3 * time.Second, 12 * time.Second
			a := newAnswerRig(t, []gateway.SessionStore{store, dying}, gateway.Options{ParkTimeout: park, SessionTimeout: ttl})
			events := make(chan string, 16)
			for i, tool := range []string{"book", "delete_repo"} {
				go func() {
					for l := range a.call(1, 10+i, tool) {
						events <- l
					}
				}()
			}
			var qids []string
			for len(qids) < 2 {
				if l := a.next(events, "the questions"); strings.Contains(l, `"elicitation/create"`) {
					qids = append(qids, questionID(l))
				}
			}
			record := func() (asks, handed int) {
				b, err := store.LoadSession(limitCtx(t, 5*time.Second), a.id)
				var rec struct {
					Asks   []json.RawMessage `json:"asks"`
					Handed []json.RawMessage `json:"handed"`
				}
				if err != nil || json.Unmarshal(b, &rec) != nil {
					t.Fatalf("the session's record: %v %s", err, b)
				}
				return len(rec.Asks), len(rec.Handed)
			}
			dying.dead.Store(true)
			a.answer(0, qids[0], "handed")
			if asks, handed := record(); asks != 1 || handed != 1 {
				t.Fatalf("the record with a question waiting and an answer handed: %d asks, %d handed", asks, handed)
			}
			time.Sleep(park + 2*time.Second + 500*time.Millisecond)
			r := a.post(0, `{"jsonrpc":"2.0","id":30,"method":"tools/list"}`)
			_, _ = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if asks, handed := record(); asks != 0 || handed != 0 {
				t.Errorf("the record renewed after the questions ended: %d asks, %d handed", asks, handed)
			}
		})
	}
}
