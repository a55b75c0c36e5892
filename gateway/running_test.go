package gateway

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The requests running in sessions: ending a session (endSession, as a
// DELETE does) cancels exactly the requests of that session that its
// principal made, whatever the order requests start and end in, and the
// gateway keeps nothing of a session once its requests have ended.
func TestTrackSessionEnds(t *testing.T) {
	type req struct {
		session, principal string
		ctx                context.Context
		untrack            func()
		done               bool // untracked
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 50 {
		g := &Gateway{running: make(map[string]*runningReq)}
		var reqs []*req
		for i := range 40 {
			r := &req{session: fmt.Sprint("s", rng.IntN(4)), principal: []string{"alice", "bob"}[rng.IntN(2)]}
			ctx, cancel := context.WithCancelCause(context.Background())
			r.ctx, r.untrack = ctx, g.trackSession(r.session, r.principal, cancel)
			reqs = append(reqs, r)
			if i%3 == 2 { // one ends, maybe twice
				j := rng.IntN(len(reqs))
				reqs[j].untrack()
				reqs[j].untrack()
				reqs[j].done = true
			}
		}
		g.endSession("s1", "alice")
		g.endSession("nosuch", "alice")
		for i, r := range reqs {
			want := r.session == "s1" && r.principal == "alice" && !r.done
			if got := errors.Is(context.Cause(r.ctx), errSessionEnded); got != want {
				t.Fatalf("round %d: request %d of %s by %s (ended %v) cancelled by the end of s1 by alice: %v, want %v", round, i, r.session, r.principal, r.done, got, want)
			}
		}
		for _, r := range reqs {
			r.untrack()
		}
		if len(g.running) != 0 {
			t.Fatalf("round %d: %d sessions kept after their requests ended", round, len(g.running))
		}
	}
}
