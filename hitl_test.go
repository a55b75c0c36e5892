package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/toolcall"
)

// The proofs of the human in the loop: a scripted user (hitltest.User)
// answers the questions of servers of both protocol eras
// (hitltest.Server: one, two or many questions per call), and each test
// checks that what the server received is what the user answered,
// question by question (hitltest.Match).

var hitlEras = []testserver.Era{testserver.Legacy, testserver.Modern}

// hitlTools returns the tools of an interrupt-mode adapter of target.
func hitlTools(t *testing.T, target any, opts *mcpadapter.Options) map[string]*mcpadapter.Tool {
	t.Helper()
	if opts == nil {
		opts = &mcpadapter.Options{}
	}
	opts.Elicitation = mcpadapter.ElicitInterrupt
	a, err := mcpadapter.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return toolMap(t, testCtx(t), a)
}

type hitlCall struct{ name, args string }

func askArgs(call string, n int) string { return fmt.Sprintf(`{"call":%q,"n":%d}`, call, n) }

// runTurn runs calls as one model turn, then resumes the turn with the
// user's answers until no call waits; it returns the results by call.
func runTurn(t *testing.T, ctx context.Context, tools map[string]*mcpadapter.Tool, calls []hitlCall, u *hitltest.User) []toolcall.Outcome[hitlCall] {
	t.Helper()
	outs := toolcall.RunTurn(ctx, calls, 8, func(ctx context.Context, c hitlCall) (*mcpadapter.Result, error) {
		return tools[c.name].Call(ctx, json.RawMessage(c.args))
	})
	for round := 0; toolcall.Waiting(outs); round++ {
		if round > 50 {
			t.Fatal("the turn never finished")
		}
		answers := map[string]*elicitation.Resume{}
		asks := 0
		for _, o := range outs {
			if o.Pending.Asks() {
				asks++
				answers[o.Pending.ID] = u.Answer(o.Pending.Interrupt())
			}
		}
		if asks == 0 {
			t.Fatalf("round %d: the turn stopped with no question to answer: %+v", round, outs)
		}
		outs = toolcall.ResumeTurn(ctx, outs, answers, func(ctx context.Context, c hitlCall, p *mcpadapter.PendingCall, a *elicitation.Resume) (*mcpadapter.Result, error) {
			return tools[c.name].Resume(ctx, p, a)
		})
	}
	for _, o := range outs {
		if o.Err != nil {
			t.Fatalf("%s %s: %v", o.Call.name, o.Call.args, o.Err)
		}
	}
	return outs
}

// TestHITLEveryAnswerToItsQuestion: several calls per turn, in every
// order, each asking one, two or many questions, against servers of both
// eras; the user answers each question once (the turn's answers go in at
// once, in no set order). The server receives exactly the user's answer
// to each question, each call runs once, and no stop of the turn lacks a
// question.
func TestHITLEveryAnswerToItsQuestion(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		for _, n := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("%s/%d", era, n), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				srv := hitltest.NewServer(era)
				tools := hitlTools(t, srv.Server, nil)
				u := &hitltest.User{Decide: func(r elicitation.Request) elicitation.Response {
					// Decline every third question; accept the others.
					if strings.HasSuffix(r.Message, fmt.Sprintf("q3/%d", n)) {
						return elicitation.Response{Action: elicitation.Decline}
					}
					return elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"ok": true, "note": r.Message, "amount": len(r.Message)}}
				}}
				orders := [][]hitlCall{
					{{"echo", `{"text":"first"}`}, {"ask", askArgs("a", n)}, {"ask", askArgs("b", n)}},
					{{"ask", askArgs("c", n)}, {"echo", `{"text":"between"}`}, {"ask", askArgs("d", n)}},
					{{"ask", askArgs("e", n)}, {"ask", askArgs("f", n)}, {"echo", `{"text":"last"}`}},
				}
				for _, calls := range orders {
					outs := runTurn(t, ctx, tools, calls, u)
					for i, o := range outs {
						var in hitltest.AskIn
						_ = json.Unmarshal([]byte(calls[i].args), &in)
						switch {
						case calls[i].name == "echo":
							if !strings.Contains(calls[i].args, o.Result.Text()) || o.Result.Text() == "" {
								t.Errorf("echo %s: %q", calls[i].args, o.Result.Text())
							}
						case o.Result.Text() != in.Call+" done":
							t.Errorf("call %s: %q", in.Call, o.Result.Text())
						case srv.Started(in.Call) != 1:
							t.Errorf("call %s started %d times", in.Call, srv.Started(in.Call))
						}
					}
				}
				hitltest.Match(t, u, srv)
			})
		}
	}
}

// TestHITLManyQuestionsInOneRound: a 2026-07-28 server asking several
// questions in one round gets each answer under its own key.
func TestHITLManyQuestionsInOneRound(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Modern)
	tools := hitlTools(t, srv.Server, nil)
	u := &hitltest.User{}
	outs := runTurn(t, ctx, tools, []hitlCall{{"ask", `{"call":"g","n":4,"together":true}`}, {"ask", `{"call":"h","n":3,"together":true}`}}, u)
	if outs[0].Result.Text() != "g done" || outs[1].Result.Text() != "h done" {
		t.Errorf("results %q %q", outs[0].Result.Text(), outs[1].Result.Text())
	}
	if len(u.Answered()) != 7 {
		t.Errorf("the user answered %d questions, want 7", len(u.Answered()))
	}
	hitltest.Match(t, u, srv)
}

// TestHITLDoubleSubmit: the same answer sent twice at once (a double
// click), or again later (a retried request, an old checkpoint), or a
// stale answer to round 1 after round 2 was asked: one resume wins, the
// other is refused with an *AnsweredError that tells which answer won and
// what the call did since, and nothing more reaches the server.
func TestHITLDoubleSubmit(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			ask := hitlTools(t, srv.Server, nil)["ask"]
			u := &hitltest.User{}
			res, err := ask.Call(ctx, json.RawMessage(askArgs("transfer", 2)))
			p1 := mustInterrupt(t, res, err)
			if p1.Requests[0].Message != hitltest.Question("transfer", 1, 2) || p1.ID == "" {
				t.Fatalf("question 1: %+v", p1)
			}
			// Two resumes of question 1 at once (a double click).
			accept := u.Answer(p1.Interrupt())
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() { _, errs[i] = ask.Resume(ctx, p1, accept) })
			}
			wg.Wait()
			var ir *mcpadapter.InputRequiredError
			var ae *mcpadapter.AnsweredError
			var p2 *mcpadapter.PendingCall
			if !(errors.As(errs[0], &ir) && errors.As(errs[1], &ae)) && !(errors.As(errs[1], &ir) && errors.As(errs[0], &ae)) {
				t.Fatalf("two resumes at once: %v and %v; want one interrupt (question 2) and one *AnsweredError", errs[0], errs[1])
			}
			if ae.Action != elicitation.Accept || ae.Round != 1 {
				t.Errorf("the loser is told %v", ae)
			}
			p2 = ir.Pending
			if p2.Requests[0].Message != hitltest.Question("transfer", 2, 2) || p2.ID == p1.ID || p2.Round != 2 {
				t.Fatalf("question 2: %+v", p2)
			}
			// The same resume of question 1 again, after question 2 was asked.
			_, err = ask.Resume(ctx, p1, accept)
			if !errors.As(err, &ae) || ae.Round != 1 || !strings.Contains(ae.Error(), "asked question 2") {
				t.Fatalf("replayed answer to question 1: %v", err)
			}
			if got := srv.Received()[hitltest.Question("transfer", 2, 2)]; len(got) != 0 {
				t.Fatalf("the replayed answer reached question 2: %+v", got)
			}
			// Question 2 is still open: its own answer goes through.
			res, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
			if err != nil || res.Text() != "transfer done" {
				t.Fatalf("question 2: %v %+v", err, res)
			}
			// Once the call is done, a retry is told so, never "abandoned".
			_, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
			if !errors.As(err, &ae) || ae.Now != "completed" || ae.Action != elicitation.Accept || strings.Contains(err.Error(), "abandon") {
				t.Fatalf("retry after the call completed: %v", err)
			}
			if srv.Started("transfer") != 1 {
				t.Errorf("the tool started %d times", srv.Started("transfer"))
			}
			hitltest.Match(t, u, srv)
		})
	}
}
