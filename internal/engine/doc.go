// Package engine is the connection to one MCP server below the public
// face: it makes go-sdk sessions, keeps one live (over HTTP, one per
// partition: a principal's connection is made with its identity, in a
// context that carries nothing of the caller that opened it; bounded by
// Config.MaxSessions, idle ones closed), makes it again when it is lost,
// and is the one way a request reaches the server.
//
// What it adds to go-sdk:
//   - Endpoint is a target resolved to its transport: a command line
//     (Command), an HTTP URL (ParseEndpoint, URLEndpoint: SSE for a path
//     ending in /sse, else streamable HTTP that may fall back to SSE) or
//     an in-process server.
//   - Engine.Session connects on first use and shares the connect among
//     concurrent callers, bounded by a connect timeout that stops while a
//     user signs in (oauthflow.Attempt); HandshakeMiddleware bounds the
//     server/discover probe and falls back to the initialize handshake on
//     a new connection when a stdio or in-process server took it late; a
//     stdio server that exits at the probe is restarted with the
//     handshake; a streamable HTTP endpoint that answers as a legacy server
//     is reconnected over SSE; a URL that is a website, not an MCP
//     endpoint, is said to be one (hint.go).
//   - Engine.Send runs a request on the live session: its timeout, one
//     retry on a new connection of a request that certainly never reached
//     the server (internal/sdkerr says which), the drop of a lost
//     connection (over HTTP it is retired: its requests in flight get
//     their own answers), and every failure as a *TransportError with the
//     stdio server's stderr.
//   - Session.CallTool makes a tools/call on the connection's fast path
//     (internal/stdio, internal/streamable, internal/plaincall) when the
//     connection has one and the call is plain, else through go-sdk. The
//     fast path is chosen once per connection (chooseFastPath); a feature
//     that needs go-sdk's machinery for a call says so with Call.ViaSDK.
//     It returns after the notifications the server sent before its
//     answer have been handled: every connection's transport passes up
//     markers (internal/order), BacklogMiddleware reaches them.
//   - Router routes progress notifications to their calls by token,
//     Deadline bounds a call by its time limits (*TimeoutError),
//     BacklogMiddleware paces a stdio server's notifications and
//     reaches every connection's markers, and
//     RelayMiddleware and MessageMiddleware hand a server's requests to
//     the application as received.
//   - A server/discover the server refuses authorization (401, 403) ends
//     the connect with what its WWW-Authenticate header said
//     (AuthRefusal), instead of go-sdk's fallback to older protocols.
//   - A call's Raw result gives its structured content and content blocks
//     as the server wrote them (RawStructured, RawBlock); its Reply is
//     go-sdk's decoding with the result as sent, and a result go-sdk
//     refuses only for content blocks of types it does not know is
//     decoded again with those blocks kept as sent (ReplyOf).
//
// Its inputs are plain (Config: the target, timeouts, go-sdk's client
// with the root's middleware installed, and a few functions of the root's
// features: the HTTP layers of credentials and headers, telemetry, the
// cache's reconnect hook). It imports go-sdk and this module's internal
// stdio, streamable, plaincall, sdkerr, oauthflow and wire packages; never
// the root package, the cache or anything above it.
package engine
