package oauthflow

import "context"

// Attempt is the connect attempt a sign-in happens in, as the code that
// connects sees it: the clocks that bound it, and whether a sign-in has
// failed in it already.
type Attempt interface {
	// Pause stops the attempt's clocks (connect and probe timeouts) until
	// resume is called: the time a user spends signing in counts against
	// none of them.
	Pause() (resume func())
	// FailedSignIn returns the error of a sign-in that failed in this
	// attempt, or nil.
	FailedSignIn() error
	// SetFailedSignIn records a failed sign-in, so that the rest of the
	// attempt does not ask the user again.
	SetFailedSignIn(err error)
}

// attemptKey is the context key of the Attempt.
type attemptKey struct{}

// WithAttempt returns a copy of ctx that carries a. Handler.Authorize,
// called with that context or one derived from it, pauses a's clocks while
// the user signs in and asks the user at most once in a: when the
// protocol probe's sign-in failed, the handshake that follows gets the
// same error without asking again.
//
// The attempt rides on the context because nothing else crosses go-sdk:
// its streamable transport calls Authorize(ctx, req, resp) with the
// context of the refused request, which the connect that sent it made.
func WithAttempt(ctx context.Context, a Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// attemptFrom returns the Attempt ctx carries, or nil.
func attemptFrom(ctx context.Context) Attempt {
	a, _ := ctx.Value(attemptKey{}).(Attempt)
	return a
}
