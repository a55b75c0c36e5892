// Package demo holds the two small MCP servers built into the mcpadapter
// commands, so that every command works on a fresh machine with nothing
// installed: weather speaks 2026-07-28 (served over streamable HTTP on a
// loopback port by the command itself), math speaks the 2025-11-25
// handshake (over stdio, as a child process running "demo-server math").
package demo

import "github.com/modelcontextprotocol/go-sdk/mcp"

// ByName returns the named demo server, or false when there is none.
func ByName(name string) (*mcp.Server, bool) {
	switch name {
	case "weather":
		return Weather(), true
	case "math":
		return Math(), true
	}
	return nil, false
}

// Stateless reports whether the named server is served statelessly over
// HTTP (weather, a 2026-07-28 server, is; math keeps a session).
func Stateless(name string) bool { return name == "weather" }
