package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestHITLCraftedPendingOfAnotherPrincipal: bob holds a copy of alice's
// PendingCall (a checkpoint store keyed badly) and sets its Principal to
// his own. What the client remembers of alice's question is alice's: bob
// never reads the result of her call, and his resume does not use up her
// question, so her own resume is not refused as "already answered".
func TestHITLCraftedPendingOfAnotherPrincipal(t *testing.T) {
	t.Parallel()
	alice := &mcpadapter.CallIdentity{Principal: "alice"}
	bob := &mcpadapter.CallIdentity{Principal: "bob"}
	answer := func(p *mcpadapter.PendingCall) *elicitation.Resume {
		return &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"ok": true}}}}
	}
	t.Run("completed while asking", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		actx := mcpadapter.WithCallIdentity(ctx, alice)
		bctx := mcpadapter.WithCallIdentity(ctx, bob)
		srv := hostileServer(testserver.Legacy)
		release := make(chan struct{})
		asked := make(chan string, 1)
		mcp.AddTool(srv, &mcp.Tool{Name: "payslip"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			go func() {
				r, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "Email it too?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
				if err != nil {
					asked <- err.Error()
					return
				}
				asked <- r.Action
			}()
			select {
			case <-release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "alice's salary: 9000"}}}, nil, nil
		})
		tool := hitlTools(t, srv, nil)["payslip"]
		res, err := tool.Call(actx, json.RawMessage(`{}`))
		p := mustInterrupt(t, res, err)
		close(release)
		select {
		case <-asked:
		case <-ctx.Done():
			t.Fatal("the server's question never ended")
		}
		crafted := *p
		crafted.Principal = "bob"
		res, err = tool.Resume(bctx, &crafted, answer(&crafted))
		if res != nil && strings.Contains(res.Text(), "9000") || err != nil && strings.Contains(err.Error(), "9000") {
			t.Fatalf("bob read alice's result: %v %+v", err, res)
		}
		res, err = tool.Resume(actx, p, answer(p))
		if err != nil || res.Text() != "alice's salary: 9000" {
			t.Fatalf("alice's resume: %v %+v", err, res)
		}
	})
	t.Run("parked", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		actx := mcpadapter.WithCallIdentity(ctx, alice)
		bctx := mcpadapter.WithCallIdentity(ctx, bob)
		srv := hitltest.NewServer(testserver.Legacy)
		ask := hitlTools(t, srv.Server, nil)["ask"]
		res, err := ask.Call(actx, json.RawMessage(askArgs("alice", 1)))
		p := mustInterrupt(t, res, err)
		crafted := *p
		crafted.Principal = "bob"
		for _, r := range []*elicitation.Resume{answer(&crafted), nil} {
			_, err = ask.Resume(bctx, &crafted, r)
			var de *mcpadapter.ResumeDeniedError
			if !errors.As(err, &de) || de.Reason != mcpadapter.DeniedPrincipal {
				t.Fatalf("bob resumes alice's parked call (answers %v): %v", r != nil, err)
			}
		}
		if got := srv.Received(); len(got) != 0 {
			t.Fatalf("bob's answer reached alice's question: %+v", got)
		}
		res, err = ask.Resume(actx, p, answer(p))
		if err != nil || res.Text() != "alice done" {
			t.Fatalf("alice's resume: %v %+v", err, res)
		}
	})
	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		actx := mcpadapter.WithCallIdentity(ctx, alice)
		bctx := mcpadapter.WithCallIdentity(ctx, bob)
		srv := hitltest.NewServer(testserver.Modern)
		ask := hitlTools(t, srv.Server, nil)["ask"]
		res, err := ask.Call(actx, json.RawMessage(askArgs("alice", 1)))
		p := mustInterrupt(t, res, err)
		crafted := *p
		crafted.Principal = "bob"
		_, _ = ask.Resume(bctx, &crafted, answer(&crafted))
		res, err = ask.Resume(actx, p, answer(p))
		var ae *mcpadapter.AnsweredError
		if errors.As(err, &ae) {
			t.Fatalf("alice's resume is refused after bob's: %v", err)
		}
		if err != nil || res.Text() != "alice done" {
			t.Fatalf("alice's resume: %v %+v", err, res)
		}
	})
}
