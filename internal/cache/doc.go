// Package cache is a client's response cache for the results that carry
// the caching hints of the 2026-07-28 protocol (SEP-2549): server/discover,
// the listings and resources/read. Middleware is go-sdk sending middleware
// that serves fresh entries, stores answers for their ttlMs and scope
// (public, or private to the client and the request's principal), hides
// the hints from go-sdk's own cache, and keeps a listing's continuation
// pages no longer than its first; AddHandlers drops the entries a
// list_changed or resources/updated notification makes stale, and an
// answer that was on its way then is not stored (generations).
//
// Its inputs are plain: a Store (NewMemoryStore, or the caller's), the TTL
// bounds, the server's and the client's identities as strings (ServerID,
// PrivatePartition), a function that names a request's principal, the
// wire Observer (raw tool schemas) and a logger. It imports go-sdk and
// internal/wire only; it knows nothing of connections or of the root
// package, which aliases its Store, Entry and Mode.
package cache
