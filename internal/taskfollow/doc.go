// Package taskfollow follows a task a server made for a tool call to its
// end: it polls tasks/get within the poll bounds (the server's
// pollInterval, or a growing backoff), reports every status change,
// answers the rounds of questions a 2026-07-28 task asks (tasks/update)
// without answering one round twice while the server has not yet taken
// it (Round), and says how the follow ended (End).
//
// Its inputs are plain: the task's state as taskwire reads it, and
// function fields that send the tasks/* requests, answer a question,
// report a status and say whether the client let go of its tasks. What
// an ending means to the caller (a Result, a TaskError, a
// TaskCancelledError, an InputRequiredError) is the root's. It imports
// the standard library, go-sdk and internal/taskwire only, never the
// root.
//
// Goroutines: Follow runs on its caller's goroutine and starts none;
// each wait between two polls ends with its timer, the caller's context,
// or the connection's end.
package taskfollow
