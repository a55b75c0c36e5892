package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/order"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLogAttributionUnreadStream: alice's client does not read her
// call's stream while the handshake-era server sends her call's log
// messages (more than the sockets hold), so the gateway's relay of them
// waits; her call's answer comes meanwhile, and her call returns on the
// gateway's side. Bob's call starts after that and is in flight when
// alice's client reads again and the rest of her log messages are
// handled: none of them reaches bob, and every one reaches alice (those
// handled after her answer on her session's own stream). Her relay
// (relay.go) holds all of her messages here; one that overflows drops
// some (TestRelayUnreadStreamHoldsNoOneElse). A go-sdk server over stdio
// and over streamable HTTP.
func TestLogAttributionUnreadStream(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url := startGateway(t, []Server{srv}, &Options{relayBytes: 32 << 20})
			u := g.servers()[0]
			ctx := testCtx(t, 60*time.Second)

			var bobHeardAlice atomic.Int64
			alice := connectUnread(t, ctx, g, url, "alice")
			bob := connectReader(t, ctx, url, "bob", nil, &mcp.ClientOptions{LoggingMessageHandler: countLogsOf("alice", &bobHeardAlice)})
			const logs = 64
			alice.call(t, g, aliceLogs(logs))

			bobDone := make(chan error, 1)
			go func() {
				res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 3000}})
				if err == nil && texts(res) != "slept 3000ms" {
					err = fmt.Errorf("bob's answer %q", texts(res))
				}
				bobDone <- err
			}()
			// Bob's call is in flight when alice reads again.
			waitUntil(t, "bob's call in flight", func() bool { return !u.lane.idle() })
			close(alice.stall.open)
			awaitCalls(t, ctx, "call", alice.done, bobDone)
			if n := bobHeardAlice.Load(); n != 0 {
				t.Errorf("bob received %d of alice's %d log messages", n, logs)
			}
			// Those handled after her answer reach her session all the same.
			waitHeard(alice.all.Load, logs)
			if n := alice.all.Load(); n != logs {
				t.Errorf("alice heard %d of her %d log messages", n, logs)
			}
		})
	}
}

// TestLaneLogAttributionTrailing: a call that left before the log
// messages read before its answer were handled keeps them (never a call
// sent after they were read); beside another client's call in flight
// since before they were read, they are no one's; once its connection's
// markers are reached, it no longer trails; a log message of another
// connection is not a call's sent on this one; past maxTrailing, the log
// messages read before the answer of the oldest are no one's.
func TestLaneLogAttributionTrailing(t *testing.T) {
	l := newLane()
	m := order.New()
	enter := func(key string) (*flight, *order.Span) {
		sp := new(order.Span)
		f := newFlight(order.WithSpan(context.Background(), sp), &origin{key: key, ctx: context.Background()})
		if !l.tryEnter(f) {
			t.Fatalf("%s's call did not start", key)
		}
		sp.Sent(m)
		return f, sp
	}
	carol, _ := enter("carol")
	alice, spA := enter("alice")
	at := m.Handling() // alice's log message, read before her answer
	marker := m.Issue()
	spA.Answered(m)
	l.leave(alice)
	bob, _ := enter("bob")
	if o := l.attributeLog("", at, order.Stream{}); o != nil {
		t.Errorf("alice's log message went to %s beside carol's call", o.key)
	}
	l.leave(carol)
	if o := l.attributeLog("", at, order.Stream{}); o == nil || o.key != "alice" {
		t.Errorf("alice's log message went to %v, want alice", o)
	}
	var p struct {
		ProgressToken any `json:"progressToken"`
	}
	if err := json.Unmarshal(marker.Params, &p); err != nil || !m.Reached(p.ProgressToken) {
		t.Fatalf("marker %s not reached: %v", marker.Params, err)
	}
	if o := l.attributeLog("", m.Handling(), order.Stream{}); o == nil || o.key != "bob" {
		t.Errorf("bob's log message went to %v, want bob", o)
	}
	if o := l.attributeLog("", order.New().Handling(), order.Stream{}); o != nil {
		t.Errorf("a log message of another connection went to %s, whose call was sent on this one", o.key)
	}
	if len(l.trailing) != 0 {
		t.Errorf("%d calls still trail after their markers were reached", len(l.trailing))
	}
	l.leave(bob)

	at = m.Handling()
	for range maxTrailing + 1 {
		f, sp := enter("dave")
		m.Issue()
		sp.Answered(m)
		l.leave(f)
	}
	if len(l.trailing) != maxTrailing {
		t.Errorf("%d calls trail, want %d", len(l.trailing), maxTrailing)
	}
	if o := l.attributeLog("", at, order.Stream{}); o != nil {
		t.Errorf("a log message read before the answer of a call that stopped trailing went to %s", o.key)
	}
}

// TestLogAttributionAfterAnswer: the handshake-era server logs once more
// after answering alice's call (a message of no call), while the relay
// of her call's log messages waits on her client, which does not read
// its stream. That message was read before bob's call was sent, so it is
// never bob's, even though it is handled while his call is in flight.
// A go-sdk server over stdio and over streamable HTTP.
func TestLogAttributionAfterAnswer(t *testing.T) {
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url := startGateway(t, []Server{srv}, nil)
			u := g.servers()[0]
			ctx := testCtx(t, 60*time.Second)

			var bobHeardAlice atomic.Int64
			alice := connectUnread(t, ctx, g, url, "alice")
			bob := connectReader(t, ctx, url, "bob", nil, &mcp.ClientOptions{LoggingMessageHandler: countLogsOf("alice", &bobHeardAlice)})
			alice.call(t, g, aliceLogsAfter())
			time.Sleep(300 * time.Millisecond) // the message after her answer is read

			bobDone := make(chan error, 1)
			go func() {
				_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
				bobDone <- err
			}()
			waitUntil(t, "bob's call in flight", func() bool { return !u.lane.idle() })
			close(alice.stall.open)
			awaitCalls(t, ctx, "call", alice.done, bobDone)
			if n := bobHeardAlice.Load(); n != 0 {
				t.Errorf("bob received %d of alice's log messages", n)
			}
		})
	}
}

// aliceLogsAfter is aliceLogs(64) whose server logs "alice after" 100
// ms after its answer: a log message of no call.
func aliceLogsAfter() *mcp.CallToolParams {
	p := aliceLogs(64)
	in := p.Arguments.(testserver.NotifyIn)
	in.LogAfter, in.AfterMS = "alice after", 100
	p.Arguments = in
	return p
}

// TestLogAttributionCallNotSent: bob's call is on the lane but not sent
// yet (it waits for the server's one call slot, held by dave's call)
// when the server's log message after alice's answer, read before
// either was sent, is handled: it is no one's, never bob's.
func TestLogAttributionCallNotSent(t *testing.T) {
	bin := testserver.Build(t)
	srv := Server{Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}}}
	g, url := startGateway(t, []Server{srv}, &Options{MaxCallsPerServer: 1})
	u := g.servers()[0]
	ctx := testCtx(t, 60*time.Second)

	var bobHeardAlice atomic.Int64
	alice := connectUnread(t, ctx, g, url, "alice")
	// Bob and dave cannot be asked: their calls run side by side.
	bob := connectReader(t, ctx, url, "bob", nil, &mcp.ClientOptions{
		Capabilities:          &mcp.ClientCapabilities{},
		LoggingMessageHandler: countLogsOf("alice", &bobHeardAlice),
	})
	dave := connectReader(t, ctx, url, "dave", nil, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	alice.call(t, g, aliceLogsAfter())
	time.Sleep(300 * time.Millisecond) // the message after her answer is read

	done := make(chan error, 2)
	go func() {
		_, err := dave.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
		done <- err
	}()
	waitUntil(t, "dave's call in flight", func() bool { return !u.lane.idle() })
	time.Sleep(100 * time.Millisecond) // dave's call holds the slot
	go func() {
		_, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 10}})
		done <- err
	}()
	waitUntil(t, "bob's call on the lane", func() bool {
		u.lane.mu.Lock()
		defer u.lane.mu.Unlock()
		return len(u.lane.flights) == 2
	})
	close(alice.stall.open)
	awaitCalls(t, ctx, "call", alice.done, done, done)
	if n := bobHeardAlice.Load(); n != 0 {
		t.Errorf("bob received %d of alice's log messages", n)
	}
}
