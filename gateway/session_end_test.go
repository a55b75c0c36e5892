package gateway

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// endCounter is a Telemetry that counts the session ends reported, by
// session id.
type endCounter struct {
	mu   sync.Mutex
	ends map[string]int
}

func (*endCounter) StartServerOperation(ctx context.Context, _ mcpadapter.ServerOperation) (context.Context, func(mcpadapter.ServerOperationResult)) {
	return ctx, func(mcpadapter.ServerOperationResult) {}
}

func (*endCounter) InjectMeta(context.Context, map[string]any) {}

func (c *endCounter) EndServerSession(_ context.Context, end mcpadapter.ServerSessionEnd) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ends == nil {
		c.ends = make(map[string]int)
	}
	c.ends[end.SessionID]++
}

// count returns how many ends of session id were reported.
func (c *endCounter) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ends[id]
}

// total returns how many session ends were reported.
func (c *endCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.ends {
		n += v
	}
	return n
}

// heldSessions returns how many sessions g holds as live or timed.
func heldSessions(g *Gateway) (live, timed int) {
	g.live.mu.Lock()
	live = len(g.live.by)
	g.live.mu.Unlock()
	g.clock.mu.Lock()
	timed = len(g.clock.timed)
	g.clock.mu.Unlock()
	return live, timed
}

// slowCall posts a tools/call of the slow tool (ms milliseconds) in s,
// with meta as the params' _meta (none when ""), and returns a channel
// that gets the answer's status once it is read.
func slowCall(s *rawSession, ms int, meta string) <-chan int {
	params := `{"name":"slow","arguments":{"ms":` + itoa(ms) + `}`
	if meta != "" {
		params += `,"_meta":` + meta
	}
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":` + params + `}}`
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", v1125)
		cl := &http.Client{Timeout: 30 * time.Second}
		resp, err := cl.Do(req)
		if err != nil {
			done <- 0
			return
		}
		buf := make([]byte, 4096)
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	return done
}

// TestEverySessionEndReportedOnce: a handshake-era session ended by its
// client (DELETE; idle, with a call on the session fast path, with a
// call in go-sdk's handler), by the gateway's idle timeout, by
// Gateway.Close (idle, with calls in flight either way), or never made
// (its initialize failed) is forgotten by the gateway and its end is
// reported to Options.Telemetry once, before Gateway.Close returns.
func TestEverySessionEndReportedOnce(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	tel := &endCounter{}
	g, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{Telemetry: tel, SessionTimeout: 20 * time.Second})
	idleTel := &endCounter{}
	ig, idleURL := startGateway(t, []Server{{Name: "old", Target: old.URL}}, &Options{Telemetry: idleTel, SessionTimeout: 300 * time.Millisecond})

	once := func(tel *endCounter, what, id string) {
		t.Helper()
		waitUntil(t, what+": its end reported", func() bool { return tel.count(id) > 0 })
		if n := tel.count(id); n != 1 {
			t.Errorf("%s: its end reported %d times", what, n)
		}
	}

	// Its client ends it, idle.
	s := rawInit(t, url, `{}`)
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
	once(tel, "DELETE", s.id)

	// Its client ends it with a call on the session fast path.
	s = rawInit(t, url, `{}`)
	before := g.sessionFast.Load()
	call := slowCall(s, 1500, "")
	waitUntil(t, "a call on the session fast path", func() bool {
		ls := g.live.get(s.id, "")
		return ls != nil && g.live.calling(ls)
	})
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
	<-call
	if g.sessionFast.Load() == before {
		t.Error("the call did not take the session fast path")
	}
	once(tel, "DELETE with a call on the fast path", s.id)

	// Its client ends it with a call in go-sdk's handler.
	s = rawInit(t, url, `{}`)
	call = slowCall(s, 1500, sdkMeta)
	waitUntil(t, "a call in go-sdk's handler", func() bool { return g.inflightCount() > 0 })
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
	<-call
	once(tel, "DELETE with a call in go-sdk's handler", s.id)

	// Its initialize fails: go-sdk closes it.
	before2 := tel.total()
	for range 5 {
		r := &rawSession{t: t, url: url}
		resp := r.post(testCtx(t, 10*time.Second), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)
		resp.Body.Close()
	}

	// The gateway's idle timeout ends it.
	var idle []*rawSession
	for range 3 {
		idle = append(idle, rawInit(t, idleURL, `{}`))
	}
	for i, s := range idle {
		once(idleTel, "idle timeout "+itoa(i), s.id)
	}
	waitUntil(t, "the idle sessions forgotten", func() bool {
		live, timed := heldSessions(ig)
		return live == 0 && timed == 0
	})
	waitUntil(t, "the ended sessions forgotten", func() bool {
		live, timed := heldSessions(g)
		return live == 0 && timed == 0
	})
	if n := tel.total() - before2; n != 0 {
		t.Errorf("%d session ends reported for failed initializes", n)
	}

	// Gateway.Close ends them: idle, with a call on the fast path, with a
	// call in go-sdk's handler.
	closing := []*rawSession{rawInit(t, url, `{}`), rawInit(t, url, `{}`), rawInit(t, url, `{}`)}
	fast := slowCall(closing[1], 1500, "")
	waitUntil(t, "a call on the session fast path", func() bool {
		ls := g.live.get(closing[1].id, "")
		return ls != nil && g.live.calling(ls)
	})
	sdk := slowCall(closing[2], 1500, sdkMeta)
	waitUntil(t, "a call in go-sdk's handler", func() bool { return g.inflightCount() > 1 })
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for i, s := range closing {
		if n := tel.count(s.id); n != 1 {
			t.Errorf("Gateway.Close, session %d: its end reported %d times by the time Close returned", i, n)
		}
	}
	<-fast
	<-sdk
	if live, timed := heldSessions(g); live != 0 || timed != 0 {
		t.Errorf("after Gateway.Close: %d live sessions, %d timed", live, timed)
	}
	want := tel.total()
	time.Sleep(200 * time.Millisecond)
	if got := tel.total(); got != want {
		t.Errorf("%d session ends reported after Gateway.Close returned", got-want)
	}
}

// sseIDsAndData reads the SSE events of resp (at most 5 s): their ids and data.
func sseIDsAndData(resp *http.Response) (ids, data []string) {
	defer resp.Body.Close()
	timer := time.AfterFunc(5*time.Second, func() { resp.Body.Close() })
	defer timer.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, v)
		}
		if v, ok := strings.CutPrefix(line, "data: "); ok && v != "" {
			data = append(data, v)
		}
	}
	return ids, data
}

// resume sends a GET of s resuming after the event lastID.
func (s *rawSession) resume(lastID string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(testCtx(s.t, 10*time.Second), http.MethodGet, s.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", v1125)
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

// TestResumeReplaysOwnEventsOnly: two sessions get the same tools/list
// answer (the same bytes, held once by the event store); a session
// resuming its stream after the priming event gets its answer again,
// and a session naming the other's stream gets none of its events.
func TestResumeReplaysOwnEventsOnly(t *testing.T) {
	old := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "old", Era: testserver.Legacy}))
	_, url := startGateway(t, []Server{{Name: "old", Target: old.URL}}, nil)
	a, b := rawInit(t, url, `{}`), rawInit(t, url, `{}`)
	list := `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`
	aIDs, aData := sseIDsAndData(a.post(testCtx(t, 10*time.Second), list))
	_, bData := sseIDsAndData(b.post(testCtx(t, 10*time.Second), list))
	if len(aData) != 1 || len(bData) != 1 || aData[0] != bData[0] || len(aData[0]) < defaultInternMin {
		t.Fatalf("tools/list answers: %d and %d events, equal %v", len(aData), len(bData), len(aData) == 1 && len(bData) == 1 && aData[0] == bData[0])
	}
	if len(aIDs) < 2 {
		t.Fatalf("tools/list stream of a: event ids %q, want the priming event's and the answer's", aIDs)
	}
	_, got := sseIDsAndData(a.resume(aIDs[0]))
	if len(got) != 1 || got[0] != aData[0] {
		t.Errorf("a resuming its stream after %s: %d events, want its answer", aIDs[0], len(got))
	}
	resp := b.resume(aIDs[0])
	_, got = sseIDsAndData(resp)
	if len(got) != 0 {
		t.Errorf("b resuming a's stream: %s, %d events: %.200q", resp.Status, len(got), got)
	}
	// Each session's answer is still there after the other session ends.
	if err := b.end(); err != nil {
		t.Fatal(err)
	}
	_, got = sseIDsAndData(a.resume(aIDs[0]))
	if len(got) != 1 || got[0] != aData[0] {
		t.Errorf("a resuming its stream once b ended: %d events, want its answer", len(got))
	}
}
