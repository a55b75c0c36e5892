package toolcall_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// TestResumeTurnBadAnswer: an answer that does not fit its question (a
// typo in a form) leaves the call waiting on the same question, with the
// problem said, beside the call queued behind it: the turn stops with a
// question, and the fixed answer reaches the server.
func TestResumeTurnBadAnswer(t *testing.T) {
	for _, era := range []testserver.Era{testserver.Legacy, testserver.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			srv := hitltest.NewServer(era)
			a, err := mcpadapter.New(srv.Server, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			list, err := a.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcpadapter.Tool{}
			for _, tl := range list {
				byName[tl.Name] = tl
			}
			resume := func(ctx context.Context, c call, p *mcpadapter.PendingCall, r *elicitation.Resume) (*mcpadapter.Result, error) {
				return byName[c.Name].Resume(ctx, p, r)
			}
			outs := toolcall.RunTurn(ctx, []call{{"ask", `{"call":"typo","n":1}`}, {"echo", `{"text":"after"}`}}, 4, caller(byName))
			p := outs[0].Pending
			if !p.Asks() {
				t.Fatalf("first call: %+v", outs[0])
			}
			bad := &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Accept, Content: map[string]any{"ok": "yes"}}}}
			outs = toolcall.ResumeTurn(ctx, outs, map[string]*elicitation.Resume{p.ID: bad}, resume)
			asks := 0
			for _, o := range outs {
				if o.Pending.Asks() {
					asks++
				}
			}
			if toolcall.Waiting(outs) && asks == 0 || outs[0].Pending == nil {
				t.Fatalf("after a bad answer the turn stops with no question: %+v", outs)
			}
			if outs[0].Pending.Problem == "" {
				t.Errorf("the question is asked again without saying what was wrong")
			}
			u := &hitltest.User{}
			for range 5 {
				if !toolcall.Waiting(outs) {
					break
				}
				answers := map[string]*elicitation.Resume{}
				for _, o := range outs {
					if o.Pending.Asks() {
						answers[o.Pending.ID] = u.Answer(o.Pending.Interrupt())
					}
				}
				outs = toolcall.ResumeTurn(ctx, outs, answers, resume)
			}
			got := fmt.Sprint(outs[0].Text(), "|", outs[1].Text())
			if got != "typo done|after" {
				t.Fatalf("the turn ended with %q", got)
			}
			hitltest.Match(t, u, srv)
		})
	}
}
