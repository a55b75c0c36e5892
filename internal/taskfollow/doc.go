// Package taskfollow follows a task a server made for a tool call to its
// end: it polls tasks/get within the poll bounds (the server's
// pollInterval, or a growing backoff), reports every status change,
// answers the rounds of questions a 2026-07-28 task asks (tasks/update)
// without answering one round twice while the server has not yet taken
// it (Round; StillAsks, for a round answered in another process), and
// says how the follow ended (End). A Task reaches one task on the wire:
// its state (Get), its result once it ended, by either protocol
// (Outcome), and its cancel when the call's context ends or its
// questions cannot be answered (Cancel, Abandon, Ended), each of these
// endings a *LostError or a *CancelError. It also holds the grace wait
// of a tools/call that may make a task after its caller's context ended
// (Send, Late), and the Background that runs such work after its call
// returned.
//
// Its inputs are plain: the task's state as taskwire reads it, and
// function fields that send the tasks/* requests, answer a question,
// report a status and say whether the client let go of its tasks. What
// an ending means to the caller (a Result, a TaskError, a
// TaskCancelledError, an InputRequiredError) is the root's. It imports
// the standard library, go-sdk, the public elicitation package,
// internal/taskwire, internal/inputwire and internal/sdkerr only, never
// the root.
//
// Goroutines, who owns them and what ends them:
//
//   - Follow runs on its caller's goroutine and starts none; each wait
//     between two polls ends with its timer, the caller's context, or
//     the connection's end.
//   - Send starts one goroutine for the request it sends. It is Send's
//     caller's until the caller's context ends; then Send returns a
//     Late, and the goroutine is Late.Wait's, which ends it by
//     abandoning the request (cancelling its context) after Grace or
//     when its life ends, and waits for it to return.
//   - Background.Run starts one goroutine per piece of work (a
//     Late.Wait and what follows it). The Background owns them:
//     Background.Stop ends their context (on Client.Close) and returns
//     the wait for them; the work must return soon after.
package taskfollow
