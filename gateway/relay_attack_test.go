package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayHeldWire returns the bytes, as JSON on the wire, of the
// notifications queued in the relay of ss (not the one being written),
// whether one is being written, and the bytes the relay and all the
// relays count.
func relayHeldWire(t *testing.T, g *Gateway, ss *mcp.ServerSession) (wire int, writing bool, counted, total int) {
	t.Helper()
	g.relays.mu.Lock()
	defer g.relays.mu.Unlock()
	r := g.relays.by[ss]
	if r == nil {
		return 0, false, 0, g.relays.total
	}
	for _, it := range r.q {
		var b []byte
		var err error
		if it.log != nil {
			b, err = json.Marshal(it.log)
		} else {
			b, err = json.Marshal(it.prog)
		}
		if err != nil {
			t.Fatal(err)
		}
		wire += len(b)
	}
	return wire, r.writing != 0, r.bytes, g.relays.total
}

// relayAudit checks the relays' counters against what they hold: each
// relay's bytes are those of its queue, plus those of the one being
// written (only then more); the total is the sum of the relays' bytes;
// none is negative. It says what is wrong, or "".
func relayAudit(g *Gateway) string {
	g.relays.mu.Lock()
	defer g.relays.mu.Unlock()
	sum := 0
	for _, r := range g.relays.by {
		queued := 0
		for _, it := range r.q {
			queued += it.size
		}
		switch {
		case r.bytes < 0:
			return fmt.Sprintf("a relay counts %d bytes", r.bytes)
		case r.writing == 0 && r.bytes != queued:
			return fmt.Sprintf("a relay writing nothing counts %d bytes and queues %d", r.bytes, queued)
		case r.writing != 0 && r.bytes <= queued:
			return fmt.Sprintf("a relay writing one counts %d bytes and queues %d", r.bytes, queued)
		}
		sum += r.bytes
	}
	if g.relays.total != sum {
		return fmt.Sprintf("the relays' total is %d, the sum of their bytes %d", g.relays.total, sum)
	}
	return ""
}

// TestRelayCountsWholeLogMessage: a hostile handshake-era server sends
// log messages whose data is small and whose _meta is large (256 KiB
// each, more than the sockets to the client hold together) to a client
// that does not read its stream. The relay of the client's session holds
// no more than its bound of what would go on the wire. A go-sdk server
// over stdio and over streamable HTTP; go-sdk clients.
func TestRelayCountsWholeLogMessage(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, _ := startRelayGateway(t, srv)
			ctx := testCtx(t, 120*time.Second)
			const logs, metaPad = 96, 256 << 10
			a := connectUnread(t, ctx, g, url, "alice")
			a.call(t, g, &mcp.CallToolParams{Name: "notify",
				Arguments: testserver.NotifyIn{Text: "alice", Log: true, Logs: logs, MetaPad: metaPad}})
			wire, writing, counted, total := relayHeldWire(t, g, a.ss)
			if writing {
				wire += metaPad // the one being written, at least its _meta
			}
			t.Logf("%s: alice's relay holds %d bytes on the wire (one being written: %v) and counts %d; all the relays %d; its bound is %d",
				name, wire, writing, counted, total, relayBound)
			if wire > relayBound {
				t.Errorf("alice's relay holds %d bytes of log messages on the wire, past its bound of %d (it counts %d)", wire, relayBound, counted)
			}
			if wire > counted {
				t.Errorf("alice's relay counts %d bytes and holds %d on the wire", counted, wire)
			}
			if p := relayAudit(g); p != "" {
				t.Error(p)
			}

			// Bob reads: his log messages come with their _meta as the
			// server sent it.
			metas := make(chan mcp.Meta, 4)
			bob := connectReader(t, ctx, url, "bob", nil, &mcp.ClientOptions{
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					if strings.HasPrefix(fmt.Sprint(r.Params.Data), "bob") {
						metas <- r.Params.Meta
					}
				},
			})
			if _, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "notify",
				Arguments: testserver.NotifyIn{Text: "bob", Log: true, Logs: 1, MetaPad: 16}}); err != nil {
				t.Fatal(err)
			}
			select {
			case m := <-metas:
				if m["pad"] != strings.Repeat("x", 16) {
					t.Errorf("bob's log message came with _meta %v", m)
				}
			case <-ctx.Done():
				t.Fatal("bob's log message did not come")
			}
		})
	}
}

// TestRelayProgressReplacementBounded: a hostile handshake-era server
// sends progress reports of 600 KiB (more than the sockets to the client
// hold) to a client that does not read its stream, then one larger than
// the bound of all the relays. A report that replaces another keeps the
// relay within its bounds: the large one is dropped, and the relays hold
// no more than their total. A go-sdk server over stdio and over
// streamable HTTP; go-sdk clients.
func TestRelayProgressReplacementBounded(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, drops := startRelayGateway(t, srv)
			const (
				total    = 3 * relayBound
				reports  = 40
				pad      = 600 << 10
				lastPad  = 4 * relayBound // past the total
				progress = "alice"
			)
			setRelayTotal(g, total)
			ctx := testCtx(t, 120*time.Second)
			a := connectUnread(t, ctx, g, url, "alice")
			p := &mcp.CallToolParams{Name: "notify", Arguments: testserver.NotifyIn{Text: progress,
				Progress: true, Progresses: reports, Pad: pad, LastPad: lastPad}}
			p.SetProgressToken("alice-token")
			a.call(t, g, p)
			wire, writing, counted, all := relayHeldWire(t, g, a.ss)
			if writing {
				wire += pad
			}
			t.Logf("%s: alice's relay holds %d bytes on the wire (one being written: %v) and counts %d; all the relays %d; their bound %d",
				name, wire, writing, counted, all, total)
			if all > total || wire > total {
				t.Errorf("the relays count %d bytes, alice's holds %d on the wire: past their bound of %d", all, wire, total)
			}
			if p := relayAudit(g); p != "" {
				t.Error(p)
			}
			a.leave()
			waitUntil(t, "alice's relay gone", func() bool {
				relays, _, total := relayCounts(g)
				return relays == 0 && total == 0
			})
			if n := reportedCount(t, drops, a.ss.ID(), "progress_reports", false); n == 0 {
				t.Error("no progress report of alice's was reported dropped or replaced")
			}
		})
	}
}

// TestRelayAccountingUnderAttack: clients that do not read their
// streams while a server floods them with log messages (dropped when
// their relays are full) and progress reports (replaced), another
// client that leaves with its relay full, and then the gateway's Close.
// Meanwhile the relays' counters match what they hold (the total is the
// sum of each relay's bytes, none negative); when Close returns, no
// relay, writer or byte is left, and no relay's writer goroutine runs. A
// go-sdk server over stdio and over streamable HTTP; go-sdk clients.
func TestRelayAccountingUnderAttack(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, _ := startRelayGateway(t, srv)
			setRelayTotal(g, 3*relayBound)
			ctx := testCtx(t, 120*time.Second)

			audit := startRelayAuditor(g)
			defer audit()

			var clients []*floodedAlice
			for i := range 3 {
				who := fmt.Sprintf("alice%d", i)
				a := connectUnread(t, ctx, g, url, who)
				clients = append(clients, a)
				in := testserver.NotifyIn{Text: who, Log: true, Logs: 24, Pad: 256 << 10} // dropped
				if i == 1 {
					in = testserver.NotifyIn{Text: who, Progress: true, Progresses: 40, Pad: 600 << 10} // replaced
				}
				p := &mcp.CallToolParams{Name: "notify", Arguments: in}
				p.SetProgressToken(who)
				a.call(t, g, p)
			}
			g.relays.mu.Lock()
			seen := g.relays.dropsSeen
			g.relays.mu.Unlock()
			if seen == 0 {
				t.Error("the relays dropped nothing: the clients read")
			}

			// One leaves with its relay full; its relay goes.
			clients[0].leave()
			waitUntil(t, "alice0's relay gone", func() bool {
				g.relays.mu.Lock()
				defer g.relays.mu.Unlock()
				return g.relays.by[clients[0].ss] == nil
			})
			closed := make(chan error, 1)
			go func() { closed <- g.Close() }()
			select {
			case <-closed:
			case <-ctx.Done():
				t.Fatal("Close did not return")
			}
			by, writers, total := relayCounts(g)
			problems, samples := audit()
			t.Logf("%s: %d samples of the counters; after Close: %d relays, %d writers, %d bytes", name, samples, by, writers, total)
			if by != 0 || writers != 0 || total != 0 {
				t.Errorf("after Close the relays hold %d bytes in %d relays, %d writers running", total, by, writers)
			}
			buf := make([]byte, 4<<20)
			if st := string(buf[:runtime.Stack(buf, true)]); strings.Contains(st, "(*relays).run") {
				t.Errorf("a relay's writer runs after Close:\n%s", st)
			}
			for i, p := range problems {
				if i == 5 {
					t.Errorf("... %d problems in all", len(problems))
					break
				}
				t.Error(p)
			}
		})
	}
}

// startRelayAuditor checks the relays' counters of g (relayAudit) every
// millisecond until the function it returns is called; that function
// returns what was wrong and the number of checks (later calls: nil, 0).
func startRelayAuditor(g *Gateway) func() ([]string, int) {
	var problems []string
	samples := 0
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if p := relayAudit(g); p != "" {
				problems = append(problems, p)
			}
			samples++
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() ([]string, int) {
		var out []string
		n := 0
		once.Do(func() {
			close(stop)
			<-done
			out, n = problems, samples
		})
		return out, n
	}
}
