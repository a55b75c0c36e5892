// Package plaincall writes and reads the plain tools/call: the request of
// a call that carries nothing but a tool's name, its arguments and the
// _meta go-sdk adds to every request of a connection (AppendCall,
// AppendPing), and the result in its common shapes (DecodeResult: text
// content, isError, structuredContent, _meta), without go-sdk's
// per-value decoder, which costs several times as much. It also gives
// the arguments and _meta of a call another client wrote, relayed
// (RelayArguments, RelayMeta).
//
// It adds one rule: whatever DecodeResult takes, it decodes as go-sdk's
// decoder does (FuzzDecodeResult); everything else it reports as not
// plain, and the caller leaves it to go-sdk.
//
// It is a leaf: it imports go-sdk's mcp types and internal/jsonscan only,
// and knows nothing of connections, sessions or the root package.
package plaincall
