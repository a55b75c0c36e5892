package eino_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/eino"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// turn is what one Query or Resume of a run produced, read the way an
// application reads it.
type turn struct {
	run
	interrupted bool // the run stopped at an interrupt
	empty       int  // interrupts shown to the application with no questions
}

func drainTurn(t *testing.T, it *adk.AsyncIterator[*adk.AgentEvent]) turn {
	t.Helper()
	var tr turn
	tr.outputs = map[string]*eino.Output{}
	for {
		ev, ok := it.Next()
		if !ok {
			return tr
		}
		if ev.Err != nil {
			tr.err = ev.Err
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			if msg, err := ev.Output.MessageOutput.GetMessage(); err == nil && msg.Role == schema.Assistant && msg.Content != "" {
				tr.final = msg.Content
			}
		}
		if ev.Action != nil && ev.Action.Interrupted != nil {
			tr.interrupted = true
			tr.interrupts = eino.Interrupts(ev)
			for _, p := range tr.interrupts {
				if len(p.Interrupt.Requests) == 0 {
					tr.empty++
				}
			}
		}
	}
}

// TestAgentQueuedCallsNoEmptyInterrupt: three tool calls of one turn on a
// handshake-era (2025-11-25) server in interrupt mode, two of which ask a
// question: one parks, the others queue behind it. The application sees
// only interrupts with questions (never one it must answer with nothing),
// every stop of the run carries a question, and each call reaches the
// server once. 30 runs.
func TestAgentQueuedCallsNoEmptyInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	tools := adapterTools(t, srv, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	const runs = 30
	var empty, questionless, stops int
	for i := range runs {
		a := newAgent(t, tools, nil, []schema.ToolCall{
			call("c1", "book", `{"date":"Fri"}`),
			call("c2", "book", `{"date":"Sat"}`),
			call("c3", "echo", fmt.Sprintf(`{"text":"run %d"}`, i)),
		})
		cp := fmt.Sprintf("cp-%d", i)
		tr := drainTurn(t, a.Query(ctx, cp, "book two tables"))
		for round := 0; tr.interrupted; round++ {
			if tr.err != nil {
				t.Fatalf("run %d: %v", i, tr.err)
			}
			if round == 4 {
				t.Fatalf("run %d: still interrupted after %d resumes", i, round)
			}
			stops++
			empty += tr.empty
			if len(tr.interrupts) == 0 {
				questionless++
			}
			answers := map[string]*elicitation.Resume{}
			for _, p := range tr.interrupts {
				if len(p.Interrupt.Requests) > 0 {
					answers[p.ID] = answerAll([]eino.Pending{p})[p.ID]
				}
			}
			it, err := a.Resume(ctx, cp, answers)
			if err != nil {
				t.Fatal(err)
			}
			tr = drainTurn(t, it)
		}
		if tr.err != nil {
			t.Fatalf("run %d: %v", i, tr.err)
		}
		for _, want := range []string{"book: Booked 3 guests (inside) on Fri", "book: Booked 3 guests (inside) on Sat", fmt.Sprintf("echo: run %d", i)} {
			if !strings.Contains(tr.final, want) {
				t.Fatalf("run %d: final %q lacks %q", i, tr.final, want)
			}
		}
	}
	if empty > 0 || questionless > 0 {
		t.Errorf("%d interrupts without questions shown, %d stops with no question, in %d stops of %d runs", empty, questionless, stops, runs)
	}
	if b, e := state.Calls("book"), state.Calls("echo"); b != 2*runs || e != runs {
		t.Errorf("the server saw %d book and %d echo calls, want %d and %d", b, e, 2*runs, runs)
	}
	t.Logf("%d runs, %d stops for questions", runs, stops)
}

// TestAgentQueuedCallPassedOver: the parked call is not answered (the
// application resumes without it, or with an answer that does not fit)
// while another call is queued behind it. The run neither hangs nor shows
// an empty interrupt: it stops again at the same question, and finishes
// once it is answered.
func TestAgentQueuedCallPassedOver(t *testing.T) {
	ctx := ctx30(t)
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	tools := adapterTools(t, srv, &mcpadapter.Options{Elicitation: mcpadapter.ElicitInterrupt})
	a := newAgent(t, tools, nil, []schema.ToolCall{
		call("c1", "book", `{"date":"Sun"}`),
		call("c2", "book", `{"date":"Mon"}`),
	})
	tr := drainTurn(t, a.Query(ctx, "cp", "go"))
	if tr.err != nil || len(tr.interrupts) != 1 {
		t.Fatalf("first stop: %v, %+v", tr.err, tr.interrupts)
	}
	asked := tr.interrupts[0].Interrupt.Requests[0]
	// Resumed with no answers, then with a bad one, then implicitly (eino's
	// Runner.Resume names no interrupt).
	for step, resume := range []func(id string) (*adk.AsyncIterator[*adk.AgentEvent], error){
		func(string) (*adk.AsyncIterator[*adk.AgentEvent], error) {
			return a.Resume(ctx, "cp", nil)
		},
		func(id string) (*adk.AsyncIterator[*adk.AgentEvent], error) {
			return a.Resume(ctx, "cp", bookAnswer(id, elicitation.Accept, map[string]any{"guests": "many"}, asked.Key))
		},
		func(string) (*adk.AsyncIterator[*adk.AgentEvent], error) {
			return a.Runner.Resume(ctx, "cp")
		},
	} {
		it, err := resume(tr.interrupts[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		tr = drainTurn(t, it)
		if tr.err != nil || len(tr.interrupts) != 1 || tr.empty != 0 || tr.interrupts[0].Interrupt.Requests[0].Message != asked.Message {
			t.Fatalf("step %d: %v, %+v", step, tr.err, tr.interrupts)
		}
	}
	for round := 0; tr.interrupted; round++ {
		if round == 3 || len(tr.interrupts) == 0 {
			t.Fatalf("round %d: %v, %+v", round, tr.err, tr.interrupts)
		}
		it, err := a.Resume(ctx, "cp", answerAll(tr.interrupts))
		if err != nil {
			t.Fatal(err)
		}
		tr = drainTurn(t, it)
	}
	if tr.err != nil || !strings.Contains(tr.final, "on Sun") || !strings.Contains(tr.final, "on Mon") {
		t.Fatalf("final: %v %q", tr.err, tr.final)
	}
	if n := state.Calls("book"); n != 2 {
		t.Errorf("the server saw %d book calls, want 2", n)
	}
}
