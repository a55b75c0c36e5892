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
// It decides nothing about which calls are plain or whether a connection
// has a fast path: the caller (internal/engine) does. It imports
// internal/plaincall, internal/sdkerr, internal/wire, internal/stdio (for
// the id range) and go-sdk; never the engine or the root package.
package streamable
