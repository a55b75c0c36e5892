// Package park keeps the handshake-era tool calls of one client that
// wait for their user's answer: the lanes (one call in flight per
// connection), the parked calls by id, their park timers, the handing
// of a server's elicitation/create to the call that asked it and of the
// user's answer back, and the record of every question answered or
// closed (Book), so that a question takes one answer.
//
// Its inputs are plain: a go-sdk ClientSession names a connection, a
// question is go-sdk's ElicitParams and its answer an ElicitResult, and
// a call's outcome is a value of the root's result type R with an error.
// What a question, a resume or a refusal means to a user (PendingCall,
// InputRequiredError, AnsweredError, ResumeDeniedError) is the root's:
// it reads the Status and Record values this package returns. It imports
// the standard library and go-sdk only, never the root.
//
// Goroutines and timers, who owns them and what ends them:
//
//   - Table.Run starts one goroutine per call in flight. The Table owns
//     it; it ends when the call's function returns, which the call's own
//     context makes sure of: Wait cancels it when the caller's wait times
//     out or the caller's context ends, a closed question cancels it
//     CloseGrace after the server was told "cancel", and the server's
//     answer or a lost connection end it otherwise. When it ends, the
//     call leaves its lane, and ended is closed, which releases every
//     elicitation handler and waiter still holding the call.
//   - A parked question has a park timer (time.AfterFunc, the Table's
//     timeout) that closes that question only; answering or closing the
//     question, or the call's end, stops it.
//   - Table.Elicit runs on go-sdk's goroutine of the server's request and
//     returns when the answer is given, the call ends, or go-sdk's
//     context ends.
package park
