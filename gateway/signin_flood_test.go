package gateway_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitsPerPrincipal is the gateway's bound on one principal's sign-in
// questions under way (signin_wait.go's maxSignInWaitsPerPrincipal).
const waitsPerPrincipal = 32

// TestSignInMidCallFlood: mallory floods the gateway with calls that
// accept the question to sign in and never sign in (two sessions of 16
// calls each, MaxCallsPerSession). Her calls past her share of waits
// (32) are not asked and do not wait (each of which would read the token
// store twice a second for ten minutes): they get the -32042 question at
// once. alice, another principal, is still asked mid-call, and her call
// runs once she signed in. No call of mallory's reaches the server.
func TestSignInMidCallFlood(t *testing.T) {
	e := startSignIn(t)
	ctx := ctxFor(t, 60*time.Second)
	cctx, cancel := context.WithCancel(ctx)
	asked := make(chan struct{}, 2*waitsPerPrincipal)
	accept := func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		asked <- struct{}{}
		return &mcp.ElicitResult{Action: "accept"}, nil
	}
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	sessions := make([]*urlUser, waitsPerPrincipal/16+1)
	for i := range sessions {
		sessions[i] = e.urlClient(t, ctx, e.token(t, "mallory"), accept)
	}
	for i := range waitsPerPrincipal {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = sessions[i/16].cs.CallTool(cctx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
		}()
	}
	for range waitsPerPrincipal {
		select {
		case <-asked:
		case <-time.After(20 * time.Second):
			t.Fatal("mallory's calls were not all asked")
		}
	}
	octx, ocancel := context.WithTimeout(ctx, 5*time.Second)
	defer ocancel()
	_, err := sessions[len(sessions)-1].cs.CallTool(octx, &mcp.CallToolParams{Name: "up_whoami", Arguments: map[string]any{}})
	signInURLError(t, err) // the -32042 question, at once
	if len(asked) != 0 {
		t.Fatalf("mallory's call past her share was asked mid-call")
	}

	alice := e.urlClient(t, ctx, e.token(t, "alice"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if err := newBrowser(t, "alice").signInAt(q.URL); err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	got, err := whoamiText(ctx, alice.cs)
	if err != nil || e.userOfUp(t, got) != "alice" || len(alice.questions()) != 1 {
		t.Fatalf("alice's call during mallory's flood: %v (asked %d)", err, len(alice.questions()))
	}
	if e.callsOf("mallory") != 0 {
		t.Fatal("a call of mallory's reached the server")
	}
}
