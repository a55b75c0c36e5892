package mcpadapter

import (
	"time"

	"github.com/mcpadapter/mcpadapter/internal/engine"
	"github.com/mcpadapter/mcpadapter/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Era is the generation of the MCP protocol a connection speaks.
type Era int

const (
	// EraUnknown is the era of a server not yet connected.
	EraUnknown Era = iota
	// EraHandshake is the initialize-handshake protocol, versions up to
	// 2025-11-25: stateful sessions, server-initiated requests mid-call.
	EraHandshake
	// EraDiscover is the stateless server/discover protocol, 2026-07-28 and
	// later: multi-round-trip requests, caching hints.
	EraDiscover
)

// eraOf returns the era of a negotiated protocol version.
func eraOf(version string) Era {
	switch {
	case version == "":
		return EraUnknown
	case wire.DiscoverEra(version):
		return EraDiscover
	default:
		return EraHandshake
	}
}

func (e Era) String() string {
	switch e {
	case EraHandshake:
		return "handshake"
	case EraDiscover:
		return "discover"
	default:
		return "unknown"
	}
}

// ServerInfo describes one live connection to a server.
type ServerInfo struct {
	// Name is the server's name as the client knows it (ClientOptions.Name,
	// or the config key).
	Name string
	// Transport is "stdio", "streamable-http", "sse" or "in-process".
	Transport string
	// Era and ProtocolVersion are what the connection negotiated.
	Era             Era
	ProtocolVersion string
	// Implementation is the server's self-description (name, version, ...).
	Implementation *mcp.Implementation
	// Capabilities are the server's capabilities.
	Capabilities *mcp.ServerCapabilities
	// Instructions are the server's instructions for the model, if any.
	Instructions string
	// ConnectedAt is when the connection was made, and ConnectTime how long
	// it took (process start and handshake included).
	ConnectedAt time.Time
	ConnectTime time.Duration
}

// infoOf describes s, a connection of c.
func (c *Client) infoOf(s *engine.Session) ServerInfo {
	res := s.SDK().InitializeResult()
	return ServerInfo{
		Name:            c.name,
		Transport:       s.Transport(),
		ProtocolVersion: s.ProtocolVersion(),
		Era:             eraOf(s.ProtocolVersion()),
		Implementation:  res.ServerInfo,
		Capabilities:    res.Capabilities,
		Instructions:    res.Instructions,
		ConnectedAt:     s.ConnectedAt(),
		ConnectTime:     s.ConnectTime(),
	}
}
