// Package order keeps the answer to a request behind the notifications the
// server sent before it: when a call returns, the handlers of the
// notifications read before its answer (its progress, its log messages)
// have run.
//
// go-sdk hands a client's incoming notifications to their handlers one at
// a time, in order, on a goroutine of their own, but hands a response to
// its caller as soon as it is read: a call can return before the
// notifications its server sent just before the answer reached their
// handlers. The connection's reader (Conn here for the in-process and SSE
// connections; internal/stdio's Conn; internal/wire's event stream limit
// over streamable HTTP) passes up a marker, a notifications/progress with
// a token of the connection's own, before a response that follows a
// message from the server read since the last marker (Marks.Issue).
// go-sdk queues the marker behind those notifications; the client's
// receiving middleware notes it reached (Marks.Reached) when it comes to
// it, once every notification before it has been handled, and hands it to
// no handler. After a call returns, Marks.Wait waits until every marker
// issued so far has been reached: bounded by the call's context, the
// connection's end, and Quiet without any notification handled (a handler
// that blocks); a request made in the handler of one of the connection's
// notifications (Marks.Handle) does not wait, as the notifications behind
// it wait for that handler.
//
// The markers also place requests and notifications in a connection's
// messages (Spot): a caller that shares one connection among its own
// callers (the gateway) learns from a request's Span where the connection
// stood when the request was sent and after its answer was read, and from
// HandlingFrom where a notification being handled was read, so that it
// can tell whose a notification that names no request may be. On a
// connection read in order (InOrder: stdio, legacy SSE) a request's Span
// asks for a marker before the next notification read (Boundary), so
// that a notification read before the request was sent, even after the
// last marker, comes before it.
//
// Over streamable HTTP, where go-sdk reads every event stream of a
// connection into one queue, the order of the messages does not say which
// request a notification came for; the stream it came on does: the reader
// tags a log message read on a request's stream with the request's Stream
// (Streams.On), the receiving middleware takes the tag out and hands the
// Stream to the handlers (Marks.Untag, StreamFrom), and the caller that
// made the request asks its Streams whether the message is its own
// (Streams.Carried).
//
// A response with nothing read before it since the last marker gets no
// marker, and a call whose markers are all reached does not wait: two
// atomic loads, no allocation.
//
// It imports go-sdk's jsonrpc and mcp packages and the standard library
// only.
package order
