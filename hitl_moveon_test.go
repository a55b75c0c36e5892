package mcpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHITLNeverAnswers: the user never answers a question and moves on.
// The next call of another run (or of no run) on the same server is not
// queued behind the question and does not wait for the park timeout
// (10 minutes here: the test's 30 s deadline would fail first); on a
// handshake-era server the question is closed, the server receives
// "cancel", and the old question's resume is refused with an
// *AnsweredError saying the user moved on.
func TestHITLNeverAnswers(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		for _, runs := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/runs=%v", era, runs), func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				srv := hitltest.NewServer(era)
				tools := hitlTools(t, srv.Server, nil)
				ctx1, ctx2 := ctx, ctx
				if runs {
					ctx1, ctx2 = mcpadapter.WithRun(ctx, "run-1"), mcpadapter.WithRun(ctx, "run-2")
				}
				res, err := tools["ask"].Call(ctx1, json.RawMessage(askArgs("charge", 1)))
				p := mustInterrupt(t, res, err)
				// The user never answers; the next run calls echo.
				res, err = tools["echo"].Call(ctx2, json.RawMessage(`{"text":"next run"}`))
				if err != nil || res.Text() != "next run" {
					t.Fatalf("a call after an unanswered question: %v %+v", err, res)
				}
				q := hitltest.Question("charge", 1, 1)
				u := &hitltest.User{}
				if era == testserver.Modern {
					// Nothing waits on a 2026-07-28 server: the question can
					// still be answered.
					res, err = tools["ask"].Resume(ctx1, p, u.Answer(p.Interrupt()))
					if err != nil || res.Text() != "charge done" {
						t.Fatalf("answering later: %v %+v", err, res)
					}
					hitltest.Match(t, u, srv)
					return
				}
				_, err = tools["ask"].Resume(ctx1, p, u.Answer(p.Interrupt()))
				u.Forget(q)
				var ae *mcpadapter.AnsweredError
				if !errors.As(err, &ae) || ae.Action != "" || !strings.Contains(ae.Closed, "moved on") {
					t.Fatalf("resuming the closed question: %v", err)
				}
				hitltest.Match(t, u, srv, q)
				if got := srv.Finished("charge"); got != "charge cancelled at q1" {
					t.Errorf("the server's call ended with %q", got)
				}
			})
		}
	}
}

// TestHITLOtherPrincipal: a principal's waiting question never makes
// another principal's call wait, and nobody resumes another principal's
// call or task.
func TestHITLOtherPrincipal(t *testing.T) {
	t.Parallel()
	alice := &mcpadapter.CallIdentity{Principal: "alice"}
	bob := &mcpadapter.CallIdentity{Principal: "bob"}
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			tools := hitlTools(t, srv.Server, nil)
			actx := mcpadapter.WithCallIdentity(mcpadapter.WithRun(ctx, "alice-run"), alice)
			bctx := mcpadapter.WithCallIdentity(mcpadapter.WithRun(ctx, "bob-run"), bob)
			res, err := tools["ask"].Call(actx, json.RawMessage(askArgs("alice", 1)))
			p := mustInterrupt(t, res, err)
			if p.Principal != "alice" {
				t.Fatalf("the pending call is for %q", p.Principal)
			}
			// Bob's call is not queued behind alice's question, nor does it
			// close it.
			res, err = tools["echo"].Call(bctx, json.RawMessage(`{"text":"bob"}`))
			var ir *mcpadapter.InputRequiredError
			if errors.As(err, &ir) {
				t.Fatalf("bob's call was queued behind alice's question: %v", err)
			}
			if era == testserver.Legacy {
				// One handshake-era connection cannot tell their questions
				// apart: bob is told at once.
				var te *mcpadapter.TransportError
				if !errors.As(err, &te) || !strings.Contains(err.Error(), "another principal") {
					t.Fatalf("bob's call beside alice's question: %v %+v", err, res)
				}
			} else if err != nil || res.Text() != "bob" {
				t.Fatalf("bob's call: %v %+v", err, res)
			}
			// Bob cannot answer alice's question.
			u := &hitltest.User{}
			_, err = tools["ask"].Resume(bctx, p, u.Answer(p.Interrupt()))
			var de *mcpadapter.ResumeDeniedError
			if !errors.As(err, &de) || de.Reason != mcpadapter.DeniedPrincipal {
				t.Fatalf("bob resumes alice's call: %v", err)
			}
			if got := srv.Received(); len(got) != 0 {
				t.Fatalf("bob's answer reached the server: %+v", got)
			}
			// Alice can.
			res, err = tools["ask"].Resume(actx, p, u.Answer(p.Interrupt()))
			if err != nil || res.Text() != "alice done" {
				t.Fatalf("alice resumes: %v %+v", err, res)
			}
			hitltest.Match(t, u, srv)
			// A task handle is bound the same way.
			_, err = tools["ask"].Client().ResumeTask(bctx, mcpadapter.TaskHandle{TaskID: "t1", Tool: "ask", Principal: "alice"}, nil)
			if !errors.As(err, &de) || de.Reason != mcpadapter.DeniedPrincipal {
				t.Fatalf("bob resumes alice's task: %v", err)
			}
		})
	}
}

// TestHITLProtocolChanged: a question a 2026-07-28 server asked cannot be
// answered once the server speaks 2025-11-25 (downgraded, or a replica of
// the older version): the resume is refused with a clear error, and
// nothing is sent — before, the server ran the tool again and the
// adapter declined its question.
func TestHITLProtocolChanged(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	modern := hitltest.NewServer(testserver.Modern)
	legacy := hitltest.NewServer(testserver.Legacy)
	named := func(srv *hitltest.Server) *mcpadapter.Client {
		c, err := mcpadapter.NewClient(srv.Server, &mcpadapter.ClientOptions{Name: "pay"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	res, err := hitlTools(t, named(modern), nil)["ask"].Call(ctx, json.RawMessage(askArgs("pay", 1)))
	p := mustInterrupt(t, res, err)
	u := &hitltest.User{}
	_, err = hitlTools(t, named(legacy), nil)["ask"].Resume(ctx, p, u.Answer(p.Interrupt()))
	var de *mcpadapter.ResumeDeniedError
	if !errors.As(err, &de) || de.Reason != mcpadapter.DeniedProtocol || !strings.Contains(err.Error(), "2026-07-28") || !strings.Contains(err.Error(), "2025-11-25") {
		t.Fatalf("resumed on a 2025-11-25 connection: %v", err)
	}
	if legacy.Started("pay") != 0 || len(legacy.Received()) != 0 {
		t.Errorf("the older server got the call: started %d, answers %+v", legacy.Started("pay"), legacy.Received())
	}
}

// TestHITLCancelIsTheServersAnswer: a cancel goes to the server, and the
// result is what the server then answers, not a sentence written before
// it did.
func TestHITLCancelIsTheServersAnswer(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			ask := hitlTools(t, srv.Server, nil)["ask"]
			u := &hitltest.User{Decide: func(r elicitation.Request) elicitation.Response {
				if strings.Contains(r.Message, "q2/") {
					return elicitation.Response{Action: elicitation.Cancel}
				}
				return elicitation.Response{Action: elicitation.Accept, Content: map[string]any{"ok": true}}
			}}
			res, err := ask.Call(ctx, json.RawMessage(askArgs("order", 3)))
			for range 3 {
				var ir *mcpadapter.InputRequiredError
				if !errors.As(err, &ir) {
					break
				}
				res, err = ask.Resume(ctx, ir.Pending, u.Answer(ir.Pending.Interrupt()))
			}
			if err != nil || res.Text() != "order cancelled at q2" {
				t.Fatalf("after the cancel: %v %+v", err, res)
			}
			hitltest.Match(t, u, srv)
		})
	}
}

// TestHITLAnswerFromAnotherProcess: a 2026-07-28 question saved as JSON is
// answered by another process (this test binary, run again); a
// handshake-era question answered elsewhere is not known there (the call
// waits in the process that made it) and reaches nothing.
func TestHITLAnswerFromAnotherProcess(t *testing.T) {
	if os.Getenv("HITL_HELPER_URL") != "" {
		t.Skip("the helper process")
	}
	t.Parallel()
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			var url string
			if era == testserver.Modern {
				url = testserver.ServeStreamable(t, srv.Server, testserver.Stateless())
			} else {
				url = testserver.ServeStreamable(t, srv.Server)
			}
			ask := hitlTools(t, url, nil)["ask"]
			res, err := ask.Call(ctx, json.RawMessage(askArgs("remote", 2)))
			p := mustInterrupt(t, res, err)
			u := &hitltest.User{}
			saved, _ := json.Marshal(p)
			answers, _ := json.Marshal(u.Answer(p.Interrupt()))
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHITLHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), "HITL_HELPER_URL="+url, "HITL_HELPER_PENDING="+string(saved), "HITL_HELPER_ANSWERS="+string(answers))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			reply := string(out)
			if era == testserver.Legacy {
				if !strings.Contains(reply, "RESULT error: The call to tool \"ask\" that was waiting for the user's answer is not known to this process") {
					t.Fatalf("helper: %s", out)
				}
				u.Forget(hitltest.Question("remote", 1, 2))
				if got := srv.Received(); len(got) != 0 {
					t.Fatalf("an answer from another process reached the server: %+v", got)
				}
				// Answered where it waits, it goes on.
				res, err = ask.Resume(ctx, p, u.Answer(p.Interrupt()))
			} else {
				// The other process got question 2.
				_, q2, ok := strings.Cut(reply, "PENDING ")
				if !ok {
					t.Fatalf("helper: %s", out)
				}
				var p2 mcpadapter.PendingCall
				if err := json.Unmarshal([]byte(strings.TrimSpace(strings.SplitN(q2, "\n", 2)[0])), &p2); err != nil {
					t.Fatalf("helper's pending call: %v\n%s", err, out)
				}
				// Back here, the last question is answered.
				res, err = ask.Resume(ctx, &p2, u.Answer(p2.Interrupt()))
			}
			if era == testserver.Legacy {
				p2 := mustInterrupt(t, res, err)
				res, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
			}
			if err != nil || res.Text() != "remote done" {
				t.Fatalf("last question: %v %+v", err, res)
			}
			hitltest.Match(t, u, srv)
		})
	}
}

// TestHITLHelperProcess is the other process of
// TestHITLAnswerFromAnotherProcess.
func TestHITLHelperProcess(t *testing.T) {
	url := os.Getenv("HITL_HELPER_URL")
	if url == "" {
		t.Skip("run by TestHITLAnswerFromAnotherProcess")
	}
	var p mcpadapter.PendingCall
	var answers elicitation.Resume
	if err := json.Unmarshal([]byte(os.Getenv("HITL_HELPER_PENDING")), &p); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(os.Getenv("HITL_HELPER_ANSWERS")), &answers); err != nil {
		t.Fatal(err)
	}
	ask := hitlTools(t, url, nil)["ask"]
	res, err := ask.Resume(context.Background(), &p, &answers)
	var ir *mcpadapter.InputRequiredError
	switch {
	case errors.As(err, &ir):
		b, _ := json.Marshal(ir.Pending)
		fmt.Printf("PENDING %s\n", b)
	case err != nil:
		t.Fatal(err)
	case res.IsError:
		fmt.Printf("RESULT error: %s\n", res.Text())
	default:
		fmt.Printf("RESULT %s\n", res.Text())
	}
}

// TestHITLNumbersOnTheWire: an integer answer beyond float64 precision
// reaches the server with the digits the user entered, in both eras.
func TestHITLNumbersOnTheWire(t *testing.T) {
	t.Parallel()
	for _, era := range hitlEras {
		t.Run(era.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			srv := hitltest.NewServer(era)
			url, bodies := serveBodies(t, srv, era)
			ask := hitlTools(t, url, nil)["ask"]
			res, err := ask.Call(ctx, json.RawMessage(askArgs("big", 1)))
			p := mustInterrupt(t, res, err)
			answer := &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Accept,
				Content: map[string]any{"ok": true, "amount": json.Number("9007199254740993")}}}}
			res, err = ask.Resume(ctx, p, answer)
			if err != nil || res.Text() != "big done" {
				t.Fatalf("%v %+v", err, res)
			}
			if !strings.Contains(bodies(), `"amount":9007199254740993`) {
				t.Errorf("the answer did not reach the server as entered:\n%s", bodies())
			}
			// NaN is refused before anything is sent.
			res, err = ask.Call(ctx, json.RawMessage(askArgs("nan", 1)))
			p = mustInterrupt(t, res, err)
			_, err = ask.Resume(ctx, p, &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Accept,
				Content: map[string]any{"ok": true, "amount": json.Number("NaN")}}}})
			var ee *elicitation.Error
			if !errors.As(err, &ee) || ee.Field != "amount" {
				t.Errorf("NaN: %v", err)
			}
			// The refused answer leaves the question open: decline it,
			// so that the server's call ends before the test does.
			if _, err := ask.Resume(ctx, p, &elicitation.Resume{Responses: map[string]elicitation.Response{p.Requests[0].Key: {Action: elicitation.Decline}}}); err != nil {
				t.Errorf("declining after NaN: %v", err)
			}
		})
	}
}

// serveBodies serves srv over streamable HTTP on loopback and returns
// its URL and a function returning every request body so far.
func serveBodies(t *testing.T, srv *hitltest.Server, era testserver.Era) (string, func() string) {
	var mu sync.Mutex
	var bodies bytes.Buffer
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv.Server },
		&mcp.StreamableHTTPOptions{Stateless: era == testserver.Modern})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies.Write(b)
		bodies.WriteByte('\n')
		mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, func() string {
		mu.Lock()
		defer mu.Unlock()
		return bodies.String()
	}
}
