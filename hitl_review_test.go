package mcpadapter_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestHITLSessionLostBeforeTheCall: a handshake-era HTTP server lost the
// session (it restarted, or expired it) before a call; the call is sent
// again on a new session, where the server asks its question. The
// question reaches the user: the server never gets a "decline" the user
// did not give.
func TestHITLSessionLostBeforeTheCall(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Legacy)
	hs := testserver.StartStreamable(t, srv.Server)
	tools := hitlTools(t, hs.URL, nil)
	if res, err := tools["echo"].Call(ctx, json.RawMessage(`{"text":"hello"}`)); err != nil || res.Text() != "hello" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	hs.ExpireSessions()
	res, err := tools["ask"].Call(ctx, json.RawMessage(askArgs("lost", 1)))
	if err == nil {
		t.Fatalf("the call ended without asking the user: %q; the server received %+v", res.Text(), srv.Received())
	}
	p := mustInterrupt(t, res, err)
	u := &hitltest.User{}
	res, err = tools["ask"].Resume(ctx, p, u.Answer(p.Interrupt()))
	if err != nil || res.Text() != "lost done" {
		t.Fatalf("resume: %v %+v", err, res)
	}
	hitltest.Match(t, u, srv)
}
