// Package streamable is the fast path of a plain tools/call over
// streamable HTTP, beside go-sdk's streamable client, as internal/stdio's
// Conn.RoundTrip is over stdio: Conn.RoundTrip POSTs the call itself and
// reads its answer on the caller's goroutine, and a HandOff gives go-sdk
// an answer that is go-sdk's to read.
//
// RoundTrip sends through the very *http.Client go-sdk's transport of the
// session uses (so static and per-call headers, Auth, DPoP, the origin
// gate, the Tap's size limit and status record all apply), with the
// headers go-sdk v1.8.0's streamableClientConn would set, and takes an
// application/json body, or an event stream whose only message is the
// answer (priming events and events of other names are skipped, as go-sdk
// skips them), of at most 1 MiB and within the size limit. Anything else —
// another message on the call's stream (a server request such as an
// elicitation, a log message, progress), a stream that ends before the
// answer, a status other than 200, another session id, an unknown media
// type, an answer in an unusual form (an id that is the call's only in
// go-sdk's reading, such as 7.0), an event of several data lines, a bigger
// message (one over the size limit the Tap then replaces, as it does for
// go-sdk, whatever its id), an answer that asks for input (go-sdk's
// multi-round-trip loop starts from it) — is handed over: the caller makes
// the call through go-sdk with WithHandOff, and go-sdk's POST of it is
// answered, by Transport below the session's Tap, with the very response
// RoundTrip holds, its bytes replayed, the call's id translated to
// go-sdk's (idscan.go). go-sdk then does what it always does with such a
// response: it handles the server's requests and notifications, resumes
// the stream, fails the connection or authorizes and sends again.
//
// Invariants, each enforced by the test named:
//
//   - A call the server may have received is never sent again: a call
//     handed over counts as sent whatever go-sdk's call returns (HandOff.Sent;
//     only a 404 to the fast path's own POST says the server ran nothing).
//     TestHTTPFastPathFailedHandOffNotResent (root package).
//   - A message the server sends for a handed-over call reaches go-sdk
//     with go-sdk's id exactly where go-sdk's decoder reads the call's id
//     (keys with escapes undone, matched without case folding; any number
//     form go-sdk reads as the id), and no other message is changed (a
//     server request that carries the call's id, a nested id); a response
//     with go-sdk's own id for the call, which the server never saw, gets
//     the fast path's, so it answers nothing, as on go-sdk's path.
//     TestIDTranslatorReadsKeysAsSDK, TestIDTranslatorNestedIDAtLineEnd,
//     TestTranslateIDSwapsSDKID, FuzzTranslateID (go-sdk's decoder as the
//     judge).
//   - A cancellation reaches the request it cancels: go-sdk's
//     notifications/cancelled of the handed-over call gets the fast path's
//     id, read structurally; any other (30 when the call is 3) is left.
//     TestHandOffCancellationWholeID.
//   - A call returns as soon as its answer is read; the rest of its
//     stream is read behind it (drainRest), and the next call waits for
//     that before it POSTs, to reuse the connection, unless the server
//     kept the last stream open for wire.DrainGrace (then calls go out
//     beside open streams, as on go-sdk's path, until one ends by itself).
//     TestHTTPFastPathStreamOpenAfterAnswer (the server holds the stream
//     until the call has returned, or for ever),
//     TestHTTPFastPathNextCallWaitsForStream,
//     TestHTTPFastPathLingeringStreamsDoNotHoldCalls,
//     TestHTTPFastPathConnectionsReused.
//   - A call whose context ends before go-sdk took it over is cancelled at
//     the server (HandOff.Close). TestHTTPFastPathHandOffCancelledBetweenPOSTs.
//   - Memory held for a call is bounded by the size limit whatever the
//     server sends before the answer. TestFastAnswerMemoryBounded,
//     TestFastAnswerEventOverLimit.
//
// It decides nothing about which calls are plain or whether a connection
// has a fast path: the caller (internal/engine) does. It imports
// internal/plaincall, internal/sdkerr, internal/wire, internal/stdio (for
// the id range) and go-sdk; never the engine or the root package.
package streamable
