package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
)

// TestParkedQuestionHoldsItsConnection: with room for one principal's
// connection, alice's call waits for her answer (parked, ElicitInterrupt)
// when bob calls: bob is refused (MaxSessions) rather than closing her
// connection under her question; her answer then reaches the server, and
// bob's next call is made on a connection of his own.
func TestParkedQuestionHoldsItsConnection(t *testing.T) {
	c, srv := perUserClient(t, false, &mcpadapter.ClientOptions{MaxSessions: 1})
	a, err := mcpadapter.New(c, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	actx := as(ctx, "alice")
	tools, err := a.Tools(actx)
	if err != nil {
		t.Fatal(err)
	}
	var confirm *mcpadapter.Tool
	for _, tl := range tools {
		if tl.Name == "confirm" {
			confirm = tl
		}
	}
	if confirm == nil {
		t.Fatal("no confirm tool")
	}
	_, err = confirm.Call(actx, json.RawMessage(`{}`))
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) || !ir.Pending.Asks() {
		t.Fatalf("alice's confirm: %v, want a question", err)
	}
	_, err = adapterCall(ctx, a, "bob", "whoami")
	if err == nil || !strings.Contains(err.Error(), "MaxSessions") {
		t.Errorf("bob while alice's question waits: %v, want refused naming MaxSessions", err)
	}
	q := ir.Pending.Requests[0]
	answer := &elicitation.Resume{Responses: map[string]elicitation.Response{q.Key: {Action: elicitation.Accept, Content: map[string]any{"ok": true}}}}
	res, err := confirm.Resume(actx, ir.Pending, answer)
	if err != nil || res.Text() != "alice confirmed" {
		t.Fatalf("alice's answer: %v %v", res, err)
	}
	if got, err := adapterCall(ctx, a, "bob", "whoami"); err != nil || got != "bob" {
		t.Errorf("bob once alice's call ended: %q %v", got, err)
	}
	if got, err := adapterCall(ctx, a, "alice", "whoami"); err != nil || got != "alice" {
		t.Errorf("alice after bob took the room: %q %v", got, err)
	}
	if n := srv.Sessions("alice"); n != 2 {
		t.Errorf("alice opened %d sessions, want 2 (her first closed for bob, then anew)", n)
	}
}

// adapterCall calls a's tool named tool as principal p and returns its text.
func adapterCall(ctx context.Context, a *mcpadapter.Adapter, p, tool string) (string, error) {
	pctx := as(ctx, p)
	tools, err := a.Tools(pctx)
	if err != nil {
		return "", err
	}
	for _, tl := range tools {
		if tl.Name == tool {
			res, err := tl.Call(pctx, json.RawMessage(`{}`))
			if err != nil {
				return "", err
			}
			return res.Text(), nil
		}
	}
	return "", errors.New("no tool " + tool)
}
