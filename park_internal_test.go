package mcpadapter

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestParkTimerOfAnsweredQuestion: the park timer of question 1 firing
// late — after question 1 was answered and question 2 parked — closes
// nothing: question 2 keeps waiting, and its answer reaches the server.
func TestParkTimerOfAnsweredQuestion(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := hitltest.NewServer(testserver.Legacy)
	a, err := New(srv.Server, &Options{Elicitation: ElicitInterrupt})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ask *Tool
	for _, tl := range tools {
		if tl.Name == "ask" {
			ask = tl
		}
	}
	_, err = ask.Call(ctx, json.RawMessage(`{"call":"t","n":2}`))
	var ir *InputRequiredError
	if !errors.As(err, &ir) {
		t.Fatal(err)
	}
	p1 := ir.Pending
	c := ask.Client()
	parked := c.interrupt.Lookup(p1.ParkID)
	u := &hitltest.User{}
	_, err = ask.Resume(ctx, p1, u.Answer(p1.Interrupt()))
	if !errors.As(err, &ir) {
		t.Fatal(err)
	}
	p2 := ir.Pending
	c.interrupt.Expire(parked, p1.ID) // question 1's timer, late
	res, err := ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
	if err != nil || res.Text() != "t done" {
		t.Fatalf("question 2 after question 1's timer: %v %+v", err, res)
	}
	hitltest.Match(t, u, srv)
}
