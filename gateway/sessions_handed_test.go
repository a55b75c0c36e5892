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
	q := within(t, s2, 10*time.Second, "q2's question")
	qid := questionIDOf(q)
	if !tokenID(qid, 1) {
		t.Fatalf("q2's question: %s", q)
	}
	if code := a.answer(0, qid, "for q2"); code != http.StatusAccepted {
		t.Errorf("the answer's POST to the other replica: %d, want 202", code)
	}
	if res := within(t, s2, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
	a.answer(0, qid, "again")
	a.answer(1, qid, "again")
	s1 := a.call(0, 12, "q1")
	q = within(t, s1, 10*time.Second, "q1's question")
	if !tokenID(questionIDOf(q), 1) {
		t.Fatalf("q1's question: %s", q)
	}
	a.answer(1, questionIDOf(q), "for q1")
	if res := within(t, s1, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:for q1]") {
		t.Fatalf("q1's result (the answers sent again before it was asked must not reach it): %s", res)
	}
}

// TestSharedSessionsAnswerHandedOnlyToItsQuestion: an answer is handed
// only to the question its id names, with the asking copy's own id, while
// the record has that question: not to another question of that copy,
// not twice, not once the question can no longer be waiting.
func TestSharedSessionsAnswerHandedOnlyToItsQuestion(t *testing.T) {
	s := &sharedSessions{replicaToken: "me", ttl: time.Hour, park: time.Minute}
	theirs := strings.Repeat("B", 26)
	now := time.Now().UTC()
	answer := func(n int64) []byte { return []byte(`{"jsonrpc":"2.0","id":"` + askID(theirs, n) + `","result":{}}`) }
	rec := &sessionRecord{Asks: []sharedAsk{{ID: askID(theirs, 2), Replica: "other", Until: now.Add(time.Minute)}}}
	if sc := s.filterAnswers("S", rec, answer(1)); len(sc.handed) != 0 || !sc.dropped {
		t.Fatalf("an answer to question 1 was handed to question 2: %+v", sc)
	}
	sc := s.filterAnswers("S", rec, answer(2))
	if sc.kept != nil || len(sc.handed) != 1 || sc.handed[0].Ask.Replica != "other" || string(sc.handed[0].Msg) != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Fatalf("screened: %+v", sc)
	}
	if lost := s.hand(rec, sc.handed); lost != 0 || len(rec.Handed) != 1 || len(rec.Asks) != 0 {
		t.Fatalf("hand: lost %d, %+v", lost, rec)
	}
	if lost := s.hand(rec, sc.handed); lost != 1 || len(rec.Handed) != 1 {
		t.Fatalf("an answer was handed twice: lost %d, %+v", lost, rec)
	}
	// A question that can no longer be waiting takes no answer.
	rec = &sessionRecord{Asks: []sharedAsk{{ID: askID(theirs, 2), Replica: "other", Until: now.Add(-time.Hour)}}}
	if sc := s.filterAnswers("S", rec, answer(2)); len(sc.handed) != 0 || !sc.dropped {
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
