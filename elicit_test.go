package mcpadapter_test

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// interruptTools returns the tools of an adapter in ElicitInterrupt mode.
func interruptTools(t *testing.T, target any, parkTimeout ...time.Duration) map[string]*mcpadapter.Tool {
	t.Helper()
	opts := &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt}
	if len(parkTimeout) > 0 {
		opts.ParkTimeout = parkTimeout[0]
	}
	a, err := mcpadapter.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return toolMap(t, testCtx(t), a)
}

// mustInterrupt calls (or resumes) and expects an interrupt.
func mustInterrupt(t *testing.T, res *mcpadapter.Result, err error) *mcpadapter.PendingCall {
	t.Helper()
	var ir *mcpadapter.InputRequiredError
	if !errors.As(err, &ir) {
		t.Fatalf("got %v, %+v; want an InputRequiredError", err, res)
	}
	return ir.Pending
}

func answer(key string, action elicitation.Action, content map[string]any) *elicitation.Resume {
	return &elicitation.Resume{Responses: map[string]elicitation.Response{key: {Action: action, Content: content}}}
}

func TestElicitForm(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			tools := interruptTools(t, testserver.New(testserver.Options{Era: e.era}))
			book := tools["book"]
			for _, tc := range []struct {
				action  elicitation.Action
				content map[string]any
				want    string
				isError bool
			}{
				{elicitation.Accept, map[string]any{"guests": 4}, "Booked 4 guests (inside) on Fri", false}, // seating: the schema's default
				{elicitation.Accept, map[string]any{"guests": 2, "seating": "terrace"}, "Booked 2 guests (terrace) on Fri", false},
				{elicitation.Decline, nil, "Booking declined", false},
				{elicitation.Cancel, nil, "Booking canceld", false}, // the server's own answer to the cancel
			} {
				res, err := book.Call(ctx, json.RawMessage(`{"date":"Fri"}`))
				p := mustInterrupt(t, res, err)
				in := p.Interrupt()
				if in.Type != "mcp_elicitation" || in.ToolName != "book" || len(in.Requests) != 1 {
					t.Fatalf("interrupt %+v", in)
				}
				r := in.Requests[0]
				if r.Mode != elicitation.ModeForm || r.Message != "How many guests on Fri?" || !strings.Contains(string(r.RequestedSchema), `"guests"`) {
					t.Fatalf("request %+v", r)
				}
				res, err = book.Resume(ctx, p, answer(r.Key, tc.action, tc.content))
				if err != nil || res.IsError != tc.isError || !strings.Contains(res.Text(), tc.want) {
					t.Errorf("%s %v: %v %+v, want %q", tc.action, tc.content, err, res, tc.want)
				}
			}
		})
	}
}

func TestElicitInvalidAnswer(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			srv, state := testserver.NewWithState(testserver.Options{Era: e.era})
			book := interruptTools(t, srv)["book"]
			res, err := book.Call(ctx, json.RawMessage(`{"date":"Sat"}`))
			p := mustInterrupt(t, res, err)
			calls := state.Calls("book")
			key := p.Requests[0].Key
			for _, bad := range []*elicitation.Resume{
				answer(key, elicitation.Accept, map[string]any{"guests": "four"}),
				answer(key, elicitation.Accept, map[string]any{"guests": 40}),
				answer(key, elicitation.Accept, map[string]any{}),
				answer("nope", elicitation.Accept, nil),
			} {
				_, err := book.Resume(ctx, p, bad)
				var ee *elicitation.Error
				if !errors.As(err, &ee) {
					t.Errorf("%+v: got %v, want an *elicitation.Error", bad, err)
				}
			}
			if state.Calls("book") != calls {
				t.Errorf("a bad answer reached the server")
			}
			// The question is still open: a good answer goes through.
			res, err = book.Resume(ctx, p, answer(key, elicitation.Accept, map[string]any{"guests": 3}))
			if err != nil || !strings.Contains(res.Text(), "Booked 3 guests") {
				t.Errorf("good answer after bad ones: %v %+v", err, res)
			}
		})
	}
}

func TestElicitMultiRound(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			survey := interruptTools(t, testserver.New(testserver.Options{Era: e.era}))["survey"]
			res, err := survey.Call(ctx, nil)
			p1 := mustInterrupt(t, res, err)
			if p1.Requests[0].Message != "Your name?" {
				t.Fatalf("round 1: %+v", p1.Requests)
			}
			res, err = survey.Resume(ctx, p1, answer(p1.Requests[0].Key, elicitation.Accept, map[string]any{"name": "Ada"}))
			p2 := mustInterrupt(t, res, err)
			if p2.Requests[0].Message != "Confirm Ada?" || p2.Round != 2 {
				t.Fatalf("round 2: %+v", p2)
			}
			res, err = survey.Resume(ctx, p2, answer(p2.Requests[0].Key, elicitation.Accept, map[string]any{"ok": true}))
			if err != nil || res.Text() != "Ada confirmed=true" {
				t.Errorf("end: %v %+v", err, res)
			}
		})
	}
}

func TestElicitModernResumeElsewhere(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	url := testserver.ServeStreamable(t, testserver.New(testserver.Options{}), testserver.Stateless())
	book := interruptTools(t, url)["book"]
	res, err := book.Call(ctx, json.RawMessage(`{"date":"Sun"}`))
	p := mustInterrupt(t, res, err)
	saved, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Another adapter (as in another process) resumes from the saved state.
	var restored mcpadapter.PendingCall
	if err := json.Unmarshal(saved, &restored); err != nil {
		t.Fatal(err)
	}
	other := interruptTools(t, url)["book"]
	res, err = other.Resume(ctx, &restored, answer(p.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 5}))
	if err != nil || res.Text() != "Booked 5 guests (inside) on Sun" {
		t.Errorf("resumed elsewhere: %v %+v", err, res)
	}
}

func TestElicitLegacyParkedCallGone(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	srv := testserver.New(testserver.Options{Era: testserver.Legacy})
	book := interruptTools(t, srv)["book"]
	res, err := book.Call(ctx, json.RawMessage(`{"date":"Mon"}`))
	p := mustInterrupt(t, res, err)
	if p.ParkID == "" {
		t.Fatal("a handshake-era call was not parked")
	}
	other := interruptTools(t, srv)["book"]
	res, err = other.Resume(ctx, p, answer(p.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 2}))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "not known to this process") {
		t.Errorf("resume in another adapter: %v %+v", err, res)
	}
	// The original is still parked and can finish.
	res, err = book.Resume(ctx, p, answer(p.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 2}))
	if err != nil || !strings.Contains(res.Text(), "Booked 2") {
		t.Errorf("resume where parked: %v %+v", err, res)
	}
}

func TestElicitParkTimeout(t *testing.T) {
	t.Parallel()
	// The clock is synctest's: the person thinks 500 ms, exactly.
	synctest.Test(t, func(t *testing.T) {
		ctx := testCtx(t)
		tools := interruptTools(t, testserver.New(testserver.Options{Era: testserver.Legacy}), 200*time.Millisecond)
		res, err := tools["book"].Call(ctx, json.RawMessage(`{"date":"Tue"}`))
		p := mustInterrupt(t, res, err)
		time.Sleep(500 * time.Millisecond)
		res, err = tools["book"].Resume(ctx, p, answer(p.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 2}))
		var ae *mcpadapter.AnsweredError
		if !errors.As(err, &ae) || ae.Action != "" || !strings.Contains(ae.Closed, "within 200ms (Options.ParkTimeout)") {
			t.Errorf("after the park timeout: %v %+v", err, res)
		}
		// The connection is free again.
		if res, err := tools["echo"].Call(ctx, json.RawMessage(`{"text":"free"}`)); err != nil || res.Text() != "free" {
			t.Errorf("after the park timeout: %v %+v", err, res)
		}
	})
}

func TestElicitLegacyParallel(t *testing.T) {
	t.Parallel()
	ctx := mcpadapter.WithRun(testCtx(t), "turn-1") // the two calls of one model turn
	tools := interruptTools(t, stdioServer(t, "-era", "legacy"))
	var wg sync.WaitGroup
	var pBook, pSurvey *mcpadapter.PendingCall
	var errBook, errSurvey error
	wg.Go(func() { _, errBook = tools["book"].Call(ctx, json.RawMessage(`{"date":"Wed"}`)) })
	wg.Go(func() { _, errSurvey = tools["survey"].Call(ctx, nil) })
	wg.Wait()
	pBook, pSurvey = mustInterrupt(t, nil, errBook), mustInterrupt(t, nil, errSurvey)
	// One of them asked; the other queued behind it with no question.
	first, firstTool, queued, queuedTool := pBook, tools["book"], pSurvey, tools["survey"]
	if len(pBook.Requests) == 0 {
		first, firstTool, queued, queuedTool = pSurvey, tools["survey"], pBook, tools["book"]
	}
	if len(first.Requests) != 1 || len(queued.Requests) != 0 {
		t.Fatalf("requests: %d and %d, want 1 and 0", len(first.Requests), len(queued.Requests))
	}
	finish := func(tool *mcpadapter.Tool, p *mcpadapter.PendingCall) string {
		for range 3 {
			var content map[string]any
			resume := &elicitation.Resume{Responses: map[string]elicitation.Response{}}
			for _, r := range p.Requests {
				switch {
				case strings.Contains(r.Message, "guests"):
					content = map[string]any{"guests": 6}
				case strings.Contains(r.Message, "name"):
					content = map[string]any{"name": "Bo"}
				default:
					content = map[string]any{"ok": true}
				}
				resume.Responses[r.Key] = elicitation.Response{Action: elicitation.Accept, Content: content}
			}
			res, err := tool.Resume(ctx, p, resume)
			var ir *mcpadapter.InputRequiredError
			if errors.As(err, &ir) {
				p = ir.Pending
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			return res.Text()
		}
		t.Fatal("too many rounds")
		return ""
	}
	got := []string{finish(firstTool, first), finish(queuedTool, queued)}
	joined := strings.Join(got, " | ")
	if !strings.Contains(joined, "Booked 6 guests") || !strings.Contains(joined, "Bo confirmed=true") {
		t.Errorf("results: %q", joined)
	}
}

func TestElicitURLRequired(t *testing.T) {
	t.Parallel()
	for _, e := range eras {
		t.Run(e.era.String(), func(t *testing.T) {
			ctx := testCtx(t)
			login := interruptTools(t, testserver.New(testserver.Options{Era: e.era}))["url_login"]
			res, err := login.Call(ctx, nil)
			p := mustInterrupt(t, res, err)
			r := p.Requests[0]
			if r.Mode != elicitation.ModeURL || r.URL != testserver.LoginURL || r.ElicitationID != "login-1" || !p.Retry {
				t.Fatalf("pending %+v", p)
			}
			res, err = login.Resume(ctx, p, answer(r.Key, elicitation.Accept, nil))
			if err != nil || res.Text() != "signed in" {
				t.Errorf("after accepting: %v %+v", err, res)
			}
			res, err = login.Call(ctx, nil)
			p = mustInterrupt(t, res, err)
			res, err = login.Resume(ctx, p, answer(p.Requests[0].Key, elicitation.Decline, nil))
			if err != nil || !res.IsError || !strings.Contains(res.Text(), "declined") {
				t.Errorf("after declining: %v %+v", err, res)
			}
		})
	}
}

func TestElicitCloneLeavesCallerClient(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	c, err := mcpadapter.NewClient(testserver.New(testserver.Options{}), &mcpadapter.ClientOptions{Name: "mine", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tools := interruptTools(t, c)
	if tools["book"].Server != "mine" || tools["book"].Client() == c {
		t.Errorf("the adapter did not clone the client: server %q", tools["book"].Server)
	}
	res, err := tools["book"].Call(ctx, json.RawMessage(`{"date":"Thu"}`))
	mustInterrupt(t, res, err)
	// The caller's own client still advertises no elicitation.
	res, err = c.CallTool(ctx, "book", json.RawMessage(`{"date":"Thu"}`), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "does not support elicitation") {
		t.Errorf("caller's client: %v %+v", err, res)
	}
}
