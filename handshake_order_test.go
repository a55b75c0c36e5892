package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// checkHandshakeOrder checks the messages one connection sent, in the
// order the server read them: before initialize, only the server/discover
// probe (and its cancellation); after it, notifications/initialized before any request (only
// notifications may come between them: the probe's cancellation, sent
// when the probe gave up, may); then at least one request.
func checkHandshakeOrder(t *testing.T, conn string, msgs []string) {
	t.Helper()
	i := slices.Index(msgs, "initialize")
	j := slices.Index(msgs, "notifications/initialized")
	isRequest := func(m string) bool { return !strings.HasPrefix(m, "notifications/") }
	switch {
	case i < 0:
		t.Errorf("%s: no initialize: %v", conn, msgs)
	case slices.ContainsFunc(msgs[:i], func(m string) bool { return m != "server/discover" && m != "notifications/cancelled" }):
		t.Errorf("%s: a message other than the server/discover probe before initialize: %v", conn, msgs)
	case j < i:
		t.Errorf("%s: no notifications/initialized after initialize: %v", conn, msgs)
	case slices.ContainsFunc(msgs[i+1:j], isRequest):
		t.Errorf("%s: a request before notifications/initialized: %v", conn, msgs)
	case !slices.ContainsFunc(msgs[j+1:], isRequest):
		t.Errorf("%s: no request after the handshake: %v", conn, msgs)
	case slices.Contains(msgs[i+1:], "initialize"):
		t.Errorf("%s: a second initialize: %v", conn, msgs)
	}
}

// stdioConnections collects the "recv PID METHOD" lines of mcptestserver
// processes run with -log-methods: the messages of each process (one
// connection each), in order.
type stdioConnections struct {
	mu    sync.Mutex
	pids  []string
	msgs  map[string][]string
	other []string
}

func (s *stdioConnections) line(_, line string) {
	rest, ok := strings.CutPrefix(line, testserver.RecvPrefix)
	pid, method, ok2 := strings.Cut(rest, " ")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !ok || !ok2 {
		s.other = append(s.other, line)
		return
	}
	if s.msgs == nil {
		s.msgs = map[string][]string{}
	}
	if _, seen := s.msgs[pid]; !seen {
		s.pids = append(s.pids, pid)
	}
	s.msgs[pid] = append(s.msgs[pid], method)
}

// check checks every connection, and that there were want of them and
// probes more processes that exited on the server/discover probe. It
// first waits (5s at most) for the processes' stderr lines to arrive:
// they are read apart from the calls' answers.
func (s *stdioConnections) check(t *testing.T, want, probes int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.mu.Lock()
		calls := 0
		for _, m := range s.msgs {
			calls += len(slices.DeleteFunc(slices.Clone(m), func(m string) bool { return m != "tools/call" }))
		}
		s.mu.Unlock()
		if calls >= 4 { // echo, crash, echo, echo
			break
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	conns, exited := 0, 0
	for _, pid := range s.pids {
		// A process that saw only the probe (and, perhaps, its
		// cancellation) exited on it or was given up on.
		if probeOnly := slices.DeleteFunc(slices.Clone(s.msgs[pid]), func(m string) bool { return m == "notifications/cancelled" }); slices.Equal(probeOnly, []string{"server/discover"}) {
			exited++
			continue
		}
		conns++
		checkHandshakeOrder(t, "process "+pid, s.msgs[pid])
	}
	if conns != want || exited != probes {
		t.Errorf("%d connections and %d processes that saw only the probe, want %d and %d: %v", conns, exited, want, probes, s.msgs)
	}
}

// TestHandshakeSendsInitializedStdio: every handshake-era stdio
// connection, including those made again after a crash and after Close,
// and those that fell back from the server/discover probe, sends
// notifications/initialized right after initialize, as the server reads
// its stdin.
func TestHandshakeSendsInitializedStdio(t *testing.T) {
	// Each test makes three connections: the first, one after a crash,
	// one after Close.
	tests := []struct {
		name   string
		flags  []string
		probes int // processes that see only the server/discover probe
		// probe bounds the wait for the probe's answer: short only where
		// no answer comes, so that a slow machine's late answer is
		// never taken for none.
		probe time.Duration
	}{
		// initialize after server/discover is refused.
		{"legacy server", []string{"-era", "legacy"}, 0, 30 * time.Second},
		// the probe got no answer: the process may have taken it late,
		// so another is started and spoken to with initialize only.
		{"discover ignored", []string{"-ignore-discover"}, 3, 300 * time.Millisecond},
		// each process exits on server/discover; another is started and
		// spoken to with initialize only.
		{"exits on discover", []string{"-era", "legacy", "-exit-on-discover"}, 3, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			var conns stdioConnections
			c, err := mcpadapter.NewClient(stdioServer(t, append(tt.flags, "-log-methods")...), &mcpadapter.ClientOptions{
				Name: "ordered", StderrHandler: conns.line, ProbeTimeout: tt.probe,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echo := func() {
				t.Helper()
				res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), nil)
				if err != nil || res.Text() != "hi" {
					t.Fatalf("echo: %v %+v", err, res)
				}
			}
			if _, err := c.Tools(ctx); err != nil {
				t.Fatal(err)
			}
			echo()
			if info, err := c.Connect(ctx); err != nil || info.Era != mcpadapter.EraHandshake {
				t.Fatalf("connect: %v %+v", err, info)
			}
			var te *mcpadapter.TransportError
			if _, err := c.CallTool(ctx, "crash", nil, nil); !errors.As(err, &te) {
				t.Fatalf("crash: %v", err)
			}
			echo() // a new process
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			echo() // and another
			conns.check(t, 3, tt.probes)
		})
	}
}

// TestHandshakeSendsInitializedHTTP: the same over streamable HTTP and
// SSE, as the HTTP server receives the requests, including the sessions
// made again after the server expired one and after Close.
func TestHandshakeSendsInitializedHTTP(t *testing.T) {
	for _, transport := range []string{"streamable", "sse"} {
		t.Run(transport, func(t *testing.T) {
			ctx := testCtx(t)
			srv := testserver.New(testserver.Options{Era: testserver.Legacy})
			var hs *testserver.HTTPServer
			if transport == "sse" {
				hs = testserver.StartSSE(t, srv)
			} else {
				hs = testserver.StartStreamable(t, srv)
			}
			c, err := mcpadapter.NewClient(hs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			echo := func() {
				t.Helper()
				res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), nil)
				if err != nil || res.Text() != "hi" {
					t.Fatalf("echo: %v %+v", err, res)
				}
			}
			echo()
			hs.ExpireSessions()
			reconnected(t, ctx, c, echo)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			echo()

			// The JSON-RPC messages of each session, in the order they
			// arrived. Streamable HTTP's initialize carries no session id
			// (its answer gives one): it belongs to the next new session.
			msgs := map[string][]string{}
			var order []string
			pending := []string(nil)
			for _, r := range hs.Requests() {
				if r.RPCMethod == "" {
					continue
				}
				if r.SessionID == "" {
					pending = append(pending, r.RPCMethod)
					continue
				}
				if _, seen := msgs[r.SessionID]; !seen {
					order = append(order, r.SessionID)
					msgs[r.SessionID] = pending
					pending = nil
				}
				msgs[r.SessionID] = append(msgs[r.SessionID], r.RPCMethod)
			}
			if len(order) != 3 {
				t.Errorf("%d sessions, want 3: %v", len(order), msgs)
			}
			for _, id := range order {
				checkHandshakeOrder(t, "session "+id, msgs[id])
			}
		})
	}
}

// reconnected calls echo until the client has noticed the expired session
// and made a new one (an SSE client may first see its stream end).
func reconnected(t *testing.T, ctx context.Context, c *mcpadapter.Client, echo func()) {
	t.Helper()
	for range 50 {
		res, err := c.CallTool(ctx, "echo", json.RawMessage(`{"text":"hi"}`), nil)
		if err == nil && res.Text() == "hi" {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	echo()
}
