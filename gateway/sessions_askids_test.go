package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests here are about the ids of a shared session's questions to
// its client (sessions_asks.go): each copy of the session, on each
// replica, numbers its questions from 1, and the client must never see
// one id twice in the session.

// askServer is a server whose tools q1 and q2 each ask the client a
// question (waiting for its answer up to 20 s) and say which answer they
// got, and whose tool brief asks one it withdraws after briefWait.
func askServer(briefWait time.Duration) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	for name, wait := range map[string]time.Duration{"q1": 20 * time.Second, "q2": 20 * time.Second, "brief": briefWait} {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "question " + name, RequestedSchema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s got %s %v", name, res.Action, res.Content)}}}, nil, nil
		})
	}
	return srv
}

// newAskRig is a session of alice shared by replicas (one a store)
// in front of askServer, made on replica 0.
func newAskRig(t *testing.T, stores []SessionStore) *answerRig {
	up := testserver.StartStreamable(t, askServer(300*time.Millisecond))
	a := &answerRig{t: t, rs: startReplicasWith(t, stores, up.URL, Options{})}
	a.id = a.openAs(0, "alice")
	return a
}

// sseEvent is an event of an SSE stream.
type sseEvent struct{ id, data string }

// sseEvents returns the events of resp's stream, read until it ends.
func sseEvents(resp *http.Response) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			l := sc.Text()
			switch {
			case l == "":
				if ev.id != "" || ev.data != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(l, "id: "):
				ev.id = strings.TrimPrefix(l, "id: ")
			case strings.HasPrefix(l, "data: "):
				ev.data = strings.TrimPrefix(l, "data: ")
			}
		}
	}()
	return ch
}

// get opens a GET stream of the session on replica, resuming after
// event eid when it is not "" (again while go-sdk answers 409: the
// stream is still taken by the request the client dropped).
func (a *answerRig) get(replica int, eid string) *http.Response {
	t := a.t
	for range 50 {
		req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodGet, a.rs[replica].ts.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Mcp-Session-Id", a.id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		if eid != "" {
			req.Header.Set("Last-Event-ID", eid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusOK:
			return resp
		case http.StatusConflict:
			drain(resp)
			time.Sleep(20 * time.Millisecond)
		default:
			t.Fatalf("GET of the session on replica %d: %d", replica, drain(resp))
		}
	}
	t.Fatalf("GET of the session on replica %d: still 409", replica)
	return nil
}

// tokenID reports whether the JSON id qid is a string naming a copy of
// the session and its question n: "TOKEN.n".
func tokenID(qid string, n int) bool {
	var s string
	if json.Unmarshal([]byte(qid), &s) != nil {
		return false
	}
	tok, num, ok := strings.Cut(s, ".")
	return ok && validSessionID(tok) && num == fmt.Sprint(n)
}

// TestSharedSessionsAskIDsLateAnswer: replica 0 asks a question and
// withdraws it (the client is sent notifications/cancelled with the
// question's id); replica 1 then asks one, the first of its copy too.
// The client's late answer to the withdrawn question, to either replica,
// reaches neither; replica 1's question takes its own answer. (Replica
// 0's call takes its session fast path, the session's standalone stream
// open there: its question comes on that stream. Replica 1's call is
// go-sdk's: its question comes on the call's stream.)
func TestSharedSessionsAskIDsLateAnswer(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	standalone := streamData(a.get(0, ""))
	sa := a.call(0, 10, "brief")
	qa := questionIDOf(within(t, standalone, 10*time.Second, "brief's question"))
	withdrawn := false
	for deadline := time.After(10 * time.Second); !withdrawn; {
		var l string
		select {
		case l = <-sa:
		case l = <-standalone:
		case <-deadline:
			t.Fatal("brief's question was not withdrawn at the client")
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "notifications/cancelled" {
			if string(m.Params.RequestID) != qa {
				t.Fatalf("the withdrawal names %s, the question was %s", m.Params.RequestID, qa)
			}
			withdrawn = true
		}
	}
	sb := a.call(1, 11, "q2")
	qb := questionIDOf(within(t, sb, 10*time.Second, "q2's question"))
	t.Logf("replica 0's withdrawn question: %s; replica 1's: %s", qa, qb)
	for _, replica := range []int{1, 0} {
		if code := drain(a.post(replica, answerBody(qa, "late"))); code != http.StatusAccepted {
			t.Errorf("the late answer's POST to replica %d: %d, want 202", replica, code)
		}
	}
	quiet(t, sb, 1500*time.Millisecond, "q2's question took the late answer to replica 0's withdrawn question")
	drain(a.post(0, answerBody(qb, "for q2")))
	if res := within(t, sb, 5*time.Second, "q2's result"); !strings.Contains(res, "q2 got accept map[answer:for q2]") {
		t.Fatalf("q2's result: %s", res)
	}
}

// routed is an http.RoundTripper that sends each request of a client to
// the replica the test chose last (to), as alice, and passes each event
// its streams bring to seen.
type routed struct {
	to   atomic.Pointer[string]
	seen func(data string)
}

func (r *routed) RoundTrip(req *http.Request) (*http.Response, error) {
	u, _ := url.Parse(*r.to.Load())
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, u.Host
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && r.seen != nil {
		resp.Body = &sniffed{ReadCloser: resp.Body, seen: r.seen}
	}
	return resp, err
}

func (r *routed) route(u string) { r.to.Store(&u) }

// sniffed passes the data of each SSE event read from a body to seen.
type sniffed struct {
	io.ReadCloser
	seen func(string)
	buf  []byte
}

func (s *sniffed) Read(p []byte) (int, error) {
	n, err := s.ReadCloser.Read(p)
	s.buf = append(s.buf, p[:n]...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		if d, ok := bytes.CutPrefix(s.buf[:i], []byte("data: ")); ok {
			s.seen(string(d))
		}
		s.buf = s.buf[i+1:]
	}
	return n, err
}

// askedClient connects a go-sdk client through rt; each question it is
// asked comes on the channel returned, with a channel on which the test
// releases its answer (the question's message), whether or not the
// question was withdrawn meanwhile.
func askedClient(t *testing.T, rt *routed) (*mcp.ClientSession, <-chan chan<- struct{}) {
	asked := make(chan chan<- struct{}, 8)
	c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			release := make(chan struct{})
			asked <- release
			select {
			case <-release:
			case <-t.Context().Done():
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": req.Params.Message}}, nil
		},
	})
	cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: "http://gateway/mcp", HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, asked
}

// toolText has cs call tool in the background; its text (or error)
// comes on the channel returned.
func toolText(t *testing.T, cs *mcp.ClientSession, tool string) <-chan string {
	ch := make(chan string, 1)
	go func() {
		res, err := cs.CallTool(testCtx(t, 30*time.Second), &mcp.CallToolParams{Name: tool})
		switch {
		case err != nil:
			ch <- "error: " + err.Error()
		default:
			ch <- texts(res)
		}
	}()
	return ch
}

// TestSharedSessionsAskIDsBothWait: a go-sdk client is asked a question
// by replica 0 and one by replica 1, both the first of their copies,
// waiting at once; its answers, both sent to replica 0, reach each its
// own question.
func TestSharedSessionsAskIDsBothWait(t *testing.T) {
	store := &MemorySessionStore{}
	up := testserver.StartStreamable(t, askServer(time.Second))
	rs := startReplicasWith(t, []SessionStore{store, store}, up.URL, Options{})
	var ids []string
	var mu sync.Mutex
	rt := &routed{seen: func(d string) {
		if strings.Contains(d, `"elicitation/create"`) {
			mu.Lock()
			ids = append(ids, questionIDOf(d))
			mu.Unlock()
		}
	}}
	rt.route(rs[0].ts.URL)
	cs, asked := askedClient(t, rt)
	r1 := toolText(t, cs, "q1")
	release1 := within(t, asked, 10*time.Second, "q1's question")
	rt.route(rs[1].ts.URL)
	r2 := toolText(t, cs, "q2")
	release2 := within(t, asked, 10*time.Second, "q2's question")
	rt.route(rs[0].ts.URL)
	mu.Lock()
	t.Logf("the questions' ids: %v", ids)
	mu.Unlock()
	close(release1)
	close(release2)
	if res := within(t, r1, 10*time.Second, "q1's result"); res != "q1 got accept map[answer:question q1]" {
		t.Errorf("q1's result: %s", res)
	}
	if res := within(t, r2, 10*time.Second, "q2's result"); res != "q2 got accept map[answer:question q2]" {
		t.Errorf("q2's result: %s", res)
	}
}

// TestSharedSessionsAskIDsRemadeCopy: a replica that drops its copy of a
// session and makes it again asks under ids the client has not seen: a
// go-sdk client's late answer to the question withdrawn before reaches
// no question of the new copy.
func TestSharedSessionsAskIDsRemadeCopy(t *testing.T) {
	store := &MemorySessionStore{}
	up := testserver.StartStreamable(t, askServer(300*time.Millisecond))
	rs := startReplicasWith(t, []SessionStore{store}, up.URL, Options{})
	ids := make(chan string, 8)
	rt := &routed{seen: func(d string) {
		if strings.Contains(d, `"elicitation/create"`) {
			ids <- questionIDOf(d)
		}
	}}
	rt.route(rs[0].ts.URL)
	cs, asked := askedClient(t, rt)
	rb := toolText(t, cs, "brief")
	late := within(t, asked, 10*time.Second, "brief's question")
	first := within(t, ids, 5*time.Second, "brief's question's id")
	if res := within(t, rb, 10*time.Second, "brief's end"); strings.Contains(res, " got ") {
		t.Fatalf("brief's call got an answer: %s", res)
	}
	g := rs[0].g
	for ss := range g.server.Sessions() {
		if ss.ID() == cs.ID() {
			_ = ss.Close()
		}
	}
	for i := 0; g.shared.held(cs.ID()) != nil; i++ {
		if i == 100 {
			t.Fatal("the replica still holds the copy it closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r1 := toolText(t, cs, "q1")
	release := within(t, asked, 10*time.Second, "q1's question (of the copy made again)")
	second := within(t, ids, 5*time.Second, "q1's question's id")
	if first == second {
		t.Errorf("the copy made again asks under the id %s the client saw before", first)
	}
	close(late)
	select {
	case res := <-r1:
		t.Fatalf("q1's call ended with the late answer to the question withdrawn before: %s", res)
	case <-time.After(1500 * time.Millisecond):
	}
	close(release)
	if res := within(t, r1, 10*time.Second, "q1's result"); res != "q1 got accept map[answer:question q1]" {
		t.Fatalf("q1's result: %s", res)
	}
}

// TestSharedSessionsAskIDsForged: answers in session X with forged ids
// (the id of a question waiting in alice's other session, ids of other
// forms, numbers) reach no question, on either replica, in either
// session; each question then takes its own answer.
func TestSharedSessionsAskIDsForged(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	other := a.openAs(1, "alice")
	so := a.callAs(1, "alice", other, 20, "q1")
	qo := questionIDOf(within(t, so, 10*time.Second, "the question in the other session"))
	sx := a.call(1, 11, "q2")
	qx := questionIDOf(within(t, sx, 10*time.Second, "X's question"))
	var tok string
	_ = json.Unmarshal([]byte(qx), &tok)
	tok, _, _ = strings.Cut(tok, ".")
	if len(tok) != 26 {
		tok = strings.Repeat("B", 26)
	}
	forged := []string{
		qo, "1", `"1"`, "1.0", `".1"`, `"` + tok + `"`, `"` + tok + `."`, `"` + tok + `.01"`, `"` + tok + `.1 "`, `" ` + tok + `.1"`,
		`"` + tok + `.+1"`, `"` + tok + `.0"`, `"` + tok + `.1.1"`, `"` + tok + `..1"`, `"` + strings.ToLower(tok) + `.1"`,
		`"` + tok[1:] + `.1"`, `"` + tok + `A.1"`, `"` + strings.Repeat("A", 26) + `.1"`, `"` + tok + `.18446744073709551617"`,
		`[` + qx + `]`, `{"id":` + qx + `}`,
	}
	for _, id := range forged {
		for replica := range 2 {
			drain(a.post(replica, answerBody(id, "forged "+id)))
		}
	}
	quiet(t, sx, 1500*time.Millisecond, "X's question took a forged answer")
	quiet(t, so, 100*time.Millisecond, "the other session's question took an answer sent in X")
	if !tokenID(qx, 1) || !tokenID(qo, 1) || qx == qo {
		t.Fatalf("the questions' ids: %s and %s, want two \"TOKEN.1\"", qx, qo)
	}
	drain(a.post(0, answerBody(qx, "for X")))
	if res := within(t, sx, 5*time.Second, "X's result"); !strings.Contains(res, "q2 got accept map[answer:for X]") {
		t.Fatalf("X's result: %s", res)
	}
	drain(a.postAs(1, "alice", other, answerBody(qo, "for the other")))
	if res := within(t, so, 5*time.Second, "the other session's result"); !strings.Contains(res, "q1 got accept map[answer:for the other]") {
		t.Fatalf("the other session's result: %s", res)
	}
}

// TestSharedSessionsAskIDsResumed: a client that resumes the stream of a
// call (GET with Last-Event-ID) on the replica that wrote it is sent the
// call's question again under the id it had, which takes the answer
// (here through the other replica) and brings the call's result on the
// resumed stream.
func TestSharedSessionsAskIDsResumed(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	resp := a.post(0, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"q1","arguments":{}}}`)
	evs := sseEvents(resp)
	var prime, q sseEvent
	for q.data == "" {
		ev := within(t, evs, 10*time.Second, "the call's events")
		if ev.data == "" {
			prime = ev
		} else {
			q = ev
		}
	}
	resp.Body.Close()
	qid := questionIDOf(q.data)
	if prime.id == "" || !tokenID(qid, 1) {
		t.Fatalf("the stream's first events: %+v %+v; want a priming event and a question with an id \"TOKEN.1\"", prime, q)
	}
	resumed := sseEvents(a.get(0, prime.id))
	again := within(t, resumed, 10*time.Second, "the replayed question")
	if again.id != q.id || questionIDOf(again.data) != qid {
		t.Fatalf("the replayed question: %+v, want %+v", again, q)
	}
	drain(a.post(1, answerBody(qid, "resumed")))
	res := within(t, resumed, 5*time.Second, "the call's result on the resumed stream")
	if !strings.Contains(res.data, `"id":10`) || !strings.Contains(res.data, "q1 got accept map[answer:resumed]") {
		t.Fatalf("the call's result on the resumed stream: %+v", res)
	}
}

// TestSharedSessionsAskIDsRewrite: the writer of a shared session's
// streams rewrites the id of a request of the copy, and the requestId of
// a notifications/cancelled, in an event's data, and nothing else: not a
// response (even one whose text holds a request), a notification, an SSE
// comment, a priming event or an error's text; an id it writes reads back
// as the copy's token and number, and no other string does.
func TestSharedSessionsAskIDsRewrite(t *testing.T) {
	tok := strings.Repeat("Q", 26)
	s := &sharedSessions{local: map[string]*heldSession{"S": {token: tok}}}
	ev := func(data string) string { return "event: message\nid: S_3\ndata: " + data + "\n\n" }
	for _, c := range []struct{ in, want string }{
		{ev(`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"m"}}`),
			ev(`{"jsonrpc":"2.0","id":"` + tok + `.7","method":"elicitation/create","params":{"message":"m"}}`)},
		{"data: " + `{"jsonrpc":"2.0","id":1,"method":"roots/list"}` + "\n\n", "data: " + `{"jsonrpc":"2.0","id":"` + tok + `.1","method":"roots/list"}` + "\n\n"},
		{ev(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"r"}}`),
			ev(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"r","requestId":"` + tok + `.7"}}`)},
		{ev(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"id\":1,\"method\":\"x\"}"}]}}`), ""},
		{ev(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`), ""},
		{ev(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc"}}`), ""},
		{ev(`{"jsonrpc":"2.0","id":"s","method":"ping"}`), ""},
		{": ok\n\n", ""},
		{"id: S_0\ndata: \n\n", ""},
		{"session not found\n", ""},
	} {
		rec := httptest.NewRecorder()
		w := &askIDWriter{ResponseWriter: rec, s: s, id: "S"}
		n, err := w.Write([]byte(c.in))
		want := c.want
		if want == "" {
			want = c.in
		}
		if err != nil || n != len(c.in) || rec.Body.String() != want {
			t.Errorf("%q: wrote %q (%d, %v), want %q", c.in, rec.Body.String(), n, err, want)
		}
	}
	rec := httptest.NewRecorder()
	_, _ = (&askIDWriter{ResponseWriter: rec, s: s, id: "T"}).Write([]byte(ev(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)))
	if !strings.Contains(rec.Body.String(), `"id":7`) {
		t.Errorf("a session not held here: %q", rec.Body.String())
	}
	if got, n, ok := parseAskID(askID(tok, 1<<53)); !ok || got != tok || n != 1<<53 {
		t.Errorf("parseAskID(askID): %q %d %v", got, n, ok)
	}
	for _, id := range []string{"", tok, tok + ".", tok + ".0", tok + ".01", tok + ".-1", tok + ".+1", tok + ". 1", tok + ".1 ", tok + ".1.1",
		tok + fmt.Sprintf(".%d", int64(1<<53)+1), "q" + tok[1:] + ".1", tok[1:] + ".1", tok + "Q.1", "1"} {
		if _, _, ok := parseAskID(id); ok {
			t.Errorf("parseAskID(%q) reads it", id)
		}
	}
}

// BenchmarkSharedSessionsAskIDWriter measures what the writer of a shared
// session's streams costs an event: a question (read whole and written
// again), an answer of 64 KiB and a progress notification (passed after
// a look at their first bytes).
func BenchmarkSharedSessionsAskIDWriter(b *testing.B) {
	tok := strings.Repeat("Q", 26)
	s := &sharedSessions{local: map[string]*heldSession{"S": {token: tok}}}
	for _, c := range []struct{ name, data string }{
		{"question", `{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}`},
		{"answer-64KiB", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 64<<10) + `"}]}}`},
		{"progress", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`},
	} {
		ev := []byte("event: message\nid: S_3\ndata: " + c.data + "\n\n")
		b.Run(c.name, func(b *testing.B) {
			rec := httptest.NewRecorder()
			w := &askIDWriter{ResponseWriter: rec, s: s, id: "S"}
			for b.Loop() {
				rec.Body.Reset()
				_, _ = w.Write(ev)
			}
		})
	}
}
