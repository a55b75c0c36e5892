package mcpadapter_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/hitltest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestHITLParkTimerOfEarlierRound: a handshake-era call asks twice; the
// first question is answered halfway through its park timeout, and the
// second is answered after the first question's timeout has passed (and
// before its own): the second answer reaches the server, so the first
// question's timer closed nothing but the first question.
func TestHITLParkTimerOfEarlierRound(t *testing.T) {
	t.Parallel()
	const park = 4 * time.Second
	ctx := testCtx(t)
	srv := hitltest.NewServer(testserver.Legacy)
	ask := hitlTools(t, srv.Server, &mcpadapter.Options{ParkTimeout: park})["ask"]
	res, err := ask.Call(ctx, json.RawMessage(askArgs("t", 2)))
	p1 := mustInterrupt(t, res, err)
	firstDue := time.NewTimer(park + park/4) // past question 1's timeout
	defer firstDue.Stop()
	<-time.After(park / 2)
	u := &hitltest.User{}
	res, err = ask.Resume(ctx, p1, u.Answer(p1.Interrupt()))
	p2 := mustInterrupt(t, res, err)
	<-firstDue.C // question 2 has about park/4 left of its own timeout
	res, err = ask.Resume(ctx, p2, u.Answer(p2.Interrupt()))
	if err != nil || res.Text() != "t done" {
		t.Fatalf("question 2, answered after question 1's timeout: %v %+v", err, res)
	}
	hitltest.Match(t, u, srv)
}
