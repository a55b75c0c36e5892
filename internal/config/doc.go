// Package config parses mcpServers documents: the JSON that Claude Desktop,
// Cursor, Claude Code, VS Code and FastMCP read to know which MCP servers
// to start or reach.
//
// Parse takes the document's bytes, the name of the file it came from and
// a function to look environment variables up with, and returns plain
// structs: the servers, each with its transport, command or URL, auth,
// cache settings, timeout, tool filters and the members it does not know.
// It reports every problem in the document at once (up to MaxProblems),
// each with its position (file:line:column) and JSON path. Paths writes
// the paths of a tool transform's parts, in a config or in the public
// options, for the errors that name them.
//
// The package knows nothing of clients or connections: the mcpadapter
// package turns a Document into its public Config and each Problem into a
// *mcpadapter.ConfigError. It imports only the standard library.
package config
