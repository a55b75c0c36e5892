package taskfollow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"

	"github.com/mcpadapter/mcpadapter/elicitation"
	"github.com/mcpadapter/mcpadapter/internal/inputwire"
	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 task that needs input says so in tasks/get: status
// input_required and its questions (inputRequests, as in a
// multi-round-trip result). The follower answers with tasks/update and
// polls on.
//
// Answers are bound to the round of questions they answer, not to their
// keys for the whole task: a task may ask again under a key it used
// before, and that question is asked anew. The extension lets a server
// acknowledge tasks/update before tasks/get reflects it, so a question
// just answered may still be shown for a while; it is not asked again
// while the task shows it unchanged: same key, same question, same
// requestState and same lastUpdatedAt, the task not seen in another
// status since. A server that asks an identical question again under the
// same key, with the same requestState, without changing lastUpdatedAt
// or its status in between, cannot be told apart from one that has not
// yet taken the answer.

// Round is the questions of a task that were answered: the answers went
// out with tasks/update, the server may not have taken them yet.
type Round struct {
	updatedAt string            // the task's lastUpdatedAt when it asked them
	state     string            // the round's requestState
	asked     map[string]string // key → the question answered (Follower.Print)
}

// NewRound is the round of the questions asked (key → the question, as
// Follower.Print describes it) that st shows.
func NewRound(st *taskwire.State, asked map[string]string) *Round {
	return &Round{updatedAt: st.LastUpdatedAt, state: st.RequestState, asked: asked}
}

// answered reports whether st shows under key the very question r
// answered.
func (r *Round) answered(st *taskwire.State, key, question string) bool {
	if r == nil {
		return false
	}
	q, ok := r.asked[key]
	return ok && q == question && r.state == st.RequestState && r.updatedAt == st.LastUpdatedAt
}

// Questions reads the questions of a task waiting for input. Each must be
// a JSON object: go-sdk's decoding of a null one dereferences nil.
func Questions(st *taskwire.State) (mcp.InputRequestMap, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(st.InputRequests, &raw); err != nil {
		return nil, fmt.Errorf("the task waits for input but its questions cannot be read: %w", err)
	}
	for k, q := range raw {
		if q = bytes.TrimSpace(q); len(q) == 0 || q[0] != '{' {
			return nil, fmt.Errorf("the task waits for input but its questions cannot be read: inputRequests[%q] is not an object", k)
		}
	}
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(st.InputRequests, &reqs); err != nil || len(reqs) == 0 {
		if err == nil {
			err = errors.New("no inputRequests")
		}
		return nil, fmt.Errorf("the task waits for input but its questions cannot be read: %w", err)
	}
	return reqs, nil
}

// input answers the questions of a task waiting for input that round
// (nil: none) did not. stop says the follow ends with end (questions for
// the user, a failure); otherwise the answers went out, or had gone out
// before, next is the round answered, and the follow polls on. more says
// the follow may answer another round: as go-sdk's multi-round-trip
// loop, a follow answers a bounded number of rounds (MaxRounds), then
// gives the task up.
func (f *Follower) input(ctx context.Context, st *taskwire.State, round *Round, more bool) (next *Round, end End, stop bool) {
	reqs, err := Questions(st)
	if err != nil {
		return nil, End{Kind: Unreadable, State: st, Err: err}, true
	}
	prints := make(map[string]string, len(reqs))
	keys := make([]string, 0, len(reqs))
	for k, r := range reqs {
		prints[k] = f.Print(k, r)
		if !round.answered(st, k, prints[k]) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return round, End{}, false // answered; the server has not taken the answers yet
	}
	abandon := func(why error) (*Round, End, bool) { return nil, End{Kind: Abandon, State: st, Err: why}, true }
	if !more {
		return abandon(fmt.Errorf("it asked for input in more than %d rounds of one call", f.MaxRounds))
	}
	sort.Strings(keys)
	responses := make(mcp.InputResponseMap, len(keys))
	var asks []string
	for _, k := range keys {
		resp, ask, err := f.Answer(ctx, k, reqs[k])
		switch {
		case err != nil && f.Detached():
			// The client let go of its tasks while the question waited:
			// the task goes on, for whoever resumes it.
			return nil, End{Kind: Failed, State: st, Op: "tasks/get", Err: err, Detached: true}, true
		case err != nil:
			return abandon(err)
		case ask:
			asks = append(asks, k)
		default:
			responses[k] = resp
		}
	}
	if len(asks) > 0 {
		if len(responses) > 0 {
			return abandon(errors.New("it asked for the user's answers and for sampling or roots at once, which this client does not support"))
		}
		return nil, End{Kind: Ask, State: st, Asks: asks, Questions: reqs}, true
	}
	if err := f.Update(ctx, responses, st.RequestState); err != nil {
		return nil, End{Kind: Failed, State: st, Op: "tasks/update", Err: err}, true
	}
	next = NewRound(st, make(map[string]string, len(reqs)))
	if round != nil && round.updatedAt == st.LastUpdatedAt && round.state == st.RequestState {
		maps.Copy(next.asked, round.asked) // the same round, answered in parts
	}
	for k := range responses {
		next.asked[k] = prints[k]
	}
	return next, End{}, false
}

// StillAsks reports whether st shows every one of the questions asked
// (as the user was shown them, inputwire.Request), and returns them as
// the Round their answers answer.
func StillAsks(st *taskwire.State, asked []elicitation.Request) (*Round, bool) {
	if st.Status != inputRequired {
		return nil, false
	}
	reqs, err := Questions(st)
	if err != nil {
		return nil, false
	}
	prints := make(map[string]string, len(asked))
	for _, q := range asked {
		r, ok := reqs[q.Key]
		if !ok {
			return nil, false
		}
		shown := inputwire.Print(q.Key, r)
		if b, _ := json.Marshal(q); string(b) != shown {
			return nil, false
		}
		prints[q.Key] = shown
	}
	return NewRound(st, prints), true
}
