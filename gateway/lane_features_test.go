package gateway

//lint:file-ignore SA1019 logging lives in the handshake era, which these clients and servers speak too

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	for name, srv := range notifyBackends(t) {
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
	ctx := testCtx(t, 60*time.Second)

	var bobHeardAlice atomic.Int64
	var mu sync.Mutex
	var bobHeard []string
	alice := connectUnread(t, ctx, g, url, "alice")
	bob := connectReader(t, ctx, url, "bob", nil, &mcp.ClientOptions{
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
	const logs = 64
	alice.call(t, g, aliceLogs(logs))

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
	awaitCalls(t, ctx, "bob's request (while alice's client did not read)", bobDone)
	close(alice.stall.open)
	awaitCalls(t, ctx, "alice's call", alice.done)
	if n := bobHeardAlice.Load(); n != 0 {
		t.Errorf("bob received %d of alice's %d log messages", n, logs)
	}
	waitHeard(alice.all.Load, logs)
	if n := alice.all.Load(); n != logs {
		t.Errorf("alice heard %d of her %d log messages", n, logs)
	}
	waitHeard(func() int64 {
		mu.Lock()
		defer mu.Unlock()
		return int64(len(bobHeard))
	}, 1)
	mu.Lock()
	defer mu.Unlock()
	if len(bobHeard) != 1 || bobHeard[0] != "bob-secret" {
		t.Errorf("bob heard %q of his own log messages; want [bob-secret]", bobHeard)
	}
}
