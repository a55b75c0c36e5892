package mcpadapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestElicitQueuedResumedTogether: on a handshake-era (2025-11-25)
// connection in interrupt mode, call A parks on its question and call B,
// queued behind it, interrupts with no questions. Resumed at once (what
// eino does with two tool calls of one turn), B runs once A's answer is in:
// it never comes back as a second, empty interrupt. 100 rounds, each tool
// reaching the server exactly once per round.
func TestElicitQueuedResumedTogether(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx = mcpadapter.WithRun(ctx, "turn-1") // both calls of one model turn
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	tools := interruptTools(t, srv)
	book, echo := tools["book"], tools["echo"]
	const rounds = 100
	empty := 0
	for i := range rounds {
		res, err := book.Call(ctx, json.RawMessage(`{"date":"Fri"}`))
		pa := mustInterrupt(t, res, err)
		if len(pa.Requests) != 1 || pa.ParkID == "" {
			t.Fatalf("round %d: A: %+v", i, pa)
		}
		text := fmt.Sprintf("b-%d", i)
		res, err = echo.Call(ctx, json.RawMessage(`{"text":"`+text+`"}`))
		pb := mustInterrupt(t, res, err)
		if len(pb.Requests) != 0 {
			t.Fatalf("round %d: B queued behind A asks %+v", i, pb.Requests)
		}
		var wg sync.WaitGroup
		var resA, resB *mcpadapter.Result
		var errA, errB error
		wg.Go(func() { resB, errB = echo.Resume(ctx, pb, &elicitation.Resume{}) })
		wg.Go(func() {
			resA, errA = book.Resume(ctx, pa, answer(pa.Requests[0].Key, elicitation.Accept, map[string]any{"guests": 2}))
		})
		wg.Wait()
		if errA != nil || !strings.Contains(resA.Text(), "Booked 2 guests") {
			t.Fatalf("round %d: A: %v %+v", i, errA, resA)
		}
		var ir *mcpadapter.InputRequiredError
		if errors.As(errB, &ir) {
			empty++
			if len(ir.Pending.Requests) > 0 {
				t.Fatalf("round %d: B asks %+v", i, ir.Pending.Requests)
			}
			// Finish it so the next round starts clean.
			resB, errB = echo.Resume(ctx, ir.Pending, &elicitation.Resume{})
		}
		if errB != nil || resB.Text() != text {
			t.Fatalf("round %d: B: %v %+v", i, errB, resB)
		}
	}
	if empty > 0 {
		t.Errorf("B came back as an empty interrupt in %d of %d rounds", empty, rounds)
	}
	if a, b := state.Calls("book"), state.Calls("echo"); a != rounds || b != rounds {
		t.Errorf("the server saw %d book and %d echo calls, want %d each", a, b, rounds)
	}
}

// TestElicitQueuedPassedOver: when the parked call is resumed without an
// answer it can take (no answer, or one that does not fit), the call
// queued behind it does not wait for one: it comes back queued again, and
// runs once the answer is in.
func TestElicitQueuedPassedOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = mcpadapter.WithRun(ctx, "turn-1")
	srv, state := testserver.NewWithState(testserver.Options{Era: testserver.Legacy})
	tools := interruptTools(t, srv)
	book, echo := tools["book"], tools["echo"]
	res, err := book.Call(ctx, json.RawMessage(`{"date":"Sat"}`))
	pa := mustInterrupt(t, res, err)
	res, err = echo.Call(ctx, json.RawMessage(`{"text":"queued"}`))
	pb := mustInterrupt(t, res, err)
	key := pa.Requests[0].Key
	for _, resume := range []*elicitation.Resume{
		nil, // not answered this time
		answer(key, elicitation.Accept, map[string]any{"guests": "many"}), // refused: nothing sent
	} {
		var wg sync.WaitGroup
		var errA, errB error
		wg.Go(func() { _, errB = echo.Resume(ctx, pb, nil) })
		wg.Go(func() { _, errA = book.Resume(ctx, pa, resume) })
		wg.Wait()
		var ir *mcpadapter.InputRequiredError
		var ee *elicitation.Error
		if resume == nil && (!errors.As(errA, &ir) || len(ir.Pending.Requests) != 1) {
			t.Fatalf("A resumed with nil: %v", errA)
		}
		if resume != nil && !errors.As(errA, &ee) {
			t.Fatalf("A resumed with a bad answer: %v", errA)
		}
		if !errors.As(errB, &ir) || len(ir.Pending.Requests) != 0 || ir.Pending.Queued == "" {
			t.Fatalf("B behind a passed-over A: %v", errB)
		}
		if !strings.Contains(errB.Error(), "queued behind another call's question") {
			t.Errorf("B's error: %v", errB)
		}
		pb = ir.Pending
	}
	// B resumed first, alone, waits for A's answer, then runs.
	var wg sync.WaitGroup
	var resB *mcpadapter.Result
	var errB error
	wg.Go(func() { resB, errB = echo.Resume(ctx, pb, &elicitation.Resume{}) })
	res, err = book.Resume(ctx, pa, answer(key, elicitation.Accept, map[string]any{"guests": 5}))
	wg.Wait()
	if err != nil || !strings.Contains(res.Text(), "Booked 5 guests") || errB != nil || resB.Text() != "queued" {
		t.Fatalf("A: %v %+v; B: %v %+v", err, res, errB, resB)
	}
	if a, b := state.Calls("book"), state.Calls("echo"); a != 1 || b != 1 {
		t.Errorf("the server saw %d book and %d echo calls, want 1 each", a, b)
	}
}
