// Package testserver provides real go-sdk MCP servers for tests, in both
// protocol eras (the stateless 2026-07-28 protocol and the older
// initialize-handshake protocol), reachable in-process (in-memory,
// streamable HTTP, SSE) and as a separate process (the mcptestserver
// command, see [Build]).
//
// Every server built by [New] exposes the same fixed set of tools (echo,
// add, fail, fail_structured, image, audio, link, embedded, slow, progress,
// crash, headers, schema, precise, hologram, whoami, long_text, and
// optionally extra_01…extra_25, and tool_add and tool_remove, which change
// the list while clients use it), so tests of the adapter can assert on
// exact, known results. [Catalog] builds the servers of a 1,000-tool
// catalog in ten domains, for tool search. [NewWithState] also returns a
// [State] that records what the server observed. [ScriptedHTTP] is a
// streamable HTTP peer that answers the calls of one tool from a script,
// for the fast path's differential tests.
package testserver
