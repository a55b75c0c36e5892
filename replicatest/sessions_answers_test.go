package replicatest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
)

// answerRig is a session shared, through a store, by two replicas of a
// gateway in front of a server whose tools book and delete_repo each ask
// the client a question and say which answer they got; the session is
// made on replica 0.
type answerRig struct {
	t    *testing.T
	urls []string
	gs   []*gateway.Gateway
	id   string
}

// newAnswerRig starts the replicas, replica i with stores[i] (all in
// front of the same records) and opts.
func newAnswerRig(t *testing.T, stores []gateway.SessionStore, opts gateway.Options) *answerRig {
	return newAnswerRigOn(t, askingServer(map[string]time.Duration{"book": 4 * time.Second, "delete_repo": 4 * time.Second}), stores, opts)
}

// close closes replica's gateway.
func (a *answerRig) close(replica int) { _ = a.gs[replica].Close() }

func (a *answerRig) post(replica int, body string) *http.Response {
	return a.send(replica, http.MethodPost, body)
}

func (a *answerRig) send(replica int, method, body string) *http.Response {
	t := a.t
	req, _ := http.NewRequestWithContext(limitCtx(t, 30*time.Second), method, a.urls[replica], strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if a.id != "" {
		req.Header.Set("Mcp-Session-Id", a.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// call calls tool on replica and returns the data of its stream's events.
func (a *answerRig) call(replica, reqID int, tool string) <-chan string {
	resp := a.post(replica, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, reqID, tool))
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

func (a *answerRig) next(ch <-chan string, what string) string {
	select {
	case l := <-ch:
		return l
	case <-time.After(10 * time.Second):
		a.t.Fatalf("%s: nothing", what)
	}
	return ""
}

// answer posts the client's answer to question qid to replica.
func (a *answerRig) answer(replica int, qid, content string) int {
	r := a.post(replica, `{"jsonrpc":"2.0","id":`+qid+`,"result":{"action":"accept","content":{"for":"`+content+`"}}}`)
	_, _ = io.Copy(io.Discard, r.Body)
	r.Body.Close()
	return r.StatusCode
}

// questionID returns the id of the question in an event's data.
func questionID(q string) string {
	if i := strings.Index(q, `"id":`); i >= 0 {
		return q[i+5 : i+5+strings.IndexAny(q[i+5:], ",}")]
	}
	return ""
}

// TestSharedSessionsAnswerNotMixedStores: with sessions in Redis and
// PostgreSQL, two replicas each ask the first question of their copies
// of one session, waiting at once, under ids of their own; the answer to
// replica 1's question, sent to replica 0, reaches replica 1's question
// and not replica 0's, and the answer to replica 0's, sent to replica 1,
// reaches replica 0's.
func TestSharedSessionsAnswerNotMixedStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			a := newAnswerRig(t, []gateway.SessionStore{store, store}, gateway.Options{})
			s1 := a.call(0, 10, "delete_repo")
			q1 := questionID(a.next(s1, "delete_repo's question"))
			s2 := a.call(1, 11, "book")
			q2 := questionID(a.next(s2, "book's question"))
			t.Logf("replica 0 asks %s, replica 1 asks %s", q1, q2)
			if q1 == q2 || !strings.HasSuffix(q1, `.1"`) || !strings.HasSuffix(q2, `.1"`) {
				t.Fatalf("the questions' ids: %s and %s, want two \"TOKEN.1\"", q1, q2)
			}
			// The user accepts book's question; the balancer sends the
			// answer to replica 0.
			if code := a.answer(0, q2, "book"); code != http.StatusAccepted {
				t.Errorf("the answer's POST: %d, want 202", code)
			}
			if l := a.next(s2, "book's result"); !strings.Contains(l, "book got accept map[for:book]") {
				t.Fatalf("book's result: %s", l)
			}
			select {
			case l := <-s1:
				t.Fatalf("delete_repo's call ended with an answer that was not for it: %s", l)
			default:
			}
			a.answer(1, q1, "delete_repo")
			if l := a.next(s1, "delete_repo's result"); !strings.Contains(l, "delete_repo got accept map[for:delete_repo]") {
				t.Fatalf("delete_repo's result: %s", l)
			}
		})
	}
}

// TestSharedSessionsAnswerHandedStores: with sessions in Redis and
// PostgreSQL, an answer the balancer sends to the replica that did not
// ask reaches the question, once, both ways between two replicas; a
// second answer with the same id is dropped; and a DELETE of the session
// on one replica ends the question waiting on the other.
func TestSharedSessionsAnswerHandedStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			a := newAnswerRig(t, []gateway.SessionStore{store, store}, gateway.Options{})
			s2 := a.call(1, 11, "book")
			qid := questionID(a.next(s2, "book's question"))
			start := time.Now()
			if code := a.answer(0, qid, "book"); code != http.StatusAccepted {
				t.Errorf("the answer's POST to the other replica: %d, want 202", code)
			}
			if l := a.next(s2, "book's result"); !strings.Contains(l, "book got accept map[for:book]") {
				t.Fatalf("book's result: %s", l)
			}
			t.Logf("an answer handed to the replica that asked: the call's result %s after the answer's POST", time.Since(start).Round(time.Millisecond))
			a.answer(0, qid, "again")
			a.answer(1, qid, "again")
			s1 := a.call(0, 12, "delete_repo")
			qid = questionID(a.next(s1, "delete_repo's question"))
			a.answer(1, qid, "delete_repo")
			if l := a.next(s1, "delete_repo's result"); !strings.Contains(l, "delete_repo got accept map[for:delete_repo]") {
				t.Fatalf("delete_repo's result (the answers sent again before it was asked must not reach it): %s", l)
			}
			s3 := a.call(1, 13, "book")
			a.next(s3, "book's second question")
			resp := a.send(0, http.MethodDelete, "")
			resp.Body.Close()
			deadline := time.After(3 * time.Second)
			for {
				select {
				case l, ok := <-s3:
					if !ok {
						return // the call's stream ended with its session
					}
					if strings.Contains(l, " got ") {
						t.Fatalf("book's call got an answer: %s", l)
					}
					continue
				case <-deadline:
					t.Fatal("book's question still waits 3 s after its session was deleted on another replica")
				}
			}
		})
	}
}

// killableStore is a session store a replica stops reaching at once
// (kill), as a replica that dies does: it forgets nothing it recorded.
type killableStore struct {
	gateway.SessionStore
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

// TestSharedSessionsAsksDeadReplicaStores: with sessions in Redis and
// PostgreSQL, a replica that dies (it no longer reaches the store, and
// closes nothing) while its question of a session waits holds back no
// answer to the question another replica asks next (the first of its
// copy too), at once or once the dead replica's question could no longer
// wait (ParkTimeout, plus a margin of 2 s).
func TestSharedSessionsAsksDeadReplicaStores(t *testing.T) {
	stores := sessionStores(t)
	for _, name := range []string{"redis", "postgres"} {
		t.Run(name, func(t *testing.T) {
			store, _ := stores[name]()
			dying := &killableStore{SessionStore: store}
			const park = time.Second
			a := newAnswerRig(t, []gateway.SessionStore{dying, store}, gateway.Options{ParkTimeout: park})
			s1 := a.call(0, 10, "delete_repo")
			if q := a.next(s1, "delete_repo's question"); !strings.HasSuffix(questionID(q), `.1"`) {
				t.Fatalf("delete_repo's question: %s", q)
			}
			dying.dead.Store(true)
			for i, wait := range []time.Duration{0, park + 2*time.Second + 200*time.Millisecond} {
				time.Sleep(wait)
				s2 := a.call(1, 11+i, "book")
				q := a.next(s2, "book's question")
				if !strings.HasSuffix(questionID(q), fmt.Sprintf(`.%d"`, i+1)) {
					t.Fatalf("book's question: %s", q)
				}
				a.answer(1, questionID(q), "book")
				if l := a.next(s2, "book's result"); !strings.Contains(l, "book got accept map[for:book]") {
					t.Fatalf("book's result: %s", l)
				}
			}
		})
	}
}
