//lint:file-ignore SA1019 roots and sampling, deprecated in 2026-07-28, are alive for handshake-era sessions

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests here play a hostile client, and peers other than go-sdk's
// raw client, against the ids of a shared session's questions
// (sessions_asks.go): batches, escapes, duplicates, a gateway with no
// store, the TypeScript SDK's client.

const v0326 = "2025-03-26"

// postV posts body to replica as alice in session sid ("" for none),
// speaking protocol version v.
func (a *answerRig) postV(replica int, v, sid, body string) *http.Response {
	t := a.t
	req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, a.rs[replica].ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer alice")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// openV makes a session of alice speaking v on replica.
func (a *answerRig) openV(replica int, v string) string {
	resp := a.postV(replica, v, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	drain(resp)
	if sid == "" {
		a.t.Fatalf("no session at %s", v)
	}
	drain(a.postV(replica, v, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return sid
}

// escapeDot writes the JSON string qid with its "." as \u002e.
func escapeDot(qid string) string { return strings.Replace(qid, ".", `\u002e`, 1) }

// TestSharedSessionsAskIDsBatch: in a 2025-03-26 session (batches
// allowed), a batch of answers holding two to one question (the second
// with its id escaped) and one with a number id gives the question the
// first answer only; the same for a question of the other replica
// (handed through the record).
func TestSharedSessionsAskIDsBatch(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	sid := a.openV(0, v0326)
	for _, asker := range []int{0, 1} {
		t.Run(fmt.Sprintf("asked by %d", asker), func(t *testing.T) {
			a.t = t
			s := streamData(a.postV(asker, v0326, sid, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"q1","arguments":{}}}`))
			qid := questionIDOf(within(t, s, 10*time.Second, "q1's question"))
			if !tokenID(qid, 1) {
				t.Fatalf("the question's id: %s", qid)
			}
			batch := `[` + answerBody(qid, "first") + `,` + answerBody(escapeDot(qid), "second") + `,` + answerBody("1", "number") + `]`
			if code := drain(a.postV(0, v0326, sid, batch)); code != http.StatusAccepted {
				t.Fatalf("the batch: %d", code)
			}
			if res := within(t, s, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:first]") {
				t.Fatalf("q1's result: %s", res)
			}
		})
	}
}

// TestSharedSessionsAskIDsEscaped: an answer whose id is the question's
// written with a JSON escape is the same string, and reaches the
// question (as go-sdk reads it), once, on either replica.
func TestSharedSessionsAskIDsEscaped(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	for i, to := range []int{0, 1} {
		s := a.call(0, 20+i, "q1")
		qid := questionIDOf(within(t, s, 10*time.Second, "q1's question"))
		drain(a.post(to, answerBody(escapeDot(qid), "escaped")))
		drain(a.post(to, answerBody(qid, "again")))
		if res := within(t, s, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:escaped]") {
			t.Fatalf("q1's result (answer to replica %d): %s", to, res)
		}
	}
}

// TestGatewayAskIDsUnshared: a gateway with no SessionStore sends its
// questions under go-sdk's own number ids, and takes the answers to
// them; a string id such as a shared session's reaches nothing.
func TestGatewayAskIDsUnshared(t *testing.T) {
	up := testserver.StartStreamable(t, askServer(time.Second))
	_, url := startGateway(t, []Server{{Name: "s", Target: up.URL}}, nil)
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequestWithContext(testCtx(t, 30*time.Second), http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
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
	resp := post("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v1125+`","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	drain(resp)
	drain(post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	s := streamData(post(sid, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"q1","arguments":{}}}`))
	q := within(t, s, 10*time.Second, "q1's question")
	if qid := questionIDOf(q); qid != "1" {
		t.Fatalf("the question's id with no store: %s, want go-sdk's 1 (%s)", qid, q)
	}
	drain(post(sid, answerBody(`"`+strings.Repeat("A", 26)+`.1"`, "string")))
	quiet(t, s, 500*time.Millisecond, "a string id reached the question")
	drain(post(sid, answerBody("1", "number")))
	if res := within(t, s, 5*time.Second, "q1's result"); !strings.Contains(res, "q1 got accept map[answer:number]") {
		t.Fatalf("q1's result: %s", res)
	}
}

// TestSharedSessionsAskIDsGoClientWithdrawn: a go-sdk client asked a
// question that the gateway then withdraws (notifications/cancelled with
// the question's id) has its handler's context cancelled, with a shared
// session (a string id) as with none (go-sdk's number).
func TestSharedSessionsAskIDsGoClientWithdrawn(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprint("shared=", shared), func(t *testing.T) {
			up := testserver.StartStreamable(t, askServer(300*time.Millisecond))
			var url string
			if shared {
				store := &MemorySessionStore{}
				url = startReplicasWith(t, []SessionStore{store, store}, up.URL, Options{})[1].ts.URL + "/mcp"
			} else {
				_, url = startGateway(t, []Server{{Name: "s", Target: up.URL}}, nil)
			}
			cancelled := make(chan error, 1)
			c := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					select {
					case <-ctx.Done():
						cancelled <- ctx.Err()
					case <-time.After(5 * time.Second):
						cancelled <- nil
					}
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
			})
			cs, err := c.Connect(testCtx(t, 20*time.Second), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"alice"}}},
				&mcp.ClientSessionOptions{ProtocolVersion: v1125})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			rb := toolText(t, cs, "brief")
			if err := within(t, cancelled, 10*time.Second, "the handler's end"); err == nil {
				t.Error("the withdrawn question's handler was not cancelled")
			}
			within(t, rb, 10*time.Second, "brief's end")
		})
	}
}

// typedAskServer is askServer asking with a schema of one string
// property, answer (the TypeScript SDK's client checks a question's
// schema).
func typedAskServer(briefWait time.Duration) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	schema := map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}
	for name, wait := range map[string]time.Duration{"q1": 20 * time.Second, "q2": 20 * time.Second, "brief": briefWait} {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ctx, cancel := context.WithTimeout(ctx, wait)
			defer cancel()
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "question " + name, RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s got %s %v", name, res.Action, res.Content)}}}, nil, nil
		})
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "all"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, nil, err
		}
		msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("roots %v model %s", uris, msg.Model)}}}, nil, nil
	})
	return srv
}

// TestSharedSessionsAskIDsTypeScriptClient: the TypeScript SDK's client
// (npm @modelcontextprotocol/sdk, Node 22), through a round-robin proxy
// in front of two replicas, answers questions asked under string ids
// (its answers reach them whichever replica they go to: elicitations,
// roots/list, sampling/createMessage), and has the handler of a withdrawn
// question aborted.
func TestSharedSessionsAskIDsTypeScriptClient(t *testing.T) {
	node := testenv.Node(t)
	sdk := filepath.Join(testenv.NPMDir(t), "node_modules", "@modelcontextprotocol", "sdk")
	store := &MemorySessionStore{}
	up := testserver.StartStreamable(t, typedAskServer(300*time.Millisecond))
	rs := startReplicasWith(t, []SessionStore{store, store}, up.URL, Options{})
	cmd := exec.CommandContext(testCtx(t, 60*time.Second), node, "testdata/tsaskclient.mjs", sdk, roundRobin(t, rs), "alice")
	cmd.Env = testenv.NodeEnv(node)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tsaskclient: %v\n%s", err, stderr.String())
	}
	var got struct {
		Brief   string
		Aborted bool
		Q1, Q2  string
		All     string
		IDs     []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("tsaskclient printed %q: %v", out, err)
	}
	t.Logf("%+v", got)
	if !got.Aborted || strings.Contains(got.Brief, " got ") {
		t.Errorf("the withdrawn question: aborted %v, brief's result %q", got.Aborted, got.Brief)
	}
	if got.Q1 != "q1 got accept map[answer:question q1]" || got.Q2 != "q2 got accept map[answer:question q2]" {
		t.Errorf("the answers: %q %q", got.Q1, got.Q2)
	}
	if got.All != "roots [file:///ts] model ts-model" {
		t.Errorf("roots and sampling: %q", got.All)
	}
	if len(got.IDs) != 5 {
		t.Errorf("the questions' ids at the client: %q", got.IDs)
	}
	for _, id := range got.IDs {
		if _, _, ok := parseAskID(id); !ok {
			t.Errorf("a question's id at the client: %q, want \"TOKEN.n\"", id)
		}
	}
}

// TestSharedSessionsAsksLeaveRecord: the question of a replica that
// died while it waited, and an answer another replica handed to it,
// leave the session's record at its next write once they can no longer
// be waiting (here the renewal of the record by a request to another
// replica), however long the session lives on.
func TestSharedSessionsAsksLeaveRecord(t *testing.T) {
	store := &MemorySessionStore{}
	const park, ttl = 3 * time.Second, 12 * time.Second
	up := testserver.StartStreamable(t, askServer(time.Second))
	dying := &killableStore{SessionStore: store}
	a := &answerRig{t: t, rs: startReplicasWith(t, []SessionStore{store, dying, store}, up.URL, Options{ParkTimeout: park, SessionTimeout: ttl})}
	a.id = a.openAs(0, "alice")
	events := make(chan string, 16)
	for i, tool := range []string{"q1", "q2"} {
		go func() {
			for l := range a.call(1, 10+i, tool) {
				events <- l
			}
		}()
	}
	var qids []string
	for len(qids) < 2 {
		if l := within(t, events, 10*time.Second, "the questions"); strings.Contains(l, `"elicitation/create"`) {
			qids = append(qids, questionIDOf(l))
		}
	}
	if rec, _ := sessionRecordOf(t, store, a.id); len(rec.Asks) != 2 {
		t.Fatalf("the record with two questions waiting: %+v", rec.Asks)
	}
	dying.dead.Store(true)
	a.rs[1].down.Store(true)
	a.rs[1].ts.CloseClientConnections()
	drain(a.post(2, answerBody(qids[0], "handed")))
	before, _ := sessionRecordOf(t, store, a.id)
	if len(before.Asks) != 1 || len(before.Handed) != 1 {
		t.Fatalf("the record with a question waiting and an answer handed: %d asks, %d handed", len(before.Asks), len(before.Handed))
	}
	time.Sleep(park + askMargin + 500*time.Millisecond)
	drain(a.post(0, `{"jsonrpc":"2.0","id":30,"method":"tools/list"}`))
	rec, size := sessionRecordOf(t, store, a.id)
	if !rec.Touched.After(before.Touched) {
		t.Fatalf("the record was not renewed: touched %s, then %s", before.Touched, rec.Touched)
	}
	if len(rec.Asks) != 0 || len(rec.Handed) != 0 {
		t.Errorf("the record renewed after the questions ended: %d asks, %d handed (%d bytes)", len(rec.Asks), len(rec.Handed), size)
	}
}

// TestSharedSessionsAskIDWriterController: the writer of a shared
// session's streams lets http.ResponseController through to the
// connection (deadlines, full duplex), and its flushes reach the client
// before the handler returns, with a question rewritten.
func TestSharedSessionsAskIDWriterController(t *testing.T) {
	tok := strings.Repeat("Q", 26)
	s := &sharedSessions{local: map[string]*heldSession{"S": {token: tok}}}
	release := make(chan struct{})
	errs := make(chan error, 3)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		aw := &askIDWriter{ResponseWriter: w, s: s, id: "S"}
		rc := http.NewResponseController(aw)
		errs <- rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		errs <- rc.EnableFullDuplex()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = aw.Write([]byte("event: message\nid: S_1\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"roots/list\"}\n\n"))
		errs <- rc.Flush()
		<-release
	}))
	defer ts.Close()
	defer close(release)
	req, _ := http.NewRequestWithContext(testCtx(t, 10*time.Second), http.MethodGet, ts.URL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ev := within(t, sseEvents(resp), 5*time.Second, "the flushed event")
	if want := `{"jsonrpc":"2.0","id":"` + tok + `.3","method":"roots/list"}`; ev.data != want {
		t.Errorf("the flushed event: %q, want %q", ev.data, want)
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("through the writer: %v", err)
		}
	}
}

// TestSharedSessionsAskIDsHugeQuestion: a server's question of 4 MiB
// (its message full of JSON and SSE look-alikes) reaches the client
// whole, under the copy's string id, and the answer reaches it.
func TestSharedSessionsAskIDsHugeQuestion(t *testing.T) {
	msg := strings.Repeat("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n\n\"\\u002e", 4<<20/48)
	srv := mcp.NewServer(&mcp.Implementation{Name: "q"}, &mcp.ServerOptions{SupportedProtocolVersions: testserver.LegacyVersions})
	mcp.AddTool(srv, &mcp.Tool{Name: "big"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("big got %s %v", res.Action, res.Content)}}}, nil, nil
	})
	up := testserver.StartStreamable(t, srv)
	store := &MemorySessionStore{}
	a := &answerRig{t: t, rs: startReplicasWith(t, []SessionStore{store, store}, up.URL, Options{MaxRequestBytes: 64 << 20})}
	a.id = a.openAs(0, "alice")
	resp := a.post(1, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	evs := make(chan string, 4)
	go func() {
		defer resp.Body.Close()
		defer close(evs)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok && l != "" {
				evs <- l
			}
		}
	}()
	q := within(t, evs, 20*time.Second, "the huge question")
	var m struct {
		ID     string `json:"id"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(q), &m); err != nil || m.Params.Message != msg {
		t.Fatalf("the huge question (%d bytes) came altered: %v, message %d bytes, want %d", len(q), err, len(m.Params.Message), len(msg))
	}
	if _, n, ok := parseAskID(m.ID); !ok || n != 1 {
		t.Fatalf("the huge question's id: %q", m.ID)
	}
	drain(a.post(0, answerBody(`"`+m.ID+`"`, "huge")))
	if res := within(t, evs, 10*time.Second, "big's result"); !strings.Contains(res, "big got accept map[answer:huge]") {
		t.Fatalf("big's result: %s", res)
	}
}

// TestSharedSessionsAskIDsRefusedBatch: in a 2025-03-26 session, a batch
// with answers to a question of each replica and a request or
// notification (one go-sdk does not take: a method it does not have, a
// request with no params where they are required, a notification with
// an id; or one it does: a ping) is refused whole (the 2025-03-26
// transport does not allow responses and requests in one batch), and
// neither question takes its answer; each takes the client's next
// answer.
func TestSharedSessionsAskIDsRefusedBatch(t *testing.T) {
	store := &MemorySessionStore{}
	a := newAskRig(t, []SessionStore{store, store})
	sid := a.openV(0, v0326)
	for i, bad := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","method":"notifications/no_such_thing"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":7,"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"p","method":"ping"}`,
	} {
		s0 := streamData(a.postV(0, v0326, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"q1","arguments":{}}}`, 100+i)))
		s1 := streamData(a.postV(1, v0326, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"q2","arguments":{}}}`, 200+i)))
		q0 := questionIDOf(within(t, s0, 10*time.Second, "replica 0's question"))
		q1 := questionIDOf(within(t, s1, 10*time.Second, "replica 1's question"))
		resp := a.postV(0, v0326, sid, `[`+answerBody(q0, "refused")+`,`+answerBody(q1, "refused")+`,`+bad+`]`)
		if code := drain(resp); code != http.StatusBadRequest {
			t.Errorf("the batch with %s: %d, want 400", bad, code)
		}
		quiet(t, s1, answerPoll*3, "replica 1's question took an answer of a refused POST")
		quiet(t, s0, 10*time.Millisecond, "replica 0's question took an answer of a refused POST")
		drain(a.postV(0, v0326, sid, answerBody(q0, "next")))
		drain(a.postV(0, v0326, sid, answerBody(q1, "next")))
		if res := within(t, s0, 5*time.Second, "replica 0's result"); !strings.Contains(res, "q1 got accept map[answer:next]") {
			t.Errorf("replica 0's result after the batch with %s: %s", bad, res)
		}
		if res := within(t, s1, 5*time.Second, "replica 1's result"); !strings.Contains(res, "q2 got accept map[answer:next]") {
			t.Errorf("replica 1's result after the batch with %s: %s", bad, res)
		}
	}
}
