package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestLogAttributionUnreadStreamFeature: alice's client does not read her
// call's stream while the handshake-era server sends her call's log
// messages (more than the sockets hold); her call returns on the
// gateway's side. Bob's resources/read, prompts/get or completion/complete
// on the same connection starts after that and returns before alice's
// client reads again: none of alice's log messages reaches bob, every one
// reaches alice once she reads, and bob gets his answer and his own log
// message. A go-sdk server over stdio and over streamable HTTP.
func TestLogAttributionUnreadStreamFeature(t *testing.T) {
	bin := testserver.Build(t)
	backends := map[string]Server{
		"stdio": {Name: "up", Target: mcpadapter.Command{Path: bin, Args: []string{"-era", "legacy", "-notify"}}},
		"http": {Name: "up", Target: testserver.StartStreamable(t,
			testserver.New(testserver.Options{Era: testserver.Legacy, Notify: true})).URL},
	}
	for name, srv := range backends {
		for method, request := range featureRequests(nil) {
			t.Run(name+"/"+method, func(t *testing.T) {
				unreadStreamFeatureCell(t, srv, request)
			})
		}
	}
}

// unreadStreamFeatureCell is one cell of
// TestLogAttributionUnreadStreamFeature: bob's request is made with
// request.
func unreadStreamFeatureCell(t *testing.T, srv Server, request func(context.Context, *mcp.ClientSession, string) (string, error)) {
	// Room in alice's relay for all her messages (16 MiB): what happens
	// past its bound is TestRelayUnreadStreamHoldsNoOneElse's.
	g, url := startGateway(t, []Server{srv}, &Options{relayBytes: 32 << 20})
	u := g.servers()[0]
	ctx := testCtx(t, 60*time.Second)

	var aliceHeard, bobHeardAlice atomic.Int64
	var mu sync.Mutex
	var bobHeard []string
	stall := &stalledCalls{open: make(chan struct{})}
	ac := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			aliceHeard.Add(1)
		},
	})
	alice, err := ac.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: stall}},
		&mcp.ClientSessionOptions{ProtocolVersion: v1125})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob := connect(t, url, v1125, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data := fmt.Sprint(r.Params.Data)
			if strings.HasPrefix(data, "alice") {
				bobHeardAlice.Add(1)
				return
			}
			mu.Lock()
			bobHeard = append(bobHeard, data)
			mu.Unlock()
		},
	})
	for _, cs := range []*mcp.ClientSession{alice, bob} {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}

	const logs = 64 // of 256 KiB: more than the sockets between the gateway and alice hold
	aliceDone := make(chan error, 1)
	go func() {
		_, err := alice.CallTool(ctx, &mcp.CallToolParams{Name: "notify",
			Arguments: testserver.NotifyIn{Text: "alice", Log: true, Logs: logs, Pad: 256 << 10}})
		aliceDone <- err
	}()
	waitUntil(t, "alice's call in flight", func() bool { return !u.lane.idle() })
	waitUntil(t, "alice's call returned on the gateway's side", u.lane.idle)

	bobDone := make(chan error, 1)
	go func() {
		got, err := request(ctx, bob, "bob-secret")
		if err == nil && got != "bob-secret" {
			err = fmt.Errorf("bob's answer %q", got)
		}
		bobDone <- err
	}()
	// Bob's request returns while alice's client still does not read:
	// her messages wait in her session's relay, not in the connection's.
	select {
	case err := <-bobDone:
		if err != nil {
			t.Errorf("bob's request: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("bob's request did not return while alice's client did not read")
	}
	close(stall.open)
	select {
	case err := <-aliceDone:
		if err != nil {
			t.Errorf("alice's call: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("alice's call did not return")
	}
	if n := bobHeardAlice.Load(); n != 0 {
		t.Errorf("bob received %d of alice's %d log messages", n, logs)
	}
	for deadline := time.Now().Add(10 * time.Second); aliceHeard.Load() < logs && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := aliceHeard.Load(); n != logs {
		t.Errorf("alice heard %d of her %d log messages", n, logs)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(bobHeard)
		mu.Unlock()
		if n > 0 {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bobHeard) != 1 || bobHeard[0] != "bob-secret" {
		t.Errorf("bob heard %q of his own log messages; want [bob-secret]", bobHeard)
	}
}
