// Package stdio runs an MCP server as a child process and speaks JSON-RPC
// with it over its stdin and stdout: Transport is a go-sdk mcp.Transport,
// and each Connect starts a new process whose connection is a *Conn.
//
// What it adds to go-sdk's CommandTransport:
//   - a line of stdout that is not a JSON-RPC message (a server logging to
//     stdout) is skipped and reported, not fatal; the last few are kept
//     and explain a connection that fails after them (StrayOutputError);
//   - a message over MaxMessageBytes is skipped without ending the
//     connection, and if it is a response its call fails with a clear
//     error instead of waiting forever;
//   - the last lines of stderr are kept (Conn.Stderr), and the end of
//     stdout becomes an error that says how the process ended (ExitError);
//   - the process runs in its own process group, which Close ends (stdin
//     closed, then SIGTERM, then SIGKILL), so wrapper processes (npx, uvx,
//     shells) leave no orphans; on Linux the child is also killed when
//     this process dies;
//   - a server that floods the client with notifications is slowed down
//     while they wait for their handlers (Conn.MessageHandled), and the
//     result of a call sent with a progress token waits until the
//     notifications before it have been handled.
//
// What it does not do: it does not reconnect. A connection whose process
// has ended stays ended; starting a new one (and deciding when to) is the
// caller's business, as are naming the server in errors and logging.
package stdio
