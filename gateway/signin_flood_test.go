package gateway_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/gateway"
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

// TestSignInMidCallHoldsNoLimitSlot: a call waiting for its user's
// sign-in holds no slot of a concurrency cap shared among principals
// (Limits: one call of "up" at a time). mallory's call accepts and waits,
// and alice's call, asked in turn, signs in and runs; once mallory signs
// in her call takes the slot again and runs too, each call once.
func TestSignInMidCallHoldsNoLimitSlot(t *testing.T) {
	e := startSignIn(t, func(o *gateway.Options) {
		o.Limits = &gateway.Limits{Rules: []gateway.LimitRule{{Name: "up-cap", Server: "up", Concurrent: 1}}}
	})
	ctx := ctxFor(t, 60*time.Second)
	links := make(chan string, 1)
	mallory := e.urlClient(t, ctx, e.token(t, "mallory"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		links <- q.URL
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	ended := make(chan error, 1)
	go func() {
		_, err := whoamiText(ctx, mallory.cs)
		ended <- err
	}()
	var link string
	select {
	case link = <-links:
	case <-time.After(10 * time.Second):
		t.Fatal("mallory was not asked")
	}
	alice := e.urlClient(t, ctx, e.token(t, "alice"), func(_ context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		if err := newBrowser(t, "alice").signInAt(q.URL); err != nil {
			return nil, err
		}
		return &mcp.ElicitResult{Action: "accept"}, nil
	})
	got, err := whoamiText(ctx, alice.cs)
	if err != nil || e.userOfUp(t, got) != "alice" {
		t.Fatalf("alice's call while mallory's waits for her sign-in: %v", err)
	}
	newBrowser(t, "mallory").signIn(t, link)
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("mallory's call after her sign-in: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mallory's call did not run after her sign-in")
	}
	if e.callsOf("alice") != 1 || e.callsOf("mallory") != 1 {
		t.Fatalf("calls: alice %d, mallory %d", e.callsOf("alice"), e.callsOf("mallory"))
	}
}
