package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// The tests here play the adversaries of answers handed from one replica
// to another (sessions_handed.go): another user or another session of the
// same user, a hostile client (forged ids, floods, huge answers, answers
// raced to two replicas) and a failing store.

// postAs posts body to replica as principal, in session sid ("" for
// none).
func (a *answerRig) postAs(replica int, principal, sid, body string) *http.Response {
	t := a.t
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, a.rs[replica].ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+principal)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", v1125)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// drain reads and closes resp, and returns its status.
func drain(resp *http.Response) int {
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// openAs makes a session of principal on replica and returns its id.
func (a *answerRig) openAs(replica int, principal string) string {
	resp := a.postAs(replica, principal, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v1125+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	drain(resp)
	if sid == "" {
		a.t.Fatalf("no session for %s", principal)
	}
	drain(a.postAs(replica, principal, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

// callAs calls tool on replica as principal in session sid and returns
// the data of its stream's events.
func (a *answerRig) callAs(replica int, principal, sid string, reqID int, tool string) <-chan string {
	return streamData(a.postAs(replica, principal, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, reqID, tool)))
}

// answerBody is the client's answer to question qid (JSON) saying what.
func answerBody(qid, what string) string {
	return `{"jsonrpc":"2.0","id":` + qid + `,"result":{"action":"accept","content":{"answer":"` + what + `"}}}`
}

// quiet fails t when ch has something within d.
func quiet(t *testing.T, ch <-chan string, d time.Duration, what string) {
	t.Helper()
	select {
	case l := <-ch:
		t.Fatalf("%s: %s", what, l)
	case <-time.After(d):
	}
}

// TestSharedSessionsHandedNotAcrossSessions: alice's question waits on
// replica 1 in her session X. Bob's answer with its id in X is refused;
// answers in alice's other session and in bob's session, to replica 0,
// reach their own questions and not X's; alice's own answer in X, to
// replica 0, does.
func TestSharedSessionsHandedNotAcrossSessions(t *testing.T) {
	a := newAnswerRig(t)
	other := a.openAs(0, "alice")
	bobs := a.openAs(0, "bob")
	// Each of the other sessions has a question 1 waiting on replica 1
	// too, so that an answer there is handed (not dropped for having no
	// question).
	so := a.callAs(1, "alice", other, 20, "q1")
	qo := questionIDOf(within(t, so, 10*time.Second, "the question in alice's other session"))
	sb := a.callAs(1, "bob", bobs, 21, "q1")
	qb := questionIDOf(within(t, sb, 10*time.Second, "the question in bob's session"))
	sx := a.call(1, 11, "q2")
	qx := questionIDOf(within(t, sx, 10*time.Second, "the question in X"))

	if code := drain(a.postAs(0, "bob", a.id, answerBody(qx, "bob in X"))); code != http.StatusForbidden {
		t.Errorf("bob's answer in alice's session: %d, want 403", code)
	}
	drain(a.postAs(0, "alice", other, answerBody(qo, "other session")))
	drain(a.postAs(0, "bob", bobs, answerBody(qb, "bob's session")))
	if res := within(t, so, 5*time.Second, "the result in alice's other session"); !strings.Contains(res, "map[answer:other session]") {
		t.Fatalf("the result in alice's other session: %s", res)
	}
	if res := within(t, sb, 5*time.Second, "the result in bob's session"); !strings.Contains(res, "map[answer:bob's session]") {
		t.Fatalf("the result in bob's session: %s", res)
	}
	quiet(t, sx, time.Second, "X's question got an answer sent in another session")
	drain(a.postAs(0, "alice", a.id, answerBody(qx, "for X")))
	if res := within(t, sx, 5*time.Second, "X's result"); !strings.Contains(res, "q2 got accept map[answer:for X]") {
		t.Fatalf("X's result: %s", res)
	}
}

// TestSharedSessionsHandedIDForms: an answer is handed only under the id
// go-sdk reads in it: the question's string id with its first letter
// escaped (\u0041 for A) is the same string and answers it; the number
// the asking copy gave it, the id in an array or object, a number of
// another form, the id with a space and no id at all do not.
func TestSharedSessionsHandedIDForms(t *testing.T) {
	a := newAnswerRig(t)
	s := a.call(1, 11, "q2")
	qid := questionIDOf(within(t, s, 10*time.Second, "q2's question"))
	for _, id := range []string{`1`, `1.0`, `"1"`, `[` + qid + `]`, `{"id":` + qid + `}`, `2`, `null`, `" ` + qid[1:], strings.Replace(qid, ".", ". ", 1)} {
		drain(a.post(0, answerBody(id, "as "+id)))
	}
	// Batches (go-sdk reads batches of a 2025-11-25 session as an error).
	drain(a.post(0, `[`+answerBody(qid, "batch")+`]`))
	quiet(t, s, 1500*time.Millisecond, "q2's question got an answer under another id")
	escaped := fmt.Sprintf(`"\u%04x%s`, qid[1], qid[2:])
	drain(a.post(0, answerBody(escaped, "escaped")))
	if res := within(t, s, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:escaped]") {
		t.Fatalf("q2's result: %s", res)
	}
}

// TestSharedSessionsHandedRace: the client's answers to question 1 sent
// at once, several to each replica, give the question one of them, once;
// none reaches the next question (id 2) of the same replica, which gets
// its own.
func TestSharedSessionsHandedRace(t *testing.T) {
	a := newAnswerRig(t)
	for round := range 3 {
		s := a.call(1, 30+round, "q2")
		q := within(t, s, 10*time.Second, "q2's question")
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal([]byte(q), &m)
		qid := string(m.ID)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() { drain(a.post(i%2, answerBody(qid, fmt.Sprintf("round %d answer %d", round, i)))) })
		}
		wg.Wait()
		res := within(t, s, 5*time.Second, "q2's result")
		if !strings.Contains(res, fmt.Sprintf("map[answer:round %d answer ", round)) {
			t.Fatalf("round %d: q2's result: %s", round, res)
		}
	}
	// Nothing was left in the record for a question to come.
	b, _ := a.rs[0].g.shared.store.LoadSession(testCtx(t, time.Second), a.id)
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil || len(rec.Handed) != 0 {
		t.Fatalf("the record after the answers were taken: %v %s", err, b)
	}
}

// faultStore is a session store whose loads and writes can be made to
// fail or be slow, and that counts its writes.
type faultStore struct {
	SessionStore
	failLoad, failWrite atomic.Bool
	slowLoad            atomic.Int64 // nanoseconds each load waits (or until its ctx ends)
	loads, writes       atomic.Int64
}

var errFault = errors.New("the session store is failing")

func (f *faultStore) LoadSession(ctx context.Context, id string) ([]byte, error) {
	f.loads.Add(1)
	if d := time.Duration(f.slowLoad.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.failLoad.Load() {
		return nil, errFault
	}
	return f.SessionStore.LoadSession(ctx, id)
}

func (f *faultStore) SaveSession(ctx context.Context, id string, rec []byte, ttl time.Duration) error {
	f.writes.Add(1)
	if f.failWrite.Load() {
		return errFault
	}
	return f.SessionStore.SaveSession(ctx, id, rec, ttl)
}

func (f *faultStore) ReplaceSession(ctx context.Context, id string, old, rec []byte, ttl time.Duration) (bool, error) {
	f.writes.Add(1)
	if f.failWrite.Load() {
		return false, errFault
	}
	return f.SessionStore.ReplaceSession(ctx, id, old, rec, ttl)
}

// sessionRecordOf reads the record of session id from store.
func sessionRecordOf(t *testing.T, store SessionStore, id string) (*sessionRecord, int) {
	t.Helper()
	b, err := store.LoadSession(testCtx(t, time.Second), id)
	if err != nil || b == nil {
		t.Fatalf("the session's record: %v %s", err, b)
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return &rec, len(b)
}

// TestSharedSessionsHandedHostileClient: a client's flood of answers with
// ids no question has, in one batch and in many POSTs, writes nothing to
// the store; an answer over 256 KiB to another replica's question is
// dropped, not written into the record; the question then gets the
// client's next answer.
func TestSharedSessionsHandedHostileClient(t *testing.T) {
	mem := &MemorySessionStore{}
	fs := &faultStore{SessionStore: mem}
	a := newAnswerRigWith(t, []SessionStore{fs, fs}, Options{})
	s := a.call(1, 11, "q2")
	qid := questionIDOf(within(t, s, 10*time.Second, "q2's question"))
	time.Sleep(100 * time.Millisecond)
	_, size0 := sessionRecordOf(t, mem, a.id)
	w0 := fs.writes.Load()
	var batch strings.Builder
	batch.WriteString("[")
	for i := range 5000 {
		if i > 0 {
			batch.WriteString(",")
		}
		batch.WriteString(answerBody(fmt.Sprint(1000+i), "flood"))
	}
	batch.WriteString("]")
	drain(a.post(0, batch.String()))
	for i := range 200 {
		drain(a.post(i%2, answerBody(fmt.Sprint(100000+i), "flood")))
	}
	if w := fs.writes.Load() - w0; w != 0 {
		t.Errorf("answers with unknown ids made %d writes of the session's record", w)
	}
	huge := answerBody(qid, strings.Repeat("x", 300<<10))
	if code := drain(a.post(0, huge)); code != http.StatusAccepted {
		t.Errorf("the huge answer's POST: %d", code)
	}
	rec, size := sessionRecordOf(t, mem, a.id)
	if size > size0+1024 || len(rec.Handed) != 0 || len(rec.Asks) != 1 {
		t.Errorf("the record after the flood and the huge answer: %d bytes (was %d), %d handed, %d asks", size, size0, len(rec.Handed), len(rec.Asks))
	}
	quiet(t, s, time.Second, "q2's question got the huge answer")
	drain(a.post(0, answerBody(qid, "fine")))
	if res := within(t, s, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:fine]") {
		t.Fatalf("q2's result: %s", res)
	}
}

// pollers counts the goroutines polling for handed answers, or taking or
// giving them.
func pollers() int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "gateway.(*Gateway).pollHanded") || strings.Contains(g, "gateway.(*Gateway).takeHanded") {
			n++
		}
	}
	return n
}

// TestSharedSessionsHandedStoreFaults: the replica that asked cannot read
// or write the store while an answer is handed to it: no panic, its
// question ends by ParkTimeout; a slow store does not hold Close back;
// and the goroutine polling for answers ends with Close.
func TestSharedSessionsHandedStoreFaults(t *testing.T) {
	before := pollers()
	mem := &MemorySessionStore{}
	asker := &faultStore{SessionStore: mem}
	const park = 2 * time.Second
	a := newAnswerRigWith(t, []SessionStore{mem, asker}, Options{ParkTimeout: park})
	if n := pollers() - before; n != 2 {
		t.Errorf("%d goroutines poll for answers, want 1 a replica", n)
	}
	s := a.call(1, 11, "q2")
	q := within(t, s, 10*time.Second, "q2's question")
	asker.failLoad.Store(true)
	start := time.Now()
	drain(a.post(0, answerBody(questionIDOf(q), "lost")))
	res := within(t, s, park+5*time.Second, "q2's end")
	if strings.Contains(res, " got ") || time.Since(start) > park+2*time.Second {
		t.Fatalf("q2 after %s: %s", time.Since(start), res)
	}
	asker.failLoad.Store(false)
	// Writes fail: the answer is handed, the asker cannot take it.
	s = a.call(1, 12, "q2")
	q = within(t, s, 10*time.Second, "q2's second question")
	asker.failWrite.Store(true)
	start = time.Now()
	drain(a.post(0, answerBody(questionIDOf(q), "lost too")))
	res = within(t, s, park+5*time.Second, "q2's second end")
	if strings.Contains(res, " got ") || time.Since(start) > park+2*time.Second {
		t.Fatalf("q2 after %s: %s", time.Since(start), res)
	}
	asker.failWrite.Store(false)
	// Slow: each read takes longer than the store's timeout.
	s = a.call(1, 13, "q2")
	q = within(t, s, 10*time.Second, "q2's third question")
	asker.slowLoad.Store(int64(10 * time.Second))
	drain(a.post(0, answerBody(questionIDOf(q), "slow")))
	time.Sleep(500 * time.Millisecond)
	start = time.Now()
	for _, r := range a.rs {
		r.ts.CloseClientConnections()
		_ = r.g.Close()
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close with a slow store took %s", d)
	}
	if n := pollers() - before; n != 0 {
		t.Errorf("%d goroutines poll for answers after Close", n)
	}
}

// questionIDOf returns the id of the question in an event's data.
func questionIDOf(q string) string {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal([]byte(q), &m)
	return string(m.ID)
}

// TestSharedSessionsHandedDeleteOthersGoOn: a DELETE of session X on
// replica 0 ends X's question and call on replica 1, and not those of
// alice's other session there, whose answer is still handed.
func TestSharedSessionsHandedDeleteOthersGoOn(t *testing.T) {
	a := newAnswerRig(t)
	other := a.openAs(0, "alice")
	so := a.callAs(1, "alice", other, 20, "q1")
	qo := questionIDOf(within(t, so, 10*time.Second, "the other session's question"))
	sx := a.call(1, 11, "q2")
	within(t, sx, 10*time.Second, "X's question")
	req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodDelete, a.rs[0].ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", a.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	drain(resp)
	deadline := time.After(5 * time.Second)
wait:
	for {
		select {
		case l, ok := <-sx:
			if !ok {
				break wait
			}
			if strings.Contains(l, " got ") {
				t.Fatalf("X's call got an answer: %s", l)
			}
		case <-deadline:
			t.Fatal("X's call still runs 5 s after its session was deleted on another replica")
		}
	}
	quiet(t, so, 500*time.Millisecond, "the other session's call ended with X")
	drain(a.postAs(0, "alice", other, answerBody(qo, "still here")))
	if res := within(t, so, 5*time.Second, "the other session's result"); !strings.Contains(res, "q1 got accept map[answer:still here]") {
		t.Fatalf("the other session's result: %s", res)
	}
}

// postTo posts body to url as principal in session sid, with the usual
// headers changed by hdr (an empty value removes one).
func postTo(t *testing.T, url, principal, sid, body string, hdr map[string]string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+principal)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	setHeaders(req.Header, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return drain(resp)
}

// TestSharedSessionsHandedRefusedPOST: a POST of an answer that go-sdk
// refuses (a batch in a 2025-11-25 session, a batch with a message it
// cannot read, a wrong Content-Type or Accept, a Last-Event-ID, a
// protocol version it does not speak) is refused as go-sdk refuses it (the
// same status as a gateway without shared sessions gives) by the replica
// that asked and by the other one: its answer is neither handed nor
// given, and the question still takes the client's next answer.
func TestSharedSessionsHandedRefusedPOST(t *testing.T) {
	up := testserver.StartStreamable(t, testserver.New(testserver.Options{Era: testserver.Legacy}))
	_, plain := oneServerGateway(t, up.URL, &Options{})
	plainSID := func() string {
		req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodPost, plain, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v1125+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer alice")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		drain(resp)
		return resp.Header.Get("Mcp-Session-Id")
	}()
	a := newAnswerRig(t)
	s := a.call(1, 11, "q2")
	qid := questionIDOf(within(t, s, 10*time.Second, "q2's question"))
	for _, c := range []struct {
		name, body string
		hdr        map[string]string
	}{
		{"a batch", "[" + answerBody(qid, "refused") + "]", nil},
		{"a batch with a message go-sdk cannot read", "[" + answerBody(qid, "refused") + `,{"jsonrpc":"2.0","id":{}}]`, nil},
		{"Content-Type text/plain", answerBody(qid, "refused"), map[string]string{"Content-Type": "text/plain"}},
		{"Accept without event streams", answerBody(qid, "refused"), map[string]string{"Accept": "application/json"}},
		{"a Last-Event-ID", answerBody(qid, "refused"), map[string]string{"Last-Event-ID": "x_1"}},
		{"an unknown protocol version", answerBody(qid, "refused"), map[string]string{"Mcp-Protocol-Version": "2023-01-01"}},
	} {
		want := postTo(t, plain, "alice", plainSID, c.body, c.hdr)
		if want < 400 {
			t.Fatalf("%s: go-sdk answers %d; this test needs a POST it refuses", c.name, want)
		}
		for _, replica := range []int{0, 1} {
			if got := postTo(t, a.rs[replica].ts.URL+"/mcp", "alice", a.id, c.body, c.hdr); got != want {
				t.Errorf("%s to replica %d: %d, want %d (go-sdk's)", c.name, replica, got, want)
			}
		}
	}
	quiet(t, s, time.Second, "q2's question got an answer from a refused POST")
	drain(a.post(0, answerBody(qid, "taken")))
	if res := within(t, s, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:taken]") {
		t.Fatalf("q2's result after the refused POSTs: %s", res)
	}
}

// TestSharedSessionsHandedWithdrawn: a question this replica withdraws
// (notifications/cancelled) takes out of the record the answer another
// replica handed to it meanwhile, which no question can take.
func TestSharedSessionsHandedWithdrawn(t *testing.T) {
	store := &MemorySessionStore{}
	s, err := newSharedSessions(&SessionOptions{Store: store}, 0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	tok := strings.Repeat("A", 26)
	s.local["S"] = &heldSession{token: tok}
	now := time.Now().UTC()
	mine := sharedAsk{ID: askID(tok, 1), Replica: s.replicaToken, Until: now.Add(time.Minute)}
	theirs := sharedAsk{ID: askID(strings.Repeat("B", 26), 1), Replica: "other", Until: now.Add(time.Minute)}
	msg := json.RawMessage(answerBody("1", "x"))
	rec := &sessionRecord{Principal: "alice", Handed: []handedAnswer{{Ask: mine, Msg: msg}, {Ask: theirs, Msg: msg}}}
	if err := s.save(testCtx(t, time.Second), "S", rec, true); err != nil {
		t.Fatal(err)
	}
	s.noteOutgoing(testCtx(t, time.Second), "S", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`), t.Errorf)
	got, _ := sessionRecordOf(t, store, "S")
	if len(got.Handed) != 1 || got.Handed[0].Ask.Replica != "other" {
		t.Fatalf("the handed answers after this replica's copy withdrew its question 1: %+v", got.Handed)
	}
}

// TestSharedSessionsHandedPollOnce: a replica with three questions
// waiting in one session reads that session's record once an
// answerPoll, as with one, and not at all once they are answered.
func TestSharedSessionsHandedPollOnce(t *testing.T) {
	mem := &MemorySessionStore{}
	asker := &faultStore{SessionStore: mem}
	a := newAnswerRigWith(t, []SessionStore{mem, asker}, Options{})
	rate := func() float64 {
		n0 := asker.loads.Load()
		time.Sleep(2 * time.Second)
		return float64(asker.loads.Load()-n0) / 2
	}
	var calls []<-chan string
	for i, tool := range []string{"q1", "q2", "q1"} {
		calls = append(calls, a.call(1, 40+i, tool))
	}
	// The questions come on any of the calls' streams: wait for the
	// replica to have all three waiting.
	sh := a.rs[1].g.shared
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		sh.mu.Lock()
		n := len(sh.waiting[a.id])
		sh.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d questions wait, want 3", n)
		}
	}
	three := rate()
	t.Logf("three questions waiting in one session: %.1f reads of its record a second", three)
	if want := float64(time.Second / answerPoll); three > want+1 {
		t.Errorf("three questions waiting in one session: %.1f reads a second, want about %.0f", three, want)
	}
	tok := sh.copyToken(a.id)
	for i := range 3 {
		drain(a.post(1, answerBody(`"`+askID(tok, int64(i+1))+`"`, "done")))
	}
	for i := range calls {
		for l := range calls[i] {
			if strings.Contains(l, fmt.Sprintf(`"id":%d,"result"`, 40+i)) {
				break
			}
		}
	}
	if idle := rate(); idle > 0 {
		t.Errorf("no question waiting: %.1f reads a second", idle)
	}
}
