package wire

// The protocol versions that bound the two eras of MCP: the newest of the
// initialize-handshake era, and the first of the stateless server/discover
// era.
const (
	HandshakeVersion     = "2025-11-25"
	FirstDiscoverVersion = "2026-07-28"
)

// DiscoverEra reports whether version, a negotiated protocol version,
// belongs to the server/discover era (2026-07-28 and later).
func DiscoverEra(version string) bool { return version >= FirstDiscoverVersion }
