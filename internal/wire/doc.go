// Package wire observes the JSON-RPC messages a client exchanges with one
// MCP server, below go-sdk's sessions.
//
// An Observer sees every message sent and received: it writes the protocol
// trace (redacted) and keeps the tool schemas of tools/list answers exactly
// as the server wrote them (ToolSchemas: those, else go-sdk's decoding).
// Messages reach it from an ObservedTransport
// (in-memory and SSE connections), from a Tap (the http.RoundTripper under
// streamable HTTP, which also records response statuses and marks requests
// that never left this machine), or from any transport that calls its Sent
// and Received methods itself.
//
// A Tap with MaxMessageBytes also bounds every response body: a message
// over the limit in an event stream or a JSON body becomes a JSON-RPC error
// response to the call it answers (see TooLargeText), so that call alone
// fails and the connection stays.
//
// A RequestStatus (TrackRequest) follows one request through go-sdk on its
// context: the HTTP status and authorization challenge of its POST and,
// with KeepResult, the result of its response byte for byte as the server
// wrote it (go-sdk decodes results into maps). Connections match the
// response by JSON-RPC id; the Tap takes it from the request's own POST.
// It also knows the id the request last went out with, whether go-sdk got
// its answer (SettleMiddleware) and whether go-sdk's
// notifications/cancelled of it was written (NoticeDue, OnNoticed: go-sdk
// sends it on a goroutine of its own, which closing a session waits for).
// Member takes one member out of a JSON object without decoding it.
//
// A Tap with Marks passes up the connection's markers (internal/order)
// on the event stream of a POST: one before a response that follows a
// message from the server in the stream (on a resumed stream, before its
// first response), as go-sdk reads the stream; the trace leaves them out.
// It also tags a log message the server sends on a request's stream with
// that request's order.Stream, in the message's params' _meta (tagLog);
// the trace shows the message as the server sent it.
//
// RedactJSON and RedactURLSecrets hide secrets in what is logged or shown
// in errors.
//
// It imports go-sdk's jsonrpc and mcp packages, internal/jsonscan,
// internal/order and the standard library.
package wire
