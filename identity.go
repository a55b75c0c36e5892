package mcpadapter

import (
	"context"
	"fmt"
	"maps"
	"net/http"

	"github.com/mcpadapter/mcpadapter/internal/httplayer"
)

// CallIdentity says whom a request is made for: one user of a shared
// agent, one tenant. Put it on the context of a call, or of a whole agent
// run, with WithCallIdentity; the settings of the server (ClientOptions,
// the config file) still apply around it.
//
//   - Principal names the user. It partitions the response cache: a
//     "private" result stored for one principal is never served to
//     another, nor to a request without a principal (and one stored
//     without a principal is never served to a principal). An Auth made
//     with PrincipalToken picks the credential by it.
//   - Headers are added to the HTTP requests made with the context, to the
//     server's origin only, over ClientOptions.Headers and the config's
//     headers of the same name. A header the adapter owns (Authorization,
//     Proxy-Authorization, Cookie, Host, Content-Type, Content-Length,
//     Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID) is
//     refused with an *IdentityError: credentials per principal come from
//     the Auth (PrincipalToken), never from a header. So is a header named
//     twice in different cases ("x-tenant" and "X-Tenant"). Over stdio and
//     in-process there are no headers: Headers are ignored there (the
//     Principal and Meta still apply).
//   - Meta is merged into the _meta of each tools/call made with the
//     context, over every transport; CallOptions.Meta wins for a key both
//     set, the _meta of a call relayed for another client
//     (Client.RelayCall) does not.
//
// Over HTTP each principal (with its Headers) has a connection of its own
// (ClientOptions.MaxSessions): its handshake and event stream are made
// with its identity, and go-sdk's handlers of what the server sends on it
// (progress, log messages, questions, sampling) see that identity.
// Requests with no identity share a connection made for no one. A stdio
// or in-process server has one connection for everyone, made for no one;
// a call's progress still reaches ClientOptions.ProgressHandler with the
// call's identity. See docs/multi-user.md.
type CallIdentity struct {
	// Principal names whom the request is for; "" means no one.
	Principal string
	// Headers are HTTP headers for this principal's requests.
	Headers map[string]string
	// Meta holds _meta entries for this principal's tool calls.
	Meta map[string]any
}

type identityKey struct{}

// WithCallIdentity returns a context whose requests are made for id (see
// CallIdentity). A nil id removes the identity of ctx.
func WithCallIdentity(ctx context.Context, id *CallIdentity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// CallIdentityFrom returns the identity set by WithCallIdentity, or nil.
func CallIdentityFrom(ctx context.Context) *CallIdentity {
	id, _ := ctx.Value(identityKey{}).(*CallIdentity)
	return id
}

// principalOf returns the principal of ctx, or "".
func principalOf(ctx context.Context) string {
	if id := CallIdentityFrom(ctx); id != nil {
		return id.Principal
	}
	return ""
}

// partitionOf names the connection a request made with ctx belongs to
// over HTTP: its principal and identity headers, or "" for a request made
// for no one.
func partitionOf(ctx context.Context) string {
	id := CallIdentityFrom(ctx)
	if id == nil {
		return ""
	}
	return httplayer.Partition(id.Principal, id.Headers)
}

// detachIdentity returns the context a connection of partition is made
// with and lives in: none of ctx's values (not its deadline, its trace,
// its cache mode), only its identity when the connection is a
// principal's, so that the handshake, the event stream and go-sdk's
// handlers of the server's messages are that principal's; a connection of
// no one carries no identity.
func detachIdentity(ctx context.Context, partition string) context.Context {
	if partition == "" {
		return context.Background()
	}
	return WithCallIdentity(context.Background(), CallIdentityFrom(ctx))
}

// IdentityError reports a CallIdentity the adapter refuses: a header it
// may not set.
type IdentityError struct {
	// Principal is the identity's principal.
	Principal string
	// Header is the refused header's name.
	Header string
	// Reason says why.
	Reason string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("mcpadapter: CallIdentity{Principal: %q}.Headers[%q]: %s", e.Principal, e.Header, e.Reason)
}

// check reports a header id may not set, or a header that is not valid.
func (id *CallIdentity) check() error {
	if id == nil {
		return nil
	}
	if h, why := httplayer.CheckIdentityHeaders(id.Headers); why != "" {
		return &IdentityError{Principal: id.Principal, Header: h, Reason: why}
	}
	return nil
}

// callMeta returns the _meta of a tools/call made with ctx and opts' Meta:
// a new map of the identity's entries, then opts' (which win); meta itself
// when the identity has none. Neither is modified: the request gets a copy
// (sendHeld).
func callMeta(ctx context.Context, meta map[string]any) map[string]any {
	id := CallIdentityFrom(ctx)
	if id == nil || len(id.Meta) == 0 {
		return meta
	}
	out := make(map[string]any, len(id.Meta)+len(meta))
	maps.Copy(out, id.Meta)
	maps.Copy(out, meta)
	return out
}

// identityHeaders returns the headers of the CallIdentity of ctx, or the
// *IdentityError that refuses them. Its layer (httplayer.ContextHeaders)
// sits inside the origin gate, so the headers reach the server's origin
// only.
func identityHeaders(ctx context.Context) (map[string]string, error) {
	id := CallIdentityFrom(ctx)
	if id == nil || len(id.Headers) == 0 {
		return nil, nil
	}
	if err := id.check(); err != nil {
		return nil, err
	}
	return id.Headers, nil
}

// PrincipalToken authenticates each HTTP request with the bearer token
// token returns for the request's principal (CallIdentity.Principal; ""
// for a request made with no identity, and the connection such requests
// share; a principal's own connection, its handshake and event stream
// included, is made with that principal's token). token runs for every request, so it should answer
// from memory (a token cache it refreshes). An error fails the request,
// wrapped in a *PrincipalAuthError; the token is never logged.
//
// The response cache knows each principal apart (CallIdentity), so a
// private result fetched with one principal's token is never served to
// another.
func PrincipalToken(token func(ctx context.Context, principal string) (string, error)) Auth {
	return principalAuth(token)
}

type principalAuth func(ctx context.Context, principal string) (string, error)

func (f principalAuth) wrap(next http.RoundTripper) http.RoundTripper {
	return httplayer.ContextBearer{
		Next:  next,
		Token: func(ctx context.Context) (string, error) { return f(ctx, principalOf(ctx)) },
		Refused: func(ctx context.Context, err error) error {
			return &PrincipalAuthError{Principal: principalOf(ctx), Err: err}
		},
	}
}

// PrincipalAuthError reports that the token source of PrincipalToken gave
// no token for a principal.
type PrincipalAuthError struct {
	// Principal is the request's principal ("" for none).
	Principal string
	// Err is the token source's error.
	Err error
}

func (e *PrincipalAuthError) Error() string {
	return fmt.Sprintf("mcpadapter: PrincipalToken: no token for principal %q: %v", e.Principal, e.Err)
}

func (e *PrincipalAuthError) Unwrap() error { return e.Err }
