// Package httplayer holds the HTTP layers a client puts between go-sdk's
// transport and the network for one MCP server: fixed headers (Headers),
// headers and a bearer token chosen per request from its context
// (ContextHeaders, ContextBearer), and the origin gate that keeps every
// credential to the server's origin (OriginGate, SameOrigin, OriginOf);
// the name of the connection a principal's requests share (Partition);
// and the headers a request's identity may set (CheckIdentityHeaders: not
// the credentials', not the transport's, valid names and values) and
// whether headers set an Authorization header (HasAuthorization).
//
// What it adds: RoundTrippers that clone a request before they change it,
// close its body when they refuse it, and strip the credentials of a
// request bound for another origin (a redirect, an SSE endpoint event
// pointing elsewhere). Which headers a request's identity sets, where the
// token comes from and what a refusal is called are the caller's: it
// passes them in as functions and errors; CheckIdentityHeaders says which
// header is refused and why, and the caller names the error.
//
// It imports only the standard library.
package httplayer
