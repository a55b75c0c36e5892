// Package resourceserver makes the gateway an OAuth 2.1 resource server, the
// server side of the MCP authorization specification: every request to the
// wrapped handler carries a credential the Guard accepts, or is refused
// before it reaches the gateway (and so any server behind it).
//
//	guard, err := resourceserver.New(&resourceserver.Options{
//		Resource: "https://gw.example.com/mcp",
//		Issuers:  []string{"https://idp.example.com"},
//		Scopes:   []string{"mcp:tools"},
//	})
//	if err != nil {
//		return err
//	}
//	http.ListenAndServe(addr, guard.Handler(gw))
//
// What a Guard does:
//
//   - Serves the protected resource metadata (RFC 9728) of Options.Resource
//     at its well-known path (MetadataURL), and answers a request without
//     an acceptable credential with 401 and a WWW-Authenticate challenge
//     naming that metadata and the scopes (error="invalid_token" for a token
//     it refused), a token without a required scope with 403
//     error="insufficient_scope".
//   - Verifies JWT access tokens (RFC 9068) of Options.Issuers: signature
//     against the issuer's JWKS (from Options.JWKSURL or the issuer's
//     metadata jwks_uri), fetched with a timeout, cached, fetched again at
//     most once per Options.JWKSMinRefresh when a token names an unknown
//     key (key rotation) and when the cache is older than JWKSMaxAge; the
//     algorithm from the Options.Algorithms list only, never from the
//     token; iss, aud (Options.Resource), exp and nbf with Options.Leeway.
//     Headers that name other keys (jku, x5u, jwk, x5c) are ignored.
//   - Asks the authorization server about other tokens (opaque ones) by
//     token introspection (RFC 7662, Options.Introspection), authenticated
//     with client credentials, accepts an active token whose aud names
//     Options.Resource, and caches the answer for at most the token's
//     remaining life in a bounded cache.
//   - Checks the proof of a DPoP-bound token (RFC 9449: cnf.jkt in the token
//     or the introspection answer): the proof's signature by its embedded
//     key, whose thumbprint is jkt; htm and htu equal to the request's;
//     iat within Options.DPoPProofMaxAge; ath the token's hash; a jti never
//     seen before (a bounded replay cache); and, with Options.DPoPNonce, a
//     nonce the Guard issued (DPoP-Nonce, error="use_dpop_nonce").
//   - Accepts static API keys (Options.APIKeys), compared in constant time.
//
// The accepted credential becomes a go-sdk auth.TokenInfo on the request's
// context: its UserID, the principal, is the token's sub (issuer#sub when
// several issuers are trusted; "client:" and the client_id when a token
// has no sub; the key's name for an API key), Scopes its scopes and Extra
// its claims. The
// gateway takes the principal from there (gateway.PrincipalFrom), so its
// Policy and per-principal sessions use it, and gives Policy the TokenInfo
// (gateway.TokenInfoFrom).
//
// A failure to verify that is not the token's fault (a JWKS endpoint that
// hangs or serves garbage, an introspection endpoint that is down) is a 503
// with Retry-After; no request is let through. Every refusal is logged
// with its reason; tokens, proofs and keys never are.
//
// # Why go-jose
//
// Signatures are checked by github.com/go-jose/go-jose/v4, not by code of
// this package: its jwt.ParseSigned takes the list of acceptable algorithms
// as an argument, so the algorithm is always the Guard's choice (there is
// no "none", and an HS256 token is refused before any key is looked at);
// it refuses private keys embedded in headers and never fetches a key a
// header names; it has no dependencies of its own, so the gateway module's
// build list grows by one module. lestrrat-go/jwx v3 does the same checks
// but brings several modules of its own and an auto-refreshing key cache that the Guard
// would have to constrain (rate limit, timeout) anyway.
package resourceserver
