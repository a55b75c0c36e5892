package taskfollow

import (
	"context"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/taskwire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Follower follows one task through the function fields its caller
// fills.
type Follower struct {
	// Core says the task speaks the 2025-11-25 protocol, whose questions
	// come while tasks/result waits: a task waiting for input ends the
	// follow as one that ended does.
	Core bool
	// MinPoll and MaxPoll bound the interval between two tasks/get; zero
	// (or less) means 50ms and 10s, and a MaxPoll below MinPoll is
	// MinPoll.
	MinPoll, MaxPoll time.Duration
	// MaxRounds bounds the rounds of questions one follow answers.
	MaxRounds int

	// Get sends tasks/get.
	Get func(ctx context.Context) (*taskwire.State, error)
	// Update sends tasks/update with the answers of a round.
	Update func(ctx context.Context, responses mcp.InputResponseMap, state string) error
	// Answer answers the question under key: a response, or ask to have
	// it put to the user (the follow then ends with Ask), or an error
	// when it cannot be answered.
	Answer func(ctx context.Context, key string, r mcp.InputRequest) (resp mcp.InputResponse, ask bool, err error)
	// Print describes a question for comparison between two tasks/get.
	Print func(key string, r mcp.InputRequest) string
	// Report is told every status the task shows (a change of status or
	// of status message).
	Report func(st *taskwire.State)
	// Detached reports whether the client let go of its tasks (it was
	// closed) since the follow began.
	Detached func() bool
	// Life returns a channel closed when the task's connection is lost.
	Life func(ctx context.Context) (<-chan struct{}, error)
}

// Kind is how a follow ended.
type Kind int

const (
	// Outcome: the task completed or failed (or, Core, waits for input):
	// its result is to be fetched.
	Outcome Kind = iota
	// Cancelled: the server cancelled the task.
	Cancelled
	// Ask: the task asks questions for the user (Asks, in Questions).
	Ask
	// Failed: the request Op failed with Err; Detached says the client let
	// go of the task (Err may then be nil).
	Failed
	// Unreadable: the questions of the task cannot be read (Err).
	Unreadable
	// Abandon: the questions of the task cannot be answered (Err says
	// why); the task is to be cancelled.
	Abandon
)

// End is how a follow ended.
type End struct {
	Kind      Kind
	State     *taskwire.State     // the task as last seen
	Asks      []string            // Ask: the keys of the questions for the user, sorted
	Questions mcp.InputRequestMap // Ask: the task's questions
	Op        string              // Failed: the request
	Err       error
	Detached  bool
}

// The statuses of a task.
const (
	inputRequired = "input_required"
	completed     = "completed"
	failed        = "failed"
	cancelled     = "cancelled"
)

// pollBounds returns MinPoll and MaxPoll, or their defaults.
func (f *Follower) pollBounds() (lo, hi time.Duration) {
	lo, hi = 50*time.Millisecond, 10*time.Second
	if f.MinPoll > 0 {
		lo = f.MinPoll
	}
	if f.MaxPoll > 0 {
		hi = f.MaxPoll
	}
	return lo, max(lo, hi)
}

// Follow polls the task, whose state is st, until it ends, answering the
// questions round (nil: none) did not answer. It tells Report about the
// first status and every change.
func (f *Follower) Follow(ctx context.Context, st *taskwire.State, round *Round) End {
	lo, hi := f.pollBounds()
	backoff := 4 * lo
	rounds := 0 // the rounds of questions this follow answered
	var last struct{ status, msg string }
	for {
		if st.Status != last.status || st.StatusMessage != last.msg {
			last.status, last.msg = st.Status, st.StatusMessage
			f.Report(st)
		}
		if st.Status != inputRequired {
			round = nil // a round of questions ends when the task moves on
		}
		switch st.Status {
		case completed, failed:
			return End{Kind: Outcome, State: st}
		case cancelled:
			return End{Kind: Cancelled, State: st}
		case inputRequired:
			if f.Core {
				// The server asks its questions while tasks/result waits.
				return End{Kind: Outcome, State: st}
			}
			next, end, stop := f.input(ctx, st, round, rounds < f.MaxRounds)
			if stop {
				return end
			}
			if next != round {
				rounds++
			}
			round = next
		}
		wait := st.Interval()
		if wait == 0 {
			wait = backoff
			backoff = min(backoff+backoff/2, hi)
		}
		wait = min(max(wait, lo), hi)
		if end, ok := f.pollWait(ctx, wait); !ok {
			end.State = st
			return end
		}
		next, err := f.Get(ctx)
		if err != nil {
			return End{Kind: Failed, State: st, Op: "tasks/get", Err: err, Detached: ctx.Err() == nil && f.Detached()}
		}
		st = next
	}
}

// pollWait waits d before the next poll. It ends early when ctx ends
// (the caller cancels the task) or the client lets go of its tasks. A
// connection that is lost otherwise ends the wait too; the next poll
// reconnects.
func (f *Follower) pollWait(ctx context.Context, d time.Duration) (End, bool) {
	if f.Detached() {
		return End{Kind: Failed, Op: "tasks/get", Detached: true}, false
	}
	life, err := f.Life(ctx)
	if err != nil {
		return End{Kind: Failed, Op: "tasks/get", Err: err}, false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return End{Kind: Failed, Op: "tasks/get", Err: ctx.Err()}, false
	case <-life:
		if f.Detached() {
			return End{Kind: Failed, Op: "tasks/get", Detached: true}, false
		}
	}
	return End{}, true
}
