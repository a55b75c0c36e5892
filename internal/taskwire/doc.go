// Package taskwire is the wire side of the tasks of both task protocols
// (the 2025-11-25 core Tasks and the 2026-07-28 Tasks extension) for a
// go-sdk client that knows none: the tasks/* requests as custom methods
// whose results are kept as the server wrote them (Params, RawResult,
// Call), the "task" member of a task-augmented tools/call (WithAsk,
// Middleware), and the task a server describes: in a tools/call result
// (Created, after the cheap test MayBe) or a tasks/get answer (Read), as a
// State with both protocols' members.
//
// Its inputs are plain: a go-sdk ClientSession, params, raw JSON. It
// imports go-sdk only; what a task means to a call (polling, questions,
// outcomes) is the root's, and this package imports nothing of it.
package taskwire
