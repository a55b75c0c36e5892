package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayPinned returns the bytes of the notifications the relays hold:
// those queued and those being written (a writer blocked on a client
// that does not read holds its notification too), each counted as
// written, of size bytes when its size is not known.
func relayPinned(g *Gateway, size int) (pinned, writing int) {
	g.relays.mu.Lock()
	defer g.relays.mu.Unlock()
	for _, r := range g.relays.by {
		for _, it := range r.q {
			pinned += it.size
		}
		if r.writing != 0 {
			pinned += size
			writing++
		}
	}
	return pinned, writing
}

// TestRelayMemoryBoundUnreadSessions: a hostile client opens several
// sessions that do not read their streams, and each calls a tool whose
// handshake-era server logs messages larger than a session's relay holds.
// What the relays hold together, queued or being written, stays within
// the bound of all the relays; another client's small log messages still
// reach it, before its answers. A go-sdk server over stdio and over
// streamable HTTP; go-sdk clients.
func TestRelayMemoryBoundUnreadSessions(t *testing.T) {
	const (
		sessions = 4
		logs     = 24               // per call: more than the sockets to a client hold
		pad      = relayBound       // each log message's size, more than a relay holds
		total    = 3*relayBound + 1 // the bound of all the relays together here
	)
	for name, srv := range notifyBackends(t) {
		t.Run(name, func(t *testing.T) {
			g, url, drops := startRelayGateway(t, srv) // each message is larger than a relay's bound
			setRelayTotal(g, total)
			ctx := testCtx(t, 240*time.Second)
			u := g.servers()[0]
			var flooded []*floodedAlice
			for i := range sessions {
				a := startFlooded(t, ctx, g, url, drops, fmt.Sprintf("alice%d", i), logs, pad)
				flooded = append(flooded, a)
				waitUntil(t, "her call left the server's connection", u.lane.idle)
			}
			// Every relay has dropped a message: each is as full as it gets.
			pinned, writing := relayPinned(g, pad)
			t.Logf("%s: the relays of %d sessions that do not read hold %d bytes (%d notifications being written); their bound is %d",
				name, sessions, pinned, writing, total)
			if pinned > total {
				t.Errorf("the relays hold %d bytes of log messages (%d being written), past their bound of %d", pinned, writing, total)
			}

			// Bob reads: his small log messages reach him before his
			// answers while the relays of the others are full.
			tap := &wireTap{base: http.DefaultTransport, read: map[string]*bytes.Buffer{}}
			bob := connectReader(t, ctx, url, "bob", tap, nil)
			for i := range 5 {
				text := fmt.Sprintf("bob-%d", i)
				res, err := bob.CallTool(ctx, &mcp.CallToolParams{Name: "notify",
					Arguments: testserver.NotifyIn{Text: text, Log: true, Logs: 3}})
				if err != nil || texts(res) != text {
					t.Fatalf("bob's call %d: %v %q", i, err, texts(res))
				}
				if problem := logsBeforeAnswer(tap.stream(text), text, 3); problem != "" {
					t.Errorf("bob's call %d with the relays full: %s", i, problem)
				}
			}
			for _, a := range flooded {
				a.leave()
			}
			waitUntil(t, "the relays gone", func() bool {
				relays, writers, total := relayCounts(g)
				return relays == 0 && writers == 0 && total == 0
			})
		})
	}
}
