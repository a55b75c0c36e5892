// Package oauthflow is the OAuth sign-in machinery of an MCP client: the
// go-sdk auth.OAuthHandler that runs the authorization code flow (with
// PKCE, client registration, refresh and scope step-up, all go-sdk's)
// around a loopback redirect served only while the user signs in, the
// token source that saves each new token, the round tripper that
// authorizes the requests of go-sdk's SSE transport, and token stores: in
// memory, and a file that several processes share safely. Web is the
// sign-in of a web service's users: a token per principal (TokenKey), a
// request of a principal with none failing at once with its authorization
// URL (NeedSignIn), and the callback completed on any replica from a state
// sealed with a key they share (Web.Complete). It also runs
// the grants that need no user (GrantHandler), at an issuer set in
// advance, never at one a server names, and the token exchanges (RFC
// 8693) of a service acting for its users (Exchanger: a user's token for
// a server's, or by the ID-JAG flow at the server's authorization server,
// each issued token checked to fit a bearer header);
// fetches authorization server metadata without go-sdk's PKCE
// requirement (FetchServerMetadata); and
// keeps go-sdk's refusal of private and link-local addresses a server
// names for any client it is given (PublicOnly), in the one client for
// authorization servers that every flow uses (AuthServerClient: no
// redirected token requests, and a DPoP proof when a key is set). The
// credentials a config names are read here too: a key file (ReadKeyFile),
// an assertion file read on each grant (AssertionFile), a command that
// prints a token (TokenCommand). The settings of each grant and of the
// sign-in are checked here before anything is sent (CheckClientCredentials,
// CheckJWTBearer, CheckEnterprise, CheckOAuth).
//
// It takes plain inputs (Config) and knows nothing of the package that
// uses it; that package maps its public OAuth settings onto Config, its
// token stores onto Store (Inward, and Outward for this package's stores
// handed out, generic over its token type), and a failed sign-in
// (*SignInError) onto its own error (Bound, the handler it gives go-sdk).
// Error messages name the public settings (OAuth.RedirectURL,
// OAuth.Timeout) because they reach users unchanged. No secret (token,
// client secret, key, assertion, a token command's output) appears in a
// log line, an error or a String.
//
// It imports go-sdk's auth and oauthex packages, golang.org/x/oauth2, the
// standard library and internal/sealed (the sign-in state's sealing), and
// nothing else of this module: never the root.
package oauthflow
