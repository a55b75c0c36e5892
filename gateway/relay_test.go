package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireTap is an http.RoundTripper that keeps, for each tools/call it
// sends, the bytes of the answer's stream as the client reads them: the
// order of the messages on the wire.
type wireTap struct {
	base http.RoundTripper
	mu   sync.Mutex
	read map[string]*bytes.Buffer // by the call's tool arguments' text
}

func (w *wireTap) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := rereadBody(req)
	if err != nil {
		return nil, err
	}
	resp, err := w.base.RoundTrip(req)
	if err != nil || !bytes.Contains(body, []byte(`"tools/call"`)) {
		return resp, err
	}
	key := string(body)
	buf := new(bytes.Buffer)
	w.mu.Lock()
	w.read[key] = buf
	w.mu.Unlock()
	resp.Body = &tappedBody{ReadCloser: resp.Body, w: w, buf: buf}
	return resp, nil
}

// stream returns what the client read of the answer to the call whose
// request body holds text.
func (w *wireTap) stream(text string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, b := range w.read {
		if strings.Contains(k, `"`+text+`"`) {
			return b.String()
		}
	}
	return ""
}

type tappedBody struct {
	io.ReadCloser
	w   *wireTap
	buf *bytes.Buffer
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.mu.Lock()
	b.buf.Write(p[:n])
	b.w.mu.Unlock()
	return n, err
}

// dropReports records the gateway's reports of the notifications a
// client session's relay dropped (relay.go).
type dropReports struct {
	mu      sync.Mutex
	reports []map[string]any
}

func (d *dropReports) of(session string) []map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []map[string]any
	for _, r := range d.reports {
		if r["session"] == session {
			out = append(out, r)
		}
	}
	return out
}

type dropHandler struct {
	slog.Handler
	d *dropReports
}

func (h dropHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "were dropped") {
		attrs := map[string]any{}
		r.Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.Any(); return true })
		h.d.mu.Lock()
		h.d.reports = append(h.d.reports, attrs)
		h.d.mu.Unlock()
	}
	return h.Handler.Handle(ctx, r)
}

func (h dropHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return dropHandler{h.Handler.WithAttrs(as), h.d}
}

func (h dropHandler) WithGroup(name string) slog.Handler {
	return dropHandler{h.Handler.WithGroup(name), h.d}
}

// relayBound is the bound of a client session's relay in these tests.
const relayBound = 1 << 20

// startRelayGateway starts a gateway for srv whose relays hold
// relayBound bytes each, and records its reports of dropped
// notifications.
func startRelayGateway(t *testing.T, srv Server) (*Gateway, string, *dropReports) {
	d := &dropReports{}
	g, url := startGateway(t, []Server{srv}, &Options{relayBytes: relayBound, Logger: slog.New(dropHandler{quietLogger(t).Handler(), d})})
	return g, url, d
}

// relayHeld returns the bytes and notifications the relay of ss holds.
func relayHeld(g *Gateway, ss *mcp.ServerSession) (bytes, n int) {
	g.relays.mu.Lock()
	defer g.relays.mu.Unlock()
	if r := g.relays.by[ss]; r != nil {
		return r.bytes, len(r.q)
	}
	return 0, 0
}

// reportedDrops waits for the reports of the log messages alice's relay
// dropped (one each time her relay emptied: while the sockets to her
// still took messages, it may have emptied more than once), and returns
// their number; a report that names none fails the test.
func reportedDrops(t *testing.T, d *dropReports, session string) int {
	t.Helper()
	return reportedCount(t, d, session, "log_messages", true)
}

// reportedCount waits for the reports of session's relay and returns the
// sum of their counts under key; with each, a report whose count is not
// positive fails the test.
func reportedCount(t *testing.T, d *dropReports, session, key string, each bool) int {
	t.Helper()
	waitUntil(t, "the report of the session's dropped notifications", func() bool { return len(d.of(session)) > 0 })
	time.Sleep(100 * time.Millisecond) // a report of the last drain would come now
	total := 0
	for _, rep := range d.of(session) {
		n, _ := rep[key].(int64)
		if each && n <= 0 {
			t.Fatalf("a report says %v %s were dropped", rep[key], key)
		}
		total += int(n)
	}
	return total
}

// TestRelayUnreadStreamHoldsNoOneElse: alice's client does not read its
// stream while her call's handshake-era server floods log messages (more
// than the sockets and her relay hold); her call's answer comes, and her
// call leaves the server's connection. Bob's calls then run on that same
// connection while alice still does not read: each returns with its own
// log messages on its stream before its answer, in the order the server
// sent them. Alice's relay holds no more than its bound meanwhile; once
// she reads, she gets every log message her relay did not drop, and the
// gateway's log says once how many it dropped. A go-sdk server over stdio
// and over streamable HTTP; go-sdk clients.
func TestRelayUnreadStreamHoldsNoOneElse(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, drops := startRelayGateway(t, srv)
			ctx := testCtx(t, 120*time.Second)
			tap := &wireTap{base: http.DefaultTransport, read: map[string]*bytes.Buffer{}}
			bob := connectReader(t, ctx, url, "bob", tap, nil)
			const logs = 64
			alice := startFloodedAlice(t, ctx, g, url, logs)

			// Bob's calls, one after the other, each with log messages
			// sent before its answer, while alice does not read.
			const bobCalls, bobLogs = 5, 3
			good := 0
			var took []time.Duration
			for i := range bobCalls {
				text := fmt.Sprintf("bob-%d", i)
				start := time.Now()
				res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "notify",
					Arguments: testserver.NotifyIn{Text: text, Log: true, Logs: bobLogs}})
				took = append(took, time.Since(start))
				if err != nil || texts(res) != text {
					t.Fatalf("bob's call %d: %v %q", i, err, texts(res))
				}
				if problem := logsBeforeAnswer(tap.stream(text), text, bobLogs); problem != "" {
					t.Errorf("bob's call %d: %s", i, problem)
					continue
				}
				good++
			}
			held, n := relayHeld(g, alice.ss)
			select {
			case err := <-alice.done:
				t.Fatalf("alice's call returned (%v) before bob's calls ended: she read her stream", err)
			default:
			}
			t.Logf("%s: bob's calls with alice not reading: %v", name, took)
			if good != bobCalls {
				t.Errorf("%d of bob's %d calls returned with their log messages before their answers while alice did not read", good, bobCalls)
			}
			if held > relayBound || n == 0 {
				t.Errorf("alice's relay holds %d log messages, %d bytes, while she does not read; its bound is %d bytes", n, held, relayBound)
			}

			close(alice.stall.open)
			awaitCalls(t, ctx, "alice's call", alice.done)
			dropped := reportedDrops(t, drops, alice.ss.ID())
			waitHeard(func() int64 { return alice.heard.Load() + int64(dropped) }, logs)
			if heard := alice.heard.Load(); heard+int64(dropped) != logs {
				t.Errorf("alice heard %d of her %d log messages, and %d were reported dropped", heard, logs, dropped)
			}
		})
	}
}

// TestRelayEndsWithSession: alice ends her session while her relay is
// full (she never read her stream): its writer ends, the relay is gone,
// what it dropped is reported, and no goroutine is left behind. A go-sdk
// server over stdio and over streamable HTTP.
func TestRelayEndsWithSession(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, drops := startRelayGateway(t, srv)
			ctx := testCtx(t, 120*time.Second)
			// Warm up the gateway's connection to the server with a call
			// of another client: it is not alice's.
			tr := http.DefaultTransport.(*http.Transport).Clone()
			carol, err := mcp.NewClient(&mcp.Implementation{Name: "carol", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}},
				&mcp.ClientSessionOptions{ProtocolVersion: v1125})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := carol.CallTool(ctx, &mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: "carol", Log: true}}); err != nil {
				t.Fatal(err)
			}
			_ = carol.Close()
			tr.CloseIdleConnections()
			time.Sleep(200 * time.Millisecond) // carol's goroutines end
			base := runtime.NumGoroutine()

			alice := startFloodedAlice(t, ctx, g, url, 64)
			id := alice.cs.ID()
			alice.leave()
			waitUntil(t, "alice's relay gone", func() bool {
				relays, writers, _ := relayCounts(g)
				return relays == 0 && writers == 0
			})
			reportedDrops(t, drops, id)
			alice.tr.CloseIdleConnections()
			if n := settleGoroutines(base + 4); n > base+4 {
				buf := make([]byte, 1<<20)
				t.Fatalf("%s: %d goroutines after alice's session ended, %d before she came:\n%s", name, n, base, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// logsBeforeAnswer checks that stream, the wire of a call's answer,
// holds the n log messages "text 0" ... of the call, in order, before its
// answer; it says what is wrong, or "".
func logsBeforeAnswer(stream, text string, n int) string {
	answer := strings.Index(stream, `"result"`)
	if answer < 0 {
		return "no answer on its stream"
	}
	last := -1
	for j := range n {
		at := strings.Index(stream, `"data":"`+text+" "+fmt.Sprint(j)+`"`)
		switch {
		case at < 0:
			return fmt.Sprintf("log message %d not on its stream", j)
		case at > answer:
			return fmt.Sprintf("log message %d after its answer", j)
		case at < last:
			return fmt.Sprintf("log message %d before the one sent ahead of it", j)
		}
		last = at
	}
	return ""
}

// TestRelayOverflow: a full relay drops a log message; a progress report
// replaces the oldest report of the same request still queued (the newer
// one goes last), or is dropped when there is none; the bytes of all the
// relays together bound each; an empty relay takes a notification larger
// than its bound while the total has room for it, and a relay holding
// little takes a small one whatever the total.
func TestRelayOverflow(t *testing.T) {
	rs := newRelays(context.Background(), quietLogger(t), &Options{relayMessages: 3, relayBytes: 4 * relayItemBytes})
	rs.maxTotal = 5 * relayItemBytes
	rs.small = relayItemBytes
	a, b := &origin{key: "a"}, &origin{key: "b"}
	logOf := func(o *origin, s string) relayItem {
		return relayItem{o: o, log: &mcp.LoggingMessageParams{Data: s}, size: relayItemBytes}
	}
	progOf := func(o *origin, s string) relayItem {
		return relayItem{o: o, prog: &mcp.ProgressNotificationParams{Message: s}, size: relayItemBytes}
	}
	held := func(r *relay) string {
		var out []string
		for _, it := range r.q {
			if it.log != nil {
				out = append(out, fmt.Sprint(it.log.Data))
			} else {
				out = append(out, it.prog.Message)
			}
		}
		return strings.Join(out, " ")
	}
	r := &relay{next: 1}
	for _, it := range []relayItem{progOf(a, "pa1"), logOf(a, "l1"), progOf(b, "pb1"),
		logOf(a, "l2"), progOf(a, "pa2"), progOf(a, "pa3"), progOf(b, "pb2")} {
		rs.add(r, it)
	}
	if got, want := held(r), "l1 pa3 pb2"; got != want {
		t.Errorf("the full relay holds %q, want %q", got, want)
	}
	if r.droppedLogs != 1 || r.droppedProgress != 3 {
		t.Errorf("dropped %d log messages and %d progress reports, want 1 and 3", r.droppedLogs, r.droppedProgress)
	}
	for i := 1; i < len(r.q); i++ {
		if r.q[i-1].seq >= r.q[i].seq {
			t.Errorf("the relay's notifications are out of order: %d before %d", r.q[i-1].seq, r.q[i].seq)
		}
	}

	// The relays together: another relay takes what fits in the total.
	other := &relay{next: 1}
	rs.add(other, logOf(b, "m1"))
	rs.add(other, logOf(b, "m2"))
	rs.add(other, logOf(b, "m3")) // past the total
	if got := held(other); got != "m1 m2" || rs.total != 5*relayItemBytes {
		t.Errorf("the second relay holds %q, all %d bytes", got, rs.total)
	}
	// The total is full: an empty relay refuses a notification larger
	// than its bound, and takes a small one.
	big := &relay{next: 1}
	rs.add(big, relayItem{o: a, log: &mcp.LoggingMessageParams{Data: "big"}, size: 100 * relayItemBytes})
	if len(big.q) != 0 {
		t.Error("an empty relay took a notification larger than its bound past the total")
	}
	rs.add(big, logOf(a, "small"))
	if len(big.q) != 1 {
		t.Error("a relay holding nothing refused a small notification when the total is full")
	}
	// With room in the total, an empty relay takes one larger than its bound.
	rs.maxTotal = 200 * relayItemBytes
	bigger := &relay{next: 1}
	rs.add(bigger, relayItem{o: a, log: &mcp.LoggingMessageParams{Data: "big"}, size: 100 * relayItemBytes})
	if len(bigger.q) != 1 {
		t.Error("an empty relay refused a notification larger than its bound while the total has room")
	}
}

// TestRelayReplaceWithinBounds: a progress report that replaces the one
// queued in a relay writing another fits where it would be queued: past
// the relay's bound only into an empty queue while the total has room,
// never past the total (unless the relay then holds under the floor).
// Log messages count their level and _meta.
func TestRelayReplaceWithinBounds(t *testing.T) {
	rs := newRelays(context.Background(), quietLogger(t), &Options{relayMessages: 8, relayBytes: 4 * relayItemBytes})
	rs.maxTotal = 10 * relayItemBytes
	rs.small = relayItemBytes
	a := &origin{key: "a"}
	progOf := func(s string, size int) relayItem {
		return relayItem{o: a, prog: &mcp.ProgressNotificationParams{Message: s}, size: size}
	}
	r := &relay{next: 1}
	rs.add(r, progOf("w", 3*relayItemBytes)) // the one being written
	r.q, r.writing = r.q[1:], 1
	rs.add(r, progOf("p1", 3*relayItemBytes)) // an empty queue takes it
	rs.add(r, progOf("p2", 3*relayItemBytes)) // replaces p1
	if len(r.q) != 1 || r.q[0].prog.Message != "p2" {
		t.Fatalf("the relay holds %d, want p2", len(r.q))
	}
	rs.add(r, progOf("huge", 20*relayItemBytes)) // past the total
	if r.q[0].prog.Message != "p2" || rs.total > rs.maxTotal || r.droppedProgress != 2 {
		t.Errorf("a report past the total replaced p2: the relay holds %q, %d bytes of %d", r.q[0].prog.Message, rs.total, rs.maxTotal)
	}
	rs.add(r, progOf("p3", 7*relayItemBytes)) // fits the total once p2 is out
	if r.q[0].prog.Message != "p3" || rs.total != 10*relayItemBytes {
		t.Errorf("the relay holds %q, %d bytes", r.q[0].prog.Message, rs.total)
	}

	// A log message counts its level and _meta, and keeps them.
	lp := &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(strings.Repeat("l", 5000)), Data: "d", Logger: "up",
		Meta: mcp.Meta{"pad": strings.Repeat("x", 5000)}}
	wire, err := json.Marshal(lp)
	if err != nil {
		t.Fatal(err)
	}
	q, size, err := heldLog(lp)
	if err != nil {
		t.Fatal(err)
	}
	held, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	if size < len(wire) || string(held) != string(wire) {
		t.Errorf("a log message of %d bytes on the wire counts %d, and is held as %d bytes of JSON", len(wire), size, len(held))
	}
}
