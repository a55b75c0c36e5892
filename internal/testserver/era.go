package testserver

import "fmt"

// Era selects which generation of the MCP protocol a test server speaks.
type Era int

const (
	// Modern servers support the stateless server/discover protocol
	// (2026-07-28) and every older, handshake-era version. This is the go-sdk
	// default.
	Modern Era = iota
	// Legacy servers only support the initialize handshake: protocol
	// versions 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05.
	Legacy
)

// Protocol versions negotiated by go-sdk peers.
const (
	// ModernVersion is the stateless protocol version (server/discover).
	ModernVersion = "2026-07-28"
	// LegacyVersion is the newest handshake-era protocol version.
	LegacyVersion = "2025-11-25"
)

// LegacyVersions lists the handshake-era protocol versions a [Legacy] server
// supports, newest first.
var LegacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// String returns "modern" or "legacy".
func (e Era) String() string {
	switch e {
	case Modern:
		return "modern"
	case Legacy:
		return "legacy"
	}
	return fmt.Sprintf("Era(%d)", int(e))
}

// ParseEra parses "modern" or "legacy" (the form produced by [Era.String]).
func ParseEra(s string) (Era, error) {
	switch s {
	case "modern":
		return Modern, nil
	case "legacy":
		return Legacy, nil
	}
	return 0, fmt.Errorf("unknown era %q (want modern or legacy)", s)
}

// supportedVersions returns the value for ServerOptions.SupportedProtocolVersions.
func (e Era) supportedVersions() []string {
	if e == Legacy {
		return append([]string(nil), LegacyVersions...)
	}
	return nil // all versions go-sdk knows
}
