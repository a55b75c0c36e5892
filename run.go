package mcpadapter

import "context"

// A run is what one user asked of an agent: the model's tool calls of one
// turn, and the resumes that continue them. Calls of one run on a
// handshake-era connection wait for each other's questions; a call of
// another run means its user moved on: a question of theirs still waiting
// on that connection is closed (see Options.Elicitation, ElicitInterrupt).
//
// The model SDK bindings (package toolcall) make each turn a run of its
// own unless the context already names one; the eino binding makes each
// agent run one. A call made with no run is a run of its own.

type runKey struct{}

// WithRun returns a context whose tool calls belong to the run id (any
// string unique to the run: a conversation turn's id, a checkpoint id).
// "" removes the run of ctx.
func WithRun(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runKey{}, id)
}

// RunFrom returns the run set by WithRun, or "".
func RunFrom(ctx context.Context) string {
	id, _ := ctx.Value(runKey{}).(string)
	return id
}

// NewRunID returns a new random run id.
func NewRunID() string { return newParkID() }

// sameRun reports whether two calls belong to one run.
func sameRun(a, b string) bool { return a != "" && a == b }
