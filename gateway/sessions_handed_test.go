package gateway

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSharedSessionsAnswerHanded: an answer the balancer sends to a
// replica other than the one that asked reaches the question, once:
// both ways between two replicas, and a second answer with the same id,
// to either replica, is dropped.
func TestSharedSessionsAnswerHanded(t *testing.T) {
	a := newAnswerRig(t)
	s2 := a.call(1, 11, "q2")
	if q := within(t, s2, 10*time.Second, "q2's question"); !strings.Contains(q, `"id":1`) {
		t.Fatalf("q2's question: %s", q)
	}
	if code := a.answer(0, "for q2"); code != http.StatusAccepted {
		t.Errorf("the answer's POST to the other replica: %d, want 202", code)
	}
	if res := within(t, s2, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
	a.answer(0, "again")
	a.answer(1, "again")
	s1 := a.call(0, 12, "q1")
	if q := within(t, s1, 10*time.Second, "q1's question"); !strings.Contains(q, `"id":1`) {
		t.Fatalf("q1's question: %s", q)
	}
	a.answer(1, "for q1")
	if res := within(t, s1, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:for q1]") {
		t.Fatalf("q1's result (the answers sent again before it was asked must not reach it): %s", res)
	}
}

// TestSharedSessionsAnswerHandedOnlyToItsQuestion: an answer is handed
// only to the question it answered, the one the record had when the
// answer came (same replica, same moment): not to a later question of
// that replica with the same id, and not twice.
func TestSharedSessionsAnswerHandedOnlyToItsQuestion(t *testing.T) {
	s := &sharedSessions{replicaToken: "me", ttl: time.Hour, park: time.Minute}
	t0 := time.Now().UTC()
	t1 := t0.Add(time.Second)
	rec := &sessionRecord{Asks: []sharedAsk{{ID: "1", Replica: "other", At: t1}}}
	sc := s.filterAnswers(rec, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	if sc.kept != nil || len(sc.handed) != 1 || sc.handed[0].Ask.Replica != "other" || !sc.handed[0].Ask.At.Equal(t1) {
		t.Fatalf("screened: %+v", sc)
	}
	stale := handedAnswer{Ask: sharedAsk{ID: "1", Replica: "other", At: t0}, Msg: sc.handed[0].Msg}
	if lost := s.hand(rec, []handedAnswer{stale}); lost != 1 || len(rec.Handed) != 0 || len(rec.Asks) != 1 {
		t.Fatalf("an answer to an earlier question was handed to a later one: lost %d, %+v", lost, rec)
	}
	if lost := s.hand(rec, sc.handed); lost != 0 || len(rec.Handed) != 1 || len(rec.Asks) != 0 {
		t.Fatalf("hand: lost %d, %+v", lost, rec)
	}
	if lost := s.hand(rec, sc.handed); lost != 1 || len(rec.Handed) != 1 {
		t.Fatalf("an answer was handed twice: lost %d, %+v", lost, rec)
	}
	// Two replicas' questions with one id: not known whose it is.
	rec = &sessionRecord{Asks: []sharedAsk{{ID: "1", Replica: "other", At: t1}, {ID: "1", Replica: "third", At: t1}}}
	if sc := s.filterAnswers(rec, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); len(sc.handed) != 0 || !sc.dropped {
		t.Fatalf("an answer two replicas' questions may be for was handed: %+v", sc)
	}
	// A question that can no longer be waiting takes no answer.
	rec = &sessionRecord{Asks: []sharedAsk{{ID: "1", Replica: "other", At: t0.Add(-time.Hour), Until: t0.Add(-time.Hour + time.Minute)}}}
	if sc := s.filterAnswers(rec, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)); len(sc.handed) != 0 || !sc.dropped {
		t.Fatalf("an answer was handed to a question that can no longer be waiting: %+v", sc)
	}
}

// TestSharedSessionsDeleteEndsAsks: a session deleted (DELETE) on one
// replica ends the questions waiting in it on another replica, well
// before their timeout.
func TestSharedSessionsDeleteEndsAsks(t *testing.T) {
	a := newAnswerRig(t)
	s2 := a.call(1, 11, "q2")
	within(t, s2, 10*time.Second, "q2's question")
	req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, a.rs[0].ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", a.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-s2:
			if !ok {
				return // the call's stream ended with its session
			}
			if strings.Contains(l, " got ") {
				t.Fatalf("q2's call got an answer: %s", l)
			}
		case <-deadline:
			t.Fatal("q2's question still waits 5 s after its session was deleted on another replica")
		}
	}
}
