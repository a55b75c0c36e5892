// Package inputwire holds the wire side of the questions a 2026-07-28
// server asks during a tool call (input_required, a -32042 error, a
// task's inputRequests): the URL of an elicitation checked to be a web
// page before a user is sent to it (WebPage), the URL elicitations of a
// -32042 error (URLElicitations), a sampling request in the shape a
// SamplingHandler takes (SamplingBase), the question keys in a fixed
// order (Keys), the wait before a call is sent again when the server
// sheds load (Sleep), an elicitation as a user is shown it (Request,
// Print), a user's answers as the server takes them and summed up
// (Responses, Summary), and the answer of a client's own handlers to a
// sampling or roots request (Fulfill); and the rounds of one call, each
// answer that asks for input read as the step the call takes next
// (Rounds.Next: send again, ask the user, refuse, fail), and the
// questions of a -32042 error (URLQuestions); the client's own
// multi-round-trip loop, a sending middleware in place of go-sdk's that
// answers each round with the client's handlers and sends the request
// again, and never takes a task's questions (a result of another
// resultType, plaincall.Round) for a round (AutoRounds); an elicitation
// answered by a client's handler, checked as go-sdk checks a server's
// elicitation/create (Elicit); and a client's sampling and elicitation
// handlers as go-sdk calls them, with a panic answered as an error
// (SamplingWithTools, RecoveredElicitation).
//
// Who answers a question, and what an unanswerable one means to the call,
// are the root's (rounds.go, park.go, task_input.go). It imports go-sdk's
// mcp and jsonrpc packages, the public elicitation package,
// internal/plaincall, internal/sdkerr, internal/wire and the standard
// library only.
package inputwire
